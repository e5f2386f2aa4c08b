package executor

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport/become"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// TestBecomeStepOneHomeSSHD: a step that runs as root through become is
// classified with root's home, the home its "~" and relative paths are
// resolved against — not the login user's. Over real sshd the login user's
// HOME is a directory outside /home (sshd's SetEnv), so its files are
// "~/…" only when the login user's home is used: the login user's
// .profile, written by root, is an ordinary file of root's (medium, runs
// unasked; with the login user's home it would be a protected start-up
// file), and "~/x" in root's command is root's file, journaled as
// /root/x (with the login user's home the journal would save the wrong
// file).
func TestBecomeStepOneHomeSSHD(t *testing.T) {
	s := testenv.SetupSudo(t)
	u, err := user.Lookup(s.PassUser)
	must(t, err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	loginHome, err := os.MkdirTemp("", "agent-login-home-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(loginHome) })
	must(t, os.Chmod(loginHome, 0o755))
	must(t, os.Chown(loginHome, uid, gid))
	keys := filepath.Join(loginHome, "authorized_keys")
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: fmt.Sprintf(
		"Match User %s\n\tAuthorizedKeysFile %s\n\tSetEnv HOME=%s\n", s.PassUser, keys, loginHome)})
	pub, err := os.ReadFile(d.IdentityFile + ".pub")
	must(t, err)
	must(t, os.WriteFile(keys, pub, 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig, User: s.PassUser})
	must(t, err)
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	must(t, err)
	t.Cleanup(func() { tr.Close() })
	if home, err := tr.HomeDir(ctx); err != nil || home != loginHome {
		t.Fatalf("login HOME = %q, %v; want %s", home, err, loginHome)
	}
	b, err := become.New(tr, become.Config{Password: s.Password})
	must(t, err)
	j, err := journal.Open(t.TempDir(), "s1", "sshd")
	must(t, err)
	e := New(Config{Transport: tr, Become: b, BecomeAll: true, Policy: safety.DefaultPolicy(), Journal: j,
		Approver: safety.NewApprover(safety.ModeMedium, nil)})

	profile := filepath.Join(loginHome, ".profile")
	must(t, os.WriteFile(profile, []byte("# login\n"), 0o644))
	r, err := e.RunStep(ctx, planner.Step{Tool: "execute_command",
		Parameters: map[string]any{"command": "echo '# by root' >> " + profile}})
	if err != nil || r.Status != "ok" || r.Risk.Level != safety.Medium {
		t.Errorf("root appending to the login user's .profile: %s %s %v %v %s", r.Status, r.Risk.Level, r.Risk.Reasons, err, r.Observation)
	}
	if got, _ := os.ReadFile(profile); string(got) != "# login\n# by root\n" {
		t.Errorf("the login user's .profile holds %q", got)
	}

	name := "agent-onehome-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove("/root/" + name) })
	r, err = e.RunStep(ctx, planner.Step{Tool: "execute_command",
		Parameters: map[string]any{"command": "echo x >> ~/" + name}})
	if err != nil || r.Status != "ok" || fmt.Sprint(r.Journaled) != "[/root/"+name+"]" {
		t.Errorf("root appending to ~/%s: %s %v, journaled %v: %s", name, r.Status, err, r.Journaled, r.Observation)
	}
	if got, _ := os.ReadFile("/root/" + name); string(got) != "x\n" {
		t.Errorf("/root/%s holds %q", name, got)
	}

	rootProfile := "/root/.profile"
	before, _ := os.ReadFile(rootProfile)
	r, err = e.RunStep(ctx, planner.Step{Tool: "execute_command",
		Parameters: map[string]any{"command": "echo '# agent test' >> " + rootProfile}})
	if err != nil || r.Status != "denied" || r.Risk.Level != safety.High {
		t.Errorf("root appending to its own .profile: %s %s %v %v %s", r.Status, r.Risk.Level, r.Risk.Reasons, err, r.Observation)
	}
	if after, _ := os.ReadFile(rootProfile); string(after) != string(before) {
		os.WriteFile(rootProfile, before, 0o644)
		t.Errorf("root's .profile changed")
	}
}
