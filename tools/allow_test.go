package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

// TestOptionAllowlist: ss, ps and lsof take only read-only options.
func TestOptionAllowlist(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "diag")
	cases := []struct {
		tool string
		opts []string
		ok   bool
	}{
		{SsName, []string{"--diag=" + marker}, false},
		{SsName, []string{"--diag", marker}, false},
		{SsName, []string{"--kil"}, false},
		{SsName, []string{"--kill"}, false},
		{SsName, []string{"-K"}, false},
		{SsName, []string{"-tK"}, false},
		{SsName, []string{"-D", marker}, false},
		{SsName, []string{"-F /etc/shadow"}, false},
		{SsName, []string{"-F/etc/shadow"}, false},
		{SsName, []string{"--filter=/etc/shadow"}, false},
		{SsName, []string{"--tc"}, false},
		{SsName, []string{"--tcp=1"}, false},
		{SsName, []string{"-n", "state", "established"}, false},
		{SsName, []string{"-"}, false},
		{SsName, []string{"--"}, false},
		{SsName, []string{"-tlnp"}, true},
		{SsName, []string{"-t -l", "--numeric", "--processes", "-H"}, true},
		{SsName, []string{"--all", "--listening", "--tcp", "--udp", "--unix", "--raw", "--numeric", "--processes", "--extended",
			"--memory", "--info", "--summary", "--options", "--no-header", "--ipv4", "--ipv6", "--resolve", "-altuxwnpemisoH460r"}, true},
		{PsName, []string{"-ef"}, true},
		{PsName, []string{"-aux"}, true},
		{PsName, []string{"-eo pid,args", "--sort -pcpu"}, true},
		{PsName, []string{"--sort=-%cpu"}, true},
		{PsName, []string{"-o"}, false},
		{PsName, []string{"aux"}, false},
		{PsName, []string{"-ef", "extra"}, false},
		{PsName, []string{"--so=pid"}, false},
		{LsofName, []string{"-nP", "-i :8080", "-sTCP:LISTEN"}, true},
		{LsofName, []string{"-i", "TCP", "-s", "TCP:LISTEN"}, true},
		{LsofName, []string{"+D /var/log"}, true},
		{LsofName, []string{"+d", "/tmp"}, true},
		{LsofName, []string{"-F pcn", "-c sshd"}, true},
		{LsofName, []string{"-D b"}, false},
		{LsofName, []string{"-Db"}, false},
		{LsofName, []string{"-r 1"}, false},
		{LsofName, []string{"+r"}, false},
		{LsofName, []string{"-k /etc/shadow"}, false},
		{LsofName, []string{"-m /dev/kmem"}, false},
		{LsofName, []string{"+m /etc/x"}, false},
		{LsofName, []string{"-i", "-D", "b"}, false},
		{LsofName, []string{"-c", "-D"}, false},
		{LsofName, []string{"-c"}, false},
	}
	reg := Default(safety.DefaultPolicy())
	for _, c := range cases {
		tl, _ := reg.Lookup(c.tool)
		line, err := tl.(Commander).CommandLine(raw(t, map[string]any{"options": c.opts}))
		if (err == nil) != c.ok {
			t.Errorf("%s %q: line %q, err %v; want ok %v", c.tool, c.opts, line, err, c.ok)
		}
		if err == nil && c.ok {
			for _, o := range c.opts {
				if !strings.Contains(line, strings.Fields(o)[0]) {
					t.Errorf("%s %q: %q lacks %q", c.tool, c.opts, line, o)
				}
			}
		}
		if err != nil && !strings.Contains(err.Error(), "not allowed") && !strings.Contains(err.Error(), "not an option") &&
			!strings.Contains(err.Error(), "needs a value") {
			t.Errorf("%s %q: unclear error %v", c.tool, c.opts, err)
		}
	}
	// Run for real: the refused option is a tool error and nothing happens.
	for _, tg := range targets(t) {
		for _, opts := range [][]string{{"--diag=" + marker}, {"--kil"}, {"-F", "/etc/shadow"}} {
			out, err := reg.Run(ctxT(t), tg.tr, SsName, map[string]any{"options": opts})
			if err != nil || !out.IsError || !strings.Contains(out.Observation, "is not allowed: ss takes only these read-only options") {
				t.Errorf("%s ss %q: %+v %v", tg.name, opts, out, err)
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("ss --diag created %s", marker)
		}
	}
}

// TestExecuteCommandLineCwd: the directory is part of the line that is
// classified and shown.
func TestExecuteCommandLineCwd(t *testing.T) {
	tl := NewExecuteCommand()
	cases := []struct {
		cwd, want string
	}{
		{"", "echo x > f"},
		{"/etc", "cd -- /etc && echo x > f"},
		{"/tmp/a b", "cd -- '/tmp/a b' && echo x > f"},
		{"~/my dir", "cd -- ~/'my dir' && echo x > f"},
		{"~", "cd -- ~ && echo x > f"},
		{"$(touch x)", "cd -- '$(touch x)' && echo x > f"},
		{"-P", "cd -- ./-P && echo x > f"},
	}
	for _, c := range cases {
		got, err := tl.CommandLine(raw(t, map[string]any{"command": "echo x > f", "cwd": c.cwd}))
		if err != nil || got != c.want {
			t.Errorf("cwd %q: got %q (%v), want %q", c.cwd, got, err, c.want)
		}
	}
}
