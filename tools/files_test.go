package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/transport"
)

func TestEditFile(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			cases := []struct {
				name, content string
				params        map[string]any
				want          string // new content; "" with errSub means unchanged
				errSub        string
				obs           string
			}{
				{"literal", "echo 1\n", map[string]any{"search_pattern": "echo 1", "replacement": "echo 2"}, "echo 2\n", "", "1 replacement"},
				{"regex groups", "port=80\nhost=x\n", map[string]any{"search_pattern": `port=(\d+)`, "replacement": `port=\1${1}`, "regex": true}, "port=8080\nhost=x\n", "", "1 replacement"},
				{"count all", "a a a\n", map[string]any{"search_pattern": "a", "replacement": "b", "count": -1}, "b b b\n", "", "3 replacements"},
				{"count 2", "a a a\n", map[string]any{"search_pattern": "a", "replacement": "b", "count": "2"}, "b b a\n", "", "2 replacements"},
				{"ambiguous", "a a a\n", map[string]any{"search_pattern": "a", "replacement": "b"}, "", "ambiguous: 3 matches; set count or make the pattern unique", ""},
				{"absent", "x\n", map[string]any{"search_pattern": "nope", "replacement": "b"}, "", "not found", ""},
				{"bad regex", "x\n", map[string]any{"search_pattern": "(", "replacement": "b", "regex": true}, "", "not a valid regular expression", ""},
				{"binary", "a\x00b echo 1", map[string]any{"search_pattern": "echo 1", "replacement": "x"}, "", "binary", ""},
				{"missing param", "x\n", map[string]any{"replacement": "b"}, "", `missing required parameter "search_pattern"`, ""},
				{"dollar literal", "cost\n", map[string]any{"search_pattern": "cost", "replacement": "$1 ${x}"}, "$1 ${x}\n", "", ""},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					p := filepath.Join(tg.dir, strings.ReplaceAll(c.name, " ", "_")+".sh")
					writeFile(t, p, c.content, 0o751)
					c.params["file_path"] = p
					out, err := reg.Run(ctxT(t), tg.tr, EditFileName, c.params)
					if err != nil {
						t.Fatal(err)
					}
					got := readFile(t, p)
					if c.errSub != "" {
						if !out.IsError || !strings.Contains(out.Observation, c.errSub) || !strings.HasPrefix(out.Observation, "[ERROR]: ") {
							t.Fatalf("want error containing %q, got %+v", c.errSub, out)
						}
						if got != c.content {
							t.Fatalf("file changed on error: %q", got)
						}
						return
					}
					if out.IsError || got != c.want {
						t.Fatalf("out %+v, file %q, want %q", out, got, c.want)
					}
					if !strings.Contains(out.Observation, c.obs) || out.Diff == "" || len(out.FilesChanged) != 1 || !out.FilesChanged[0].Existed {
						t.Fatalf("out %+v", out)
					}
					if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o751 {
						t.Fatalf("mode %v not kept", fi.Mode())
					}
				})
			}
		})
	}
}

func TestEditPreviewAndJournal(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			var journal []string
			reg := Default(testPolicy(), WithBeforeChange(func(_ context.Context, _ transport.Transport, fc FileChange, old []byte) error {
				journal = append(journal, fc.Path+"="+string(old))
				return nil
			}))
			p := filepath.Join(tg.dir, "a.sh")
			writeFile(t, p, "#!/bin/sh\necho 1\n", 0o755)
			tool, _ := reg.Lookup(EditFileName)
			out, err := tool.(Previewer).Preview(ctxT(t), tg.tr, raw(t, map[string]any{"file_path": p, "search_pattern": "echo 1", "replacement": "echo 2"}))
			if err != nil || out.IsError {
				t.Fatal(err, out)
			}
			wantDiff := "--- a" + p + "\n+++ b" + p + "\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo 1\n+echo 2\n"
			if out.Diff != wantDiff || readFile(t, p) != "#!/bin/sh\necho 1\n" || len(journal) != 0 {
				t.Fatalf("preview diff %q, journal %v", out.Diff, journal)
			}
			if _, err := tool.Run(ctxT(t), tg.tr, raw(t, map[string]any{"file_path": p, "search_pattern": "echo 1", "replacement": "echo 2"})); err != nil {
				t.Fatal(err)
			}
			if len(journal) != 1 || journal[0] != p+"=#!/bin/sh\necho 1\n" {
				t.Fatalf("journal %q", journal)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			p := filepath.Join(tg.dir, "w.txt")
			run := func(params map[string]any) Output {
				t.Helper()
				params["file_path"] = p
				out, err := reg.Run(ctxT(t), tg.tr, WriteFileName, params)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			out := run(map[string]any{"content": "one\n"})
			if out.IsError || readFile(t, p) != "one\n" || out.FilesChanged[0].Existed {
				t.Fatalf("%+v", out)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
				t.Fatalf("new file mode %v", fi.Mode())
			}
			os.Chmod(p, 0o600)
			out = run(map[string]any{"content": "two\n", "mode": "a"})
			if out.IsError || readFile(t, p) != "one\ntwo\n" || !strings.Contains(out.Diff, "+two\n") {
				t.Fatalf("%+v", out)
			}
			out = run(map[string]any{"content": "three\n", "mode": "w"})
			if out.IsError || readFile(t, p) != "three\n" {
				t.Fatalf("%+v", out)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode not kept: %v", fi.Mode())
			}
			if out := run(map[string]any{"content": "x", "mode": "x"}); !out.IsError || !strings.Contains(out.Observation, `must be one of "w", "a"`) {
				t.Fatalf("%+v", out)
			}
			if out := run(map[string]any{"content": strings.Repeat("x", 1<<20+1)}); !out.IsError || !strings.Contains(out.Observation, "exceeds the limit") {
				t.Fatalf("%.200v", out.Observation)
			}
			out, _ = reg.Run(ctxT(t), tg.tr, WriteFileName, map[string]any{"file_path": filepath.Join(tg.dir, "no/such/dir/f"), "content": "x"})
			if !out.IsError || !strings.Contains(out.Observation, "no such file") {
				t.Fatalf("%+v", out)
			}
			out, _ = reg.Run(ctxT(t), tg.tr, WriteFileName, map[string]any{"file_path": "~/../../etc/x", "content": "x"})
			if !out.IsError || !strings.Contains(out.Observation, "refused") {
				t.Fatalf("%+v", out)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			text := filepath.Join(tg.dir, "t.txt")
			writeFile(t, text, "l1\nl2\nl3\nl4", 0o644)
			bin := filepath.Join(tg.dir, "b.bin")
			writeFile(t, bin, "ab\x00cd", 0o644)
			big := filepath.Join(tg.dir, "big.txt")
			writeFile(t, big, strings.Repeat("0123456789\n", 100_000), 0o644)
			cases := []struct {
				name   string
				params map[string]any
				want   string
				errSub string
			}{
				{"all", map[string]any{"file_path": text}, "l1\nl2\nl3\nl4", ""},
				{"offset", map[string]any{"file_path": text, "offset": 3}, "l3\nl4", ""},
				{"offset limit", map[string]any{"file_path": text, "offset": 2, "limit": 2}, "l2\nl3\n", ""},
				{"past end", map[string]any{"file_path": text, "offset": 9}, "", "past the end of the file (4 lines)"},
				{"too large", map[string]any{"file_path": big}, "", "exceeds the limit"},
				{"large range", map[string]any{"file_path": big, "offset": 2, "limit": 1}, "0123456789\n", ""},
				{"binary", map[string]any{"file_path": bin}, "", "binary"},
				{"missing", map[string]any{"file_path": filepath.Join(tg.dir, "nope")}, "", "no such file"},
				{"dir", map[string]any{"file_path": tg.dir}, "", "is a directory"},
				{"encoding", map[string]any{"file_path": text, "encoding": "UTF-16"}, "", "not supported"},
				{"latin1", map[string]any{"file_path": text, "encoding": "ISO-8859-1", "limit": 1}, "l1\n", ""},
				{"unknown param", map[string]any{"file_path": text, "path": "x"}, "", `unknown parameter "path"`},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					out, err := reg.Run(ctxT(t), tg.tr, ReadFileName, c.params)
					if err != nil {
						t.Fatal(err)
					}
					if c.errSub != "" {
						if !out.IsError || !strings.Contains(out.Observation, c.errSub) {
							t.Fatalf("want %q, got %+v", c.errSub, out)
						}
						return
					}
					if out.IsError || out.Stdout != c.want || out.Observation != c.want {
						t.Fatalf("got %+v, want %q", out, c.want)
					}
				})
			}
		})
	}
}

func TestExecuteCommand(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			cases := []struct {
				params map[string]any
				obs    string
				isErr  bool
			}{
				{map[string]any{"command": "echo 1"}, "1\n", false},
				{map[string]any{"command": "touch x", "cwd": tg.dir}, "", false}, // no output: the empty observation
				{map[string]any{"command": "echo out; echo err >&2; exit 3"}, "[ERROR]: err\nout\n[exit code 3]", true},
				{map[string]any{"command": "pwd", "cwd": tg.dir}, tg.dir + "\n", false},
				{map[string]any{"command": "sleep 5", "timeout": 1}, "[ERROR]: ", true}, // stderr may hold "Killed" first
				{map[string]any{"command": "  "}, "[ERROR]: execute_command: invalid parameters: command is empty", true},
				{map[string]any{"command": "true", "cwd": filepath.Join(tg.dir, "nope")}, "[ERROR]: ", true},
			}
			for _, c := range cases {
				out, err := reg.Run(ctxT(t), tg.tr, ExecuteCommandName, c.params)
				if err != nil {
					t.Fatal(err)
				}
				if out.IsError != c.isErr || !strings.HasPrefix(out.Observation, c.obs) || (c.obs != "[ERROR]: " && out.Observation != c.obs) {
					t.Errorf("%v: got %q (err %v), want %q", c.params, out.Observation, out.IsError, c.obs)
				}
				if c.params["timeout"] != nil && !strings.HasSuffix(out.Observation, "command timed out after 1s and was killed") {
					t.Errorf("timeout: %q", out.Observation)
				}
			}
			tr := tg.tr
			tr.Close()
			if _, err := reg.Run(ctxT(t), tr, ExecuteCommandName, map[string]any{"command": "true"}); err == nil {
				t.Fatal("closed transport: want a Go error")
			}
		})
	}
}
