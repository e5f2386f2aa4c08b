package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// gitScript, run by a real sh and git on a real repository, prints the
// versions of its files the history holds: a secret committed then
// removed, one only the reflog reaches (after a reset), one in a stash;
// nothing from a directory that is no repository, and no hook runs.
func TestGitScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "re'po $(touch PWNED)")
	run := func(argv ...string) {
		t.Helper()
		cmd := exec.Command("git", argv...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=d", "GIT_AUTHOR_EMAIL=d@example.com", "GIT_COMMITTER_NAME=d",
			"GIT_COMMITTER_EMAIL=d@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git-hooks"), 0o700); err != nil {
		t.Fatal(err)
	}
	run("init", "-q")
	write(".env", "DB_PASSWORD=GitOld-2210ca\n")
	run("add", ".env")
	run("commit", "-qm", "one")
	write(".env", "DB_PASSWORD=\n")
	run("commit", "-qam", "two")
	write("lost.ini", "token = Reflog-5510aa\n")
	run("add", "lost.ini")
	run("commit", "-qm", "three")
	run("reset", "-q", "--hard", "HEAD~1")
	write(".env", "DB_PASSWORD=Stashed-7781bb\n")
	run("stash", "-q")
	// a hook and fsmonitor that would leave a mark if git ran them
	run("config", "core.fsmonitor", "touch "+filepath.Join(dir, "FSMON"))
	notRepo := filepath.Join(dir, "plain")
	os.MkdirAll(notRepo, 0o700)
	cmd := exec.Command("/bin/sh", "-c", gitScript([]string{treeRoot(notRepo), treeRoot(repo)}))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, f := range splitTreeFiles(string(out)) {
		got = append(got, f.path+"="+f.data)
	}
	for _, want := range []string{".env=DB_PASSWORD=GitOld-2210ca\n", "lost.ini=token = Reflog-5510aa\n", ".env=DB_PASSWORD=Stashed-7781bb\n"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	for _, mark := range []string{"PWNED", "FSMON"} {
		if _, err := os.Stat(filepath.Join(dir, mark)); err == nil {
			t.Errorf("%s: ran", mark)
		}
	}
}

// The git commands that show history, and their -C directory.
func TestShowsHistory(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git show HEAD~1:.env | base64":          true,
		"cd /srv/app && git log -p | rev":        true,
		"git -C /srv/app --no-pager diff HEAD~3": true,
		"git -c color.ui=never stash show -p":    true,
		"git status":                             false,
		"git commit -m 'show log'":               false,
		"legit show":                             false,
	} {
		if got := showsHistory.MatchString(cmd); got != want {
			t.Errorf("%s: %v, want %v", cmd, got, want)
		}
	}
	for cmd, want := range map[string]string{
		"git -C /srv/app show HEAD:x": "/srv/app",
		"git -C '/srv/my app' log":    "/srv/my app",
		`git -c a=b -C "/srv/x" log`:  "/srv/x",
		"git -C $(pwd) log":           "",
		"git log -C":                  "",
	} {
		got := ""
		if m := gitDirArg.FindStringSubmatch(cmd); m != nil {
			got = m[1] + m[2] + m[3]
		}
		if got != want {
			t.Errorf("%s: -C %q, want %q", cmd, got, want)
		}
	}
}
