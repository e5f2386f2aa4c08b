package tools

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

func TestCommandLines(t *testing.T) {
	reg := Default(safety.DefaultPolicy())
	cases := []struct {
		tool   string
		params map[string]any
		want   string
	}{
		{"find", map[string]any{"name": "*.log", "path": "~/var logs", "type": "f", "maxdepth": 2}, `find ~/'var logs' -maxdepth 2 -type f -name '*.log'`},
		{"find", map[string]any{"name": "x", "path": "-delete"}, `find ./-delete -name x`},
		{"grep", map[string]any{"pattern": "-v", "file": "a.txt /var/log/x", "recursive": true, "ignore_case": true, "count_only": true}, `grep -r -i -c -e -v -- a.txt /var/log/x`},
		{"wget", map[string]any{"url": "https://e.com/a?b=c&d", "output_file": "-"}, `wget -nv -O ./- -- 'https://e.com/a?b=c&d'`},
		{"ps", map[string]any{"pid": "1,2"}, `ps -ww -o pid,ppid,user,pcpu,pmem,etime,args -p 1,2`},
		{"ps", map[string]any{"options": []any{"-ef"}, "user": "bob"}, `ps -ef -u bob`},
		{"lsof", map[string]any{"port": 80, "user": "www", "path": "/tmp/x y"}, `lsof -n -P -i :80 -u www -a -- '/tmp/x y'`},
		{"execute_command", map[string]any{"command": "ls | wc -l"}, `ls | wc -l`},
	}
	for _, c := range cases {
		tl, _ := reg.Lookup(c.tool)
		got, err := tl.(Commander).CommandLine(raw(t, c.params))
		if err != nil || got != c.want {
			t.Errorf("%s %v:\n got %s (%v)\nwant %s", c.tool, c.params, got, err, c.want)
		}
	}
}

func TestStructuredRun(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy())
			os.MkdirAll(filepath.Join(tg.dir, "sub"), 0o755)
			writeFile(t, filepath.Join(tg.dir, "sub", "App.log"), "Error one\nok\nerror two\n", 0o644)
			run := func(tool string, p map[string]any) Output {
				out, err := reg.Run(ctxT(t), tg.tr, tool, p)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			if out := run("find", map[string]any{"name": "*.log", "path": tg.dir, "type": "f"}); out.Observation != filepath.Join(tg.dir, "sub", "App.log")+"\n" {
				t.Errorf("find: %q", out.Observation)
			}
			if out := run("grep", map[string]any{"pattern": "error", "file": tg.dir, "recursive": true, "ignore_case": true, "count_only": true}); !strings.HasSuffix(out.Observation, "App.log:2\n") {
				t.Errorf("grep: %q", out.Observation)
			}
			if out := run("grep", map[string]any{"pattern": "absent", "file": filepath.Join(tg.dir, "sub", "App.log")}); out.Observation != "[exit code 1]" || !out.IsError {
				t.Errorf("grep no match: %q", out.Observation)
			}
			// The name filter must not list the filter itself.
			if out := run("ps", map[string]any{"name": "no-such-process-zq"}); strings.Count(out.Observation, "\n") != 1 || !strings.Contains(out.Observation, "PID") {
				t.Errorf("ps filter: %q", out.Observation)
			}
			if out := run("ps", map[string]any{"pid": "1"}); out.IsError || !strings.Contains(out.Observation, "\n    1 ") {
				t.Errorf("ps pid: %q", out.Observation)
			}
			if out := run("ss", map[string]any{"port": 1, "protocol": "tcp"}); out.IsError {
				t.Errorf("ss: %q", out.Observation)
			}
		})
	}
}

// TestSsFallback runs ss on the local transport where ss is missing from
// PATH and only the real lsof (then netstat, with the grep its port filter
// needs) is there, and checks that the fallback reports a real listening
// socket.
func TestSsFallback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	lt := newLocal(t)
	ss := NewSs()
	for _, c := range []struct{ tool, also string }{{"lsof", ""}, {"netstat", "grep"}, {"", ""}} {
		dir := t.TempDir()
		missing := false
		for _, name := range []string{c.tool, c.also} {
			if name == "" {
				continue
			}
			bin, err := exec.LookPath(name)
			if err != nil {
				missing = true
				break
			}
			if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if missing {
			t.Logf("%s is not installed here: fallback not run", c.tool)
			continue
		}
		name := "only " + c.tool
		if c.tool == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATH", dir)
			out, err := ss.Run(ctxT(t), lt, raw(t, map[string]any{"port": port, "protocol": "tcp"}))
			if err != nil {
				t.Fatal(err)
			}
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			switch c.tool {
			case "":
				if out.ExitCode != 127 || !strings.Contains(out.Stderr, "none of ss, lsof or netstat is installed") {
					t.Fatalf("%+v", out)
				}
			case "lsof":
				if out.IsError || !strings.Contains(out.Stdout, addr) || !strings.Contains(out.Stdout, "(LISTEN)") ||
					!strings.Contains(out.Stdout, fmt.Sprint(os.Getpid())) {
					t.Fatalf("lsof fallback: %+v", out)
				}
			case "netstat":
				if out.IsError || !strings.Contains(out.Stdout, addr) || !strings.Contains(out.Stdout, "LISTEN") {
					t.Fatalf("netstat fallback: %+v", out)
				}
			}
		})
	}
}
