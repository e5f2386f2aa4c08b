package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// lateHarvest is a local host whose harvest commands do not finish (a
// loaded host past their timeout): each is run, and its result comes
// back with transport.ErrTimeout, as a killed command's does.
type lateHarvest struct {
	transport.Transport
	ran []string // the commands that reached the host
}

func (l *lateHarvest) Unwrap() transport.Transport { return l.Transport }

func (l *lateHarvest) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	l.ran = append(l.ran, c.Command)
	if c.Command == processListing || c.Command == envListing || strings.HasPrefix(c.Command, "{ ") {
		return transport.Result{ExitCode: -1}, fmt.Errorf("run: killed after %v: %w", c.Timeout, transport.ErrTimeout)
	}
	return l.Transport.Run(ctx, c)
}

// TestHarvestUnfinishedFailsStep: a step whose harvest did not finish is
// not run — judged by what reached the host and what the step showed: a
// process holds a password in its arguments, `ps -eo args | rev` would
// show it reversed (the patterns see it in clear only), and the listing
// that teaches the set did not finish. Without the rule the step ran and
// its output held the reversed password. A tree's read (`grep -r`) the
// same way.
func TestHarvestUnfinishedFailsStep(t *testing.T) {
	const pw = "PsLatePw-4471zz"
	holder := exec.Command("/bin/sh", "-c", "read x", "mysqld", "--password="+pw)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Process.Kill(); holder.Wait() })
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/app.env", []byte("API_TOKEN=TreeLateTok-5582yy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ command, secret string }{
		{"ps -eo args | grep -o -- '--password=[^ ]*' | rev", pw},
		{"cd " + dir + " && cat $(ls | grep env) | rev", "TreeLateTok-5582yy"},
	} {
		tr := &lateHarvest{Transport: lt}
		e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil),
			Secrets: redact.NewSet(), Session: "s1", Vars: execctx.New()})
		r, err := e.RunStep(context.Background(), planner.Step{Tool: tools.ExecuteCommandName, Parameters: map[string]any{"command": c.command}})
		if err != nil {
			t.Fatal(err)
		}
		for _, ran := range tr.ran {
			if ran == c.command {
				t.Errorf("%s: ran on the host though its harvest did not finish", c.command)
			}
		}
		if r.Status != execctx.StatusError || !strings.Contains(r.Observation, "did not finish") {
			t.Errorf("%s: status %s, observation %q; want an error saying the harvest did not finish", c.command, r.Status, r.Observation)
		}
		rev := []byte(c.secret)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		if strings.Contains(r.Observation, string(rev)) || strings.Contains(r.Output.Stdout, string(rev)) {
			t.Errorf("%s: its output holds the secret reversed: %q", c.command, r.Output.Stdout)
		}
	}
}

// recordHarvest is a local host that records the commands that reach it.
type recordHarvest struct {
	transport.Transport
	ran []string
}

func (l *recordHarvest) Unwrap() transport.Transport { return l.Transport }

func (l *recordHarvest) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	l.ran = append(l.ran, c.Command)
	return l.Transport.Run(ctx, c)
}

// TestHarvestMissingResolvedPathNoTree: a missing path the classifier
// resolved whole (an operand that is no file: getconf's name) is not
// read, and its directory is no tree to walk because a $ elsewhere makes
// the command compute paths; a path word the command completes
// (./conf of ./conf$n.yml) still makes its directory one.
func TestHarvestMissingResolvedPathNoTree(t *testing.T) {
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	for command, tree := range map[string]bool{
		`getconf PAGESIZE; echo "$HOME"`: false,
		`n=1; cat ./conf$n.yml`:          true,
	} {
		tr := &recordHarvest{Transport: lt}
		e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil),
			Secrets: redact.NewSet(), Session: "s1", Vars: execctx.New()})
		if _, err := e.RunStep(context.Background(), planner.Step{Tool: tools.ExecuteCommandName, Parameters: map[string]any{"command": command}}); err != nil {
			t.Fatal(err)
		}
		walked := false
		for _, ran := range tr.ran {
			walked = walked || strings.Contains(ran, "find -H")
		}
		if walked != tree {
			t.Errorf("%s: a tree read: %v, want %v (%d commands)", command, walked, tree, len(tr.ran))
		}
	}
}
