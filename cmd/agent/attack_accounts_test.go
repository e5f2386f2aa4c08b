package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// TestOtherAccountsHomesOtherUser: a service account's home outside /home
// (here a scratch directory /etc/passwd names, as /var/lib/postgresql)
// holds credentials its modes let the operator read — a .pgpass, a key in
// .ssh, a secret-named file. Run by a throwaway unprivileged user through
// `agent exec`: by default the classifier denies reading them (it knows
// the homes from /etc/passwd), and with the level forced to safe
// (agent-run, which the test's policy rates safe, runs a script the
// classifier never reads) the kernel denies them (it reads /etc/passwd
// when it computes the rules), and at forced medium it denies writing the
// account's dot-files; the account's ordinary files stay readable.
// Judged by outcome: no marker in what agent printed, the home unchanged.
func TestOtherAccountsHomesOtherUser(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	base, home, inv := otherUserScratch(t, "agent-accounts-")
	svcHome := serviceHome(t, "agent-svc-")
	// The forced level: agent-run in a bin directory the policy trusts.
	bed := filepath.Join(base, "bed")
	if err := os.Mkdir(bed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bed, "agent-run"), []byte("#!/bin/sh\nexec /bin/sh \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(base, "config", "agent", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(level string) {
		y := "safety:\n  bin_dirs: [/bin, /usr/bin, /sbin, /usr/sbin, /usr/local/bin, " + bed + "]\n  commands:\n    agent-run: {level: " + level + "}\n"
		if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chown(cfg, int(other.UID), int(other.GID))
	}
	other.Own(t, base)
	env := otherUserEnv(base, home)
	run := func(args ...string) (string, int) {
		t.Helper()
		out, code, _ := runAsOther(other, agent, env, home, args...)
		return out, code
	}
	script := func(body string) string {
		f := filepath.Join(bed, "s-"+strings.Repeat("x", len(body)%7)+".sh")
		if err := os.WriteFile(f, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(bed, "agent-run") + " " + f
	}
	before := corpustest.Tree(t, svcHome)
	leaked := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "m4rker") {
			t.Errorf("%s read another account's secret:\n%.800s", what, out)
		}
	}
	reads, writes, benign := serviceAttacks(svcHome)
	// The classifier, by default.
	write("high")
	for _, cmd := range reads {
		out, code := run("exec", "-i", inv, "--json", "--", cmd)
		leaked(cmd, out)
		if code == 0 || !strings.Contains(out, `"status":"denied"`) {
			t.Errorf("%q: exit %d, want denied by the classifier:\n%.600s", cmd, code, out)
		}
	}
	// The kernel, the level forced.
	for _, level := range []string{"safe", "medium"} {
		write(level)
		args := []string{"exec", "-i", inv, "--json"}
		if level == "medium" {
			args = append(args, "--approve", "medium")
		}
		for _, cmd := range reads {
			out, _ := run(append(args, "--", script(cmd))...)
			leaked(level+" (kernel): "+cmd, out)
		}
		if level == "medium" {
			for _, cmd := range writes {
				out, _ := run(append(args, "--", script(cmd))...)
				leaked(level+" (kernel): "+cmd, out)
			}
		}
		out, code := run(append(args, "--", script(benign))...)
		if code != 0 || !strings.Contains(out, "benign-notes") || !strings.Contains(out, "benign-rc") || !strings.Contains(out, ".pgpass") {
			t.Errorf("%s: the account's ordinary files: exit %d:\n%.800s", level, code, out)
		}
	}
	corpustest.Same(t, "another account's home after the attacks", before, corpustest.Tree(t, svcHome))
}

// serviceHome makes a service account (testenv.StartServiceAccount) whose
// home, in a scratch directory named after prefix, holds credentials at
// its top and below it (.config/gcloud, app/.env: session 15) beside
// ordinary files, every entry readable and writable by all: the
// misconfiguration the modes alone would not hold.
func serviceHome(t *testing.T, prefix string) string {
	t.Helper()
	svcHome := filepath.Join(openDir(t, prefix), "svc")
	for name, content := range map[string]string{
		".pgpass": "db:5432:*:app:m4rker-pgpass\n", ".ssh/id_ed25519": "m4rker-sshkey\n", "server.key": "m4rker-key\n",
		".psql_history": "\\password m4rker-hist\n", "notes.txt": "benign-notes\n", ".bashrc": "# benign-rc\n",
		"app/.env": "PASSWORD=m4rker-env\n", ".config/gcloud/credentials.db": "m4rker-gcloud\n",
	} {
		p := filepath.Join(svcHome, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	svc := testenv.StartServiceAccount(t, svcHome)
	svc.Own(t, svcHome)
	filepath.Walk(svcHome, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chmod(p, map[bool]os.FileMode{true: 0o777, false: 0o666}[fi.IsDir()])
		}
		return err
	})
	return svcHome
}

// serviceAttacks are the commands run against serviceHome's home: reads
// of its secrets (none may show "m4rker"), writes of its dot-files (at
// medium; none may change it), and a benign read of its ordinary files.
func serviceAttacks(svcHome string) (reads, writes []string, benign string) {
	reads = []string{"cat " + svcHome + "/.pgpass", "cat " + svcHome + "/.ssh/id_ed25519", "cat " + svcHome + "/server.key",
		"tail " + svcHome + "/.psql_history", "grep -r m4r[k]er " + svcHome, "cat " + svcHome + "/app/.env",
		"cat " + svcHome + "/.config/gcloud/credentials.db"}
	writes = []string{"echo 'curl x|sh' >> " + svcHome + "/.bashrc", "echo x > " + svcHome + "/.profile",
		"mkdir -p " + svcHome + "/.ssh && echo key >> " + svcHome + "/.ssh/authorized_keys", "ln -s /tmp " + svcHome + "/.config"}
	return reads, writes, "cat " + svcHome + "/notes.txt " + svcHome + "/.bashrc && ls -a " + svcHome
}
