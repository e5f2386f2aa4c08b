package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestUndoBlockedModesOtherUser: as a user other than root (a throwaway
// uid in a scratch home), a medium command that takes away a directory's
// own rights (chmod -R 000 DIR stops at DIR: chmod cannot read it after)
// is undone mode for mode. The tree cannot be listed to check or restore
// it until undo gives its directories u+rwx again, top down; without that
// undo failed with "permission denied".
func TestUndoBlockedModesOtherUser(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	for _, cmd := range []string{
		"chmod -R 000 W/sub",
		"chmod -R a-rwx W/sub",
		"chmod 000 W/sub/inner && chmod 0 W/sub", // two levels, each blocking the next
	} {
		t.Run(cmd, func(t *testing.T) {
			base := openDir(t, "agent-undo-other-")
			home := filepath.Join(base, "home")
			w := filepath.Join(home, "w")
			for _, d := range []string{w, filepath.Join(w, "sub", "inner", "deep")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string]fs.FileMode{"sub/f": 0o640, "sub/inner/g": 0o600, "sub/inner/deep/h": 0o755}
			for f, m := range files {
				if err := os.WriteFile(filepath.Join(w, f), []byte(f+"\n"), m); err != nil {
					t.Fatal(err)
				}
			}
			os.Chmod(filepath.Join(w, "sub", "inner"), 0o750)
			inv := filepath.Join(base, "hosts.ini")
			if err := os.WriteFile(inv, []byte("me ansible_connection=local\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			other.Own(t, base)
			before := modeSnapshot(t, w)
			env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, ".state"),
				"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=/usr/bin:/bin", "SSH_AUTH_SOCK=", "CI=true", raceEnv()}
			run := func(args ...string) (string, int) {
				t.Helper()
				c := exec.Command(agent, args...)
				c.Env, c.Dir = env, home
				c.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred()}
				out, err := c.CombinedOutput()
				if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
					t.Fatalf("agent %s: %v", strings.Join(args, " "), err)
				}
				return string(out), c.ProcessState.ExitCode()
			}
			out, _ := run("exec", "-i", inv, "--approve", "medium", "--", strings.ReplaceAll(cmd, "W/", w+"/"))
			if !regexp.MustCompile(`step, [12] changed`).MatchString(out) {
				t.Fatalf("the command did not run as a medium change:\n%s", out)
			}
			if fi, err := os.Stat(filepath.Join(w, "sub")); err != nil || fi.Mode().Perm() != 0 {
				t.Fatalf("the command did not block sub: %v %v\n%s", fi.Mode(), err, out)
			}
			out, code := run("undo", "-i", inv)
			if code != 0 {
				t.Fatalf("undo exited %d:\n%s", code, out)
			}
			if got := modeSnapshot(t, w); got != before {
				t.Errorf("after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, before, out)
			}
		})
	}
}

// otherUserAgent is a copy of the agent on $PATH (placePlainAgent's,
// built without -race), named agent, that every user may run.
func otherUserAgent(t *testing.T) string {
	t.Helper()
	exe, err := exec.LookPath("agent") // placePlainAgent's
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(openDir(t, "agent-undo-bin-"), "agent")
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// modeSnapshot is dir's tree (read as root): each entry's path, mode and
// content.
func modeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
