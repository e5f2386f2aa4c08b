package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostile are parameter values that would run code, add options or split
// words if they reached the shell unquoted.
func hostile(marker string) []string {
	return []string{
		"; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`", "' ; touch " + marker + " ; '",
		"\" ; touch " + marker + " ; \"", "a\ntouch " + marker, "-rf", "--help", "|| touch " + marker, "&& touch " + marker,
		"> " + marker, "*", "~", "$HOME", "${IFS}", "\\", "-", "--", "!", "(",
	}
}

// TestHostileParams feeds hostile values to every structured tool over
// local and the in-process SSH host, runs them for real, and checks that no
// marker file appeared and the values reached the commands literally.
func TestHostileParams(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			marker := filepath.Join(tg.dir, "pwned")
			data := filepath.Join(tg.dir, "data.txt")
			for _, v := range hostile(marker) {
				writeFile(t, data, "line with "+v+"\nother\n", 0o644)
				calls := []struct {
					tool   string
					params map[string]any
				}{
					{FindName, map[string]any{"name": v, "path": tg.dir}},
					{FindName, map[string]any{"name": "x", "path": v, "maxdepth": 1}},
					{GrepName, map[string]any{"pattern": v, "file": data, "ignore_case": true}},
					{GrepName, map[string]any{"pattern": "x", "file": v}},
					{PsName, map[string]any{"name": v}},
					{LsofName, map[string]any{"path": v}},
					{SsName, map[string]any{"options": []string{"-n" + v}, "port": 1}},
					{WgetName, map[string]any{"url": "http://127.0.0.1:1/" + v, "output_file": filepath.Join(tg.dir, v)}},
				}
				for _, c := range calls {
					out, err := reg.Run(ctxT(t), tg.tr, c.tool, c.params)
					if err != nil {
						t.Fatalf("%s %q: %v", c.tool, v, err)
					}
					if _, err := os.Stat(marker); err == nil {
						t.Fatalf("%s with %q created the marker; output %q", c.tool, v, out.Observation)
					}
					if c.tool == GrepName && c.params["pattern"] == v && v != "\\" && v != "(" && v != "*" {
						// The pattern is literal text in data.txt (basic regex
						// metacharacters aside), so grep finds it.
						if !strings.Contains(out.Stdout, "line with ") && !strings.ContainsAny(v, "$^.[*\\") {
							t.Errorf("grep %q did not find the literal line: %q", v, out.Observation)
						}
					}
					if c.tool != SsName && strings.Contains(out.Observation, "Usage:") && (v == "--help" || v == "-rf") {
						t.Errorf("%s took %q as an option: %q", c.tool, v, out.Observation)
					}
				}
			}
		})
	}
}

// TestQuoteArgv runs quoted words through /bin/sh and checks they come
// back exactly.
func TestQuoteArgv(t *testing.T) {
	words := append(hostile("/tmp/never"), "", " ", "a b", "'", "''", `"`, "it's", "tab\there", "é ü 中",
		"\x01\x7f", "new\nline", "~/x", "#c", "a=b", "%", "-n", "-e")
	checkQuoted(t, words)
}

func checkQuoted(t *testing.T, words []string) {
	t.Helper()
	line := `for a in ` + QuoteArgv(words) + `; do printf '%s\0' "$a"; done`
	out, err := exec.Command("/bin/sh", "-c", line).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	got := strings.Split(string(out), "\x00")
	got = got[:len(got)-1]
	if len(got) != len(words) {
		t.Fatalf("got %d words %q, want %d %q", len(got), got, len(words), words)
	}
	for i := range words {
		if got[i] != words[i] {
			t.Errorf("word %d: got %q, want %q", i, got[i], words[i])
		}
	}
}

func FuzzQuoteArgv(f *testing.F) {
	for _, w := range hostile("/tmp/x") {
		f.Add(w, "b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a+b, 0) {
			t.Skip("argv words cannot hold NUL")
		}
		checkQuoted(t, []string{a, b})
	})
}
