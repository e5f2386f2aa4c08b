package executor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
)

// A file tool is classified on where a symbolic link really leads on the
// target, not only on the path as written.
func TestExecutorClassifySymlinks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	sys := "/etc/agent-test-" + filepath.Base(home) // need not exist
	must(t, os.Symlink(sys, filepath.Join(home, "notes.txt")))
	must(t, os.Symlink("/etc/shadow", filepath.Join(home, "shadow.txt")))
	must(t, os.WriteFile(filepath.Join(home, "plain.txt"), []byte("x"), 0o644))
	for _, c := range []struct {
		tool   string
		params map[string]any
		want   safety.Level
		show   string
	}{
		{"write_file", map[string]any{"file_path": "~/notes.txt", "content": "x"}, safety.High, "~/notes.txt → " + sys},
		{"edit_file", map[string]any{"file_path": "~/notes.txt", "search_pattern": "a", "replacement": "b"}, safety.High, "~/notes.txt → " + sys},
		{"read_file", map[string]any{"file_path": "~/shadow.txt"}, safety.High, "~/shadow.txt → /etc/shadow"},
		{"upload_file", map[string]any{"local_path": "/tmp/x", "remote_path": "~/notes.txt"}, safety.High, "~/notes.txt → " + sys + "; local: /tmp/x"},
		{"read_file", map[string]any{"file_path": "~/plain.txt"}, safety.Safe, ""},
		{"write_file", map[string]any{"file_path": "~/missing/new.txt", "content": "x"}, safety.Medium, ""},
	} {
		cls, err := e.classifyTool(context.Background(), c.tool, c.params)
		if err != nil || cls.refused != nil || cls.risk.Level != c.want || cls.show != c.show {
			t.Errorf("%s %v: %+v %v, want %s shown as %q", c.tool, c.params, cls, err, c.want, c.show)
		}
	}

	// Run under --approve medium: the write through the link is high, so
	// the person is asked (and says no), seeing where it leads.
	p := mustParse(t, "steps:\n  - tool: write_file\n    parameters: {file_path: ~/notes.txt, content: x}\n")
	sum, err := h.executor(safety.ModeMedium, false, nil).RunPlan(context.Background(), p)
	if err != nil || sum.Denied != 1 || len(h.asked) != 1 || h.asked[0].Path != "~/notes.txt → "+sys ||
		h.asked[0].Risk.Level != safety.High {
		t.Fatalf("RunPlan: %+v %v, asked %+v", sum, err, h.asked)
	}
}

// Transfers are classified on the operator's file too.
func TestExecutorClassifyTransferLocal(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(home)
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	// A download never writes a protected path (localWriteRefusal).
	for _, lp := range []string{"~/.bashrc", "/etc/cron.d/x"} {
		cls, err := e.classifyTool(context.Background(), "download_file", map[string]any{"local_path": lp, "remote_path": "~/x"})
		if err != nil || cls.refused == nil || !strings.Contains(cls.refused.Error(), "protected on this machine") {
			t.Errorf("download to %s: %+v %v, want refused as protected", lp, cls, err)
		}
	}
	for _, c := range []struct {
		tool   string
		params map[string]any
		want   safety.Level
		local  string
	}{
		{"upload_file", map[string]any{"local_path": "~/build/app.tgz", "remote_path": "~/x"}, safety.Medium, home + "/build/app.tgz"},
		{"download_file", map[string]any{"local_path": "~/x.log", "remote_path": "~/x"}, safety.Medium, home + "/x.log"},
	} {
		cls, err := e.classifyTool(context.Background(), c.tool, c.params)
		if err != nil || cls.refused != nil || cls.risk.Level != c.want || cls.localPath() != c.local || !strings.Contains(cls.show, "local: "+c.local) {
			t.Errorf("%s %v: %+v %v, want %s with local %q", c.tool, c.params, cls, err, c.want, c.local)
		}
	}
	if cls, _ := e.classifyTool(context.Background(), "download_file", map[string]any{"local_path": "~/../x", "remote_path": "~/x"}); cls.refused == nil {
		t.Errorf("a local .. escape is not refused: %+v", cls)
	}
}

// Undo refuses to overwrite a change made after the session's, unless
// forced, and puts setuid modes back.
func TestExecutorUndoChangedSinceAndMode(t *testing.T) {
	h := newHarness(t)
	script := h.write("run.sh", "#!/bin/sh\necho 1\n")
	conf := h.write("app.conf", "v1\n")
	must(t, os.Chmod(script, 0o750|fs.ModeSetuid))
	p := mustParse(t, `steps:
  - tool: edit_file
    parameters: {file_path: "{{script}}", search_pattern: echo 1, replacement: echo 2}
  - tool: write_file
    parameters: {file_path: "{{conf}}", content: "v2\n"}
`)
	e := h.executor(safety.ModeAll, false, map[string]string{"script": script, "conf": conf})
	if sum, err := e.RunPlan(context.Background(), p); err != nil || !sum.Success {
		t.Fatalf("RunPlan: %+v %v", sum, err)
	}
	must(t, os.WriteFile(conf, []byte("v3 by someone else\n"), 0o644))
	must(t, os.Chmod(script, 0o644))

	acts, err := h.jrnl.Restore(context.Background(), restorer{})
	if !errors.Is(err, journal.ErrChangedSince) || !strings.Contains(err.Error(), "skipped "+conf+": changed since session s1 (use --force to overwrite)") || len(acts) != 1 {
		t.Fatalf("Restore: %v %v", acts, err)
	}
	if got := h.read(conf); got != "v3 by someone else\n" {
		t.Errorf("later change overwritten: %q", got)
	}
	if fi, err := os.Stat(script); err != nil || fi.Mode() != 0o750|fs.ModeSetuid || h.read(script) != "#!/bin/sh\necho 1\n" {
		t.Errorf("script after undo: %v %v %q", fi.Mode(), err, h.read(script))
	}
	if _, err := h.jrnl.RestoreWith(context.Background(), restorer{}, journal.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := h.read(conf); got != "v1\n" {
		t.Errorf("forced undo: %q", got)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// What runs is what was approved: a file changed between the preview shown
// to the person and the change is not overwritten.
func TestExecutorApprovedContent(t *testing.T) {
	for _, tc := range []struct{ name, params string }{
		{"write", `{file_path: "{{f}}", content: "mine\n"}`},
		{"edit", `{file_path: "{{f}}", search_pattern: v1, replacement: mine}`},
		{"create", `{file_path: "{{g}}", content: "mine\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			f := h.write("app.conf", "v1\n")
			g := filepath.Join(h.dir, "new.conf")
			tool := "write_file"
			if tc.name == "edit" {
				tool = "edit_file"
			}
			p := mustParse(t, "steps:\n  - tool: "+tool+"\n    parameters: "+tc.params+"\n")
			e := h.executor(safety.ModeAsk, false, map[string]string{"f": f, "g": g})
			e.cfg.Approver = safety.NewApprover(safety.ModeAsk, safety.PrompterFunc(func(context.Context, safety.Request) (safety.Decision, error) {
				must(t, os.WriteFile(f, []byte("v1 and theirs\n"), 0o644))
				must(t, os.WriteFile(g, []byte("theirs\n"), 0o644))
				return safety.Decision{Allowed: true}, nil
			}))
			res, err := e.RunStep(context.Background(), p.Phases[0].Steps[0])
			if err != nil || res.Status != execctx.StatusError || !strings.Contains(res.Observation, "changed since the change was approved") {
				t.Fatalf("RunStep: %s %q %v", res.Status, res.Observation, err)
			}
			if h.read(f) != "v1 and theirs\n" || h.read(g) != "theirs\n" {
				t.Errorf("overwritten: %q %q", h.read(f), h.read(g))
			}
		})
	}
}

// TestStepDurationExcludesApproval: the time spent at the approval prompt
// is not part of a step's duration (it showed "2791 ms" for a step that
// ran in a few milliseconds).
func TestStepDurationExcludesApproval(t *testing.T) {
	const wait = 1500 * time.Millisecond
	h := newHarness(t)
	p := mustParse(t, "steps:\n  - tool: execute_command\n    parameters: {command: \"touch "+filepath.Join(h.dir, "x")+"\"}\n")
	e := h.executor(safety.ModeAsk, false, nil)
	e.cfg.Approver = safety.NewApprover(safety.ModeAsk, safety.PrompterFunc(func(context.Context, safety.Request) (safety.Decision, error) {
		time.Sleep(wait) // a person reading the prompt
		return safety.Decision{Allowed: true}, nil
	}))
	res, err := e.RunStep(context.Background(), p.Phases[0].Steps[0])
	if err != nil || res.Status != execctx.StatusOK {
		t.Fatalf("RunStep: %s %q %v", res.Status, res.Observation, err)
	}
	if res.Duration >= wait {
		t.Errorf("duration %v includes the %v spent at the approval prompt", res.Duration, wait)
	}
	if ev := h.steps(); len(ev) != 1 || time.Duration(ev[0].DurationMS)*time.Millisecond >= wait {
		t.Errorf("step event duration includes the approval wait: %+v", ev)
	}
}

// A parameter that is one whole template is checked once resolved: an
// integer parameter takes "5" and refuses "soon".
func TestWholeTemplateCheckedResolved(t *testing.T) {
	h := newHarness(t)
	p := mustParse(t, "steps:\n  - tool: execute_command\n    parameters: {command: \"true\", timeout: \"{{t}}\"}\n")
	for val, want := range map[string]execctx.Status{"5": execctx.StatusOK, "soon": execctx.StatusError} {
		e := h.executor(safety.ModeAll, false, map[string]string{"t": val})
		res, err := e.RunStep(context.Background(), p.Phases[0].Steps[0])
		if err != nil || res.Status != want {
			t.Errorf("t=%s: %s %q %v", val, res.Status, res.Observation, err)
		}
	}
}
