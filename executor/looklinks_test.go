package executor

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// servedLike is this machine seen as an SSH host with a served worker
// sees it: the look says a file's hard-link count (confine's look
// answer), Stat's attributes do not (SFTP's have no link count), and the
// home's hard-link probe finds nothing (it ran before the link was made,
// or the host has no find).
type servedLike struct {
	transport.Transport
	in transport.Inspector
}

func (s servedLike) Host() transport.HostInfo {
	h := s.Transport.Host()
	h.Kind = "ssh"
	return h
}

func (s servedLike) Inspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	in, err := s.in.Inspect(ctx, p, readMax)
	if in.Info != nil {
		in.Info = sftpLikeInfo{in.Info}
	}
	return in, err
}

func (s servedLike) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	fi, err := s.Transport.Stat(ctx, p)
	if fi != nil {
		fi = sftpLikeInfo{fi}
	}
	return fi, err
}

func (s servedLike) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	if strings.Contains(c.Command, "-links +1") {
		return transport.Result{}, nil // the probe: nothing found
	}
	return s.Transport.Run(ctx, c)
}

// sftpLikeInfo hides the system's stat (its link count).
type sftpLikeInfo struct{ fs.FileInfo }

func (sftpLikeInfo) Sys() any { return nil }

// TestJournalTakesLinksFromTheLook: a medium step appending to another
// name of ~/.ssh/authorized_keys that the home's probe did not report is
// refused by the journal from the look's link count, on a host whose
// Stat does not carry one (an SSH host's served worker says it: the Go
// launcher's look). Without it, over SSH the key went into
// authorized_keys at --approve medium, where this machine's journal
// (Stat's link count) refused it.
func TestJournalTakesLinksFromTheLook(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	keys := filepath.Join(home, ".ssh", "authorized_keys")
	for _, d := range []string{".ssh", "work"} {
		must(t, os.MkdirAll(filepath.Join(home, d), 0o700))
	}
	must(t, os.WriteFile(keys, []byte("ssh-ed25519 AAAA ok\n"), 0o600))
	must(t, os.Link(keys, filepath.Join(home, "work", "k")))
	h := newHarness(t)
	lt, err := local.New()
	must(t, err)
	e := New(Config{Transport: servedLike{lt, lt}, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil),
		Audit: h.audit, Journal: h.jrnl, Session: "s1"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := e.RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": "echo ssh-rsa EVIL >> ~/work/k"}})
	if err != nil || r.Status != "denied" || r.Risk.Level != safety.High || !strings.Contains(strings.Join(r.Risk.Reasons, ";"), "2 hard links") {
		t.Errorf("append to another name of authorized_keys: %v %s %s %v", err, r.Status, r.Risk.Level, r.Risk.Reasons)
	}
	if b, _ := os.ReadFile(keys); string(b) != "ssh-ed25519 AAAA ok\n" {
		t.Errorf("authorized_keys is now %q", b)
	}
}
