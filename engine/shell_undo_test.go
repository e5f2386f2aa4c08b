package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/testenv"
)

// shellUndoCase is a shell command that changes files in DIR, run at
// --approve medium: agent undo must put DIR back byte for byte and mode
// for mode — or, when undo could not, the command must be high and not
// run at medium.
type shellUndoCase struct {
	cmd  string
	high bool // undo could not take it back: denied at --approve medium
}

var shellUndoCases = []shellUndoCase{
	{cmd: "unlink DIR/data.txt"},
	{cmd: "rm -f DIR/data.txt"},
	{cmd: "sort -o DIR/data.txt /dev/null"},
	{cmd: "cat /dev/null >| DIR/data.txt"},
	{cmd: "cp -f DIR/other.txt DIR/data.txt"},
	{cmd: "ln -sfT other.txt DIR/data.txt"},
	{cmd: "install -D /dev/null DIR/data.txt"},
	{cmd: "echo x | tee -a /dev/null > DIR/data.txt"},
	{cmd: "echo more >> DIR/data.txt"},
	{cmd: "chmod 600 DIR/data.txt"},
	{cmd: "mv DIR/data.txt DIR/moved.txt"},
	{cmd: "echo new > DIR/created.txt"},
	{cmd: "sed -i s/precious/gone/ DIR/data.txt"},
	{cmd: "truncate -s 0 DIR/data.txt"},
	{cmd: "mkdir DIR/new"},
	{cmd: "mkdir -m 700 DIR/private"},
	{cmd: "mkfifo DIR/pipe && echo made"}, // the journal never opens the fifo (it hung for good)
	{cmd: "mkdir -p DIR/a/b/c && echo x > DIR/a/b/c/f && chmod 600 DIR/a/b/c/f"},
	{cmd: "mkdir DIR/n && cp DIR/other.txt DIR/n/", high: true},           // what goes into the new directory
	{cmd: "tar -cf DIR/x.tar --remove-files DIR/sub", high: true},         // tar's removals are not in the table yet
	{cmd: "sh -c 'tar -cf DIR/x.tar --remove-files DIR/sub'", high: true}, // in a code string too
	{cmd: "alias t=tar; t -cf DIR/x.tar --remove-files DIR/sub", high: true},
	// Directory trees are journaled whole.
	{cmd: "rm -r DIR/sub"},
	{cmd: "rm -rf DIR", high: true}, // it holds a fifo and hard links
	{cmd: "rm -rf DIR/sub"},
	{cmd: "rmdir DIR/sub/empty"},
	{cmd: "rmdir -p DIR/sub/empty", high: true}, // and the directories above it
	{cmd: "mv DIR/sub DIR/moved"},
	{cmd: "mv DIR/data.txt DIR/sub"},
	{cmd: "chmod -R 700 DIR/sub"},
	{cmd: "chmod -R 000 DIR/sub"}, // modes that block traversal: restored innermost last
	{cmd: "chmod -R a-rwx DIR/sub && chmod 0 DIR/data.txt"},
	{cmd: "cp -r DIR/sub DIR/copy"},
	// Into a directory: the files it writes there are targets too.
	{cmd: "mkdir DIR/into && cp DIR/other.txt DIR/data.txt DIR/into", high: true}, // into a directory it creates
	{cmd: "cp DIR/other.txt DIR/sub/"},
	{cmd: "cp -t DIR/sub DIR/data.txt DIR/other.txt"},
	{cmd: "mv DIR/data.txt DIR/sub/"},
	{cmd: "rm -r DIR/sub && mkdir DIR/sub && echo new > DIR/sub/inner.txt"},
	// Backups the command makes: removed by undo.
	{cmd: "cp -b DIR/other.txt DIR/data.txt"},
	{cmd: "cp --backup=simple -S .orig DIR/other.txt DIR/data.txt"},
	{cmd: "cp --backup=existing DIR/other.txt DIR/data.txt"},
	{cmd: "mv -b DIR/other.txt DIR/data.txt"},
	{cmd: "install -b -m 644 DIR/other.txt DIR/data.txt"},
	{cmd: "ln -sfb other.txt DIR/data.txt"},
	{cmd: "sed -i.bak s/precious/gone/ DIR/data.txt"},
	{cmd: "sed --in-place=.orig s/precious/gone/ DIR/data.txt"},
	{cmd: "sed -i'old_*' s/precious/gone/ DIR/data.txt", high: true}, // named from the path
	{cmd: "cp --backup=numbered DIR/other.txt DIR/data.txt", high: true},
	{cmd: "cp -b -t DIR/sub DIR/other.txt", high: true},
	// Type changes: a file made a directory, a directory made a file, a
	// file made a link.
	{cmd: "rm DIR/data.txt; mkdir DIR/data.txt"},
	{cmd: "rm -r DIR/sub; touch DIR/sub"},
	{cmd: "rm -r DIR/sub && echo flat > DIR/sub"},
	{cmd: "rm DIR/data.txt && ln -s other.txt DIR/data.txt"},
	{cmd: "rm DIR/data.txt && ln -s sub DIR/data.txt"}, // a link to a directory
	{cmd: "rm -r DIR/sub && ln -s other.txt DIR/sub"},
	{cmd: "rm -r DIR/sub && ln -s /tmp DIR/sub", high: true},   // a link to a directory holding protected paths
	{cmd: "rm DIR/link.txt && touch DIR/link.txt", high: true}, // undo does not put a link itself back
	{cmd: "rm DIR/link.txt && mkdir DIR/link.txt", high: true},
	{cmd: "rm -rf DIR/fifo", high: true},  // a fifo inside
	{cmd: "rm -rf DIR/hard", high: true},  // a hard link inside
	{cmd: "chown -R 65534:65534 DIR/sub"}, // owners are journaled (trees: in the manifest)
	{cmd: "chgrp 65534 DIR/data.txt"},
	{cmd: "chown 65534 DIR/sub"},
	{cmd: "rm -f DIR/*.txt", high: true},       // a pattern
	{cmd: "echo x > DIR/link.txt", high: true}, // a symbolic link
	// Grown past the journal's 10 MiB file cap (as `yes | head -c 200M >>`):
	// the whole file was saved before, and goes back byte for byte.
	{cmd: "seq 1 2000000 >> DIR/data.txt"},
	// Session 11's attacker corpus: more spellings of undo-defeating
	// writes (backups, brace words, sizes, special files).
	{cmd: "install -b DIR/other.txt DIR/data.txt"},
	{cmd: "sed -ibak s/precious/gone/ DIR/data.txt"},
	{cmd: "cp -b --suffix=.old DIR/other.txt DIR/data.txt"},
	{cmd: "mv --backup=t DIR/other.txt DIR/data.txt", high: true},
	{cmd: "mv --backup=nil DIR/other.txt DIR/data.txt"},
	{cmd: "touch DIR/{x,y}"},
	{cmd: "echo x > DIR/{a,b}"},
	{cmd: "ln -fb DIR/other.txt DIR/data.txt"},
	{cmd: "chmod -R g+w DIR/sub"},
	{cmd: "chmod -R go+w DIR/sub", high: true}, // every user writing: high anywhere (session 16)
	{cmd: "split -b3 DIR/other.txt DIR/part.", high: true},
	{cmd: "fallocate -l 1G DIR/data.txt", high: true},
	{cmd: "dd if=/dev/zero of=DIR/data.txt bs=1 count=0 seek=1G", high: true},
	{cmd: "truncate -s +1G DIR/data.txt", high: true},
	{cmd: "mknod DIR/p p", high: true},
	{cmd: "rm DIR/data.txt; mkfifo DIR/data.txt"},
	{cmd: "rm -r DIR/sub; mkfifo DIR/sub"},
	{cmd: "cp -a DIR/sub DIR/copy && chmod -R 000 DIR/copy"},
	// Session 12's round trip of the corpus's medium entries: install -D's
	// directories, abbreviated --backup, "-" as a file name, a job that
	// outlives the step, cd -.
	{cmd: "install -D DIR/other.txt DIR/n/e/w"},
	{cmd: "install -Dm600 DIR/other.txt DIR/sub/n/w"},
	{cmd: "cp --back=t DIR/other.txt DIR/data.txt", high: true},
	{cmd: "install --b=numbered DIR/other.txt DIR/data.txt", high: true},
	{cmd: "cp --ba DIR/other.txt DIR/data.txt"},
	{cmd: "cd DIR && cp other.txt -"},
	{cmd: "cd DIR && echo x > -"},
	{cmd: "rm DIR/data.txt &", high: true},
	{cmd: "cd DIR/sub && cd - && rm -f data.txt", high: true},
	{cmd: "echo x >> DIR/hard/a", high: true}, // another name of DIR/hard/b: undo would put back a copy
	{cmd: "truncate -s0 DIR/hard/b", high: true},
}

// undoTarget is a host the undo tests run on: this machine, or real
// sshd; base is where their directories go.
type undoTarget struct {
	name   string
	target engine.Target
	base   string
	enf    engine.Enforcement
}

// undoTargets starts sshd and returns this machine and it, twice: its
// steps unconfined on the shell worker, and confined by the launcher
// serving as the worker ("ssh-served": the targets' states after a step
// are read by the worker in the step's round trip, transport.AfterStates).
func undoTargets(t *testing.T) (*testenv.SSHD, []undoTarget) {
	t.Helper()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	kh, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := writeFile(t, "known_hosts", string(kh))
	sshConfig := writeFile(t, "ssh_config", fmt.Sprintf(
		"Host undo-sshd\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, d.User, d.IdentityFile, knownHosts))
	t.Setenv("SSH_AUTH_SOCK", "")
	sshTarget, err := engine.HostTarget("undo-sshd", engine.SSHOverrides{ConfigFile: sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	targets := []undoTarget{{"local", engine.Target{Connection: engine.ConnLocal}, t.TempDir(), engine.Enforcement{}}, {"ssh", sshTarget, d.Home, engine.Enforcement{}}}
	if confine.ABI() >= 1 && !testing.Short() {
		targets = append(targets, undoTarget{"ssh-served", sshTarget, d.Home, engine.Enforcement{Launcher: confinetest.Launcher(t), Require: true}})
	}
	return d, targets
}

// snapshot is DIR's files: content, mode and owner, links as "-> target".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		defer func() {
			key := rel
			if fi.IsDir() {
				key += "/"
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				out[key] += fmt.Sprintf(" owner %d:%d", st.Uid, st.Gid)
			}
		}()
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().String()
		case fi.Mode()&os.ModeNamedPipe != 0:
			out[rel] = fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("%s %q", fi.Mode(), b)
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				out[rel] += fmt.Sprintf(" inode %d", st.Ino) // hard links stay links
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fillUndoDir(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "data.txt"), []byte("precious\n"), 0o640))
	must(os.Chmod(filepath.Join(dir, "data.txt"), 0o640))
	must(os.WriteFile(filepath.Join(dir, "other.txt"), []byte("other\n"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub", "inner.txt"), []byte("inner\n"), 0o644))
	must(os.Symlink("other.txt", filepath.Join(dir, "link.txt")))
	must(os.MkdirAll(filepath.Join(dir, "sub", "empty"), 0o750))
	must(os.Chmod(filepath.Join(dir, "sub", "empty"), 0o750))
	must(os.WriteFile(filepath.Join(dir, "sub", "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Chmod(filepath.Join(dir, "sub", "run.sh"), 0o4755))
	must(os.Symlink("../data.txt", filepath.Join(dir, "sub", "up")))
	must(os.Symlink("dangling", filepath.Join(dir, "sub", "dangling")))
	must(os.MkdirAll(filepath.Join(dir, "fifo"), 0o755))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo", "p"), 0o600))
	must(os.MkdirAll(filepath.Join(dir, "hard"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "hard", "a"), []byte("a\n"), 0o644))
	must(os.Link(filepath.Join(dir, "hard", "a"), filepath.Join(dir, "hard", "b")))
}

// TestShellCommandUndo runs each case on this machine and over real sshd:
// a medium command's file changes are journaled and agent undo restores
// them exactly; a change undo could not take back is high. On each target
// the cases are the steps of one session, each in a directory of its own
// filled before the host is opened, and one undo of the session puts every
// directory back, as `agent undo` does after a run of many steps (a host
// opened per case paid a dial, the launcher's set-up and the home's link
// probe 94 times per target: ~10 of engine's ~20 minutes).
func TestShellCommandUndo(t *testing.T) {
	localState(t)
	d, targets := undoTargets(t)
	stateDir, err := statedir.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			dirs, shown, before := make([]string, len(shellUndoCases)), make([]string, len(shellUndoCases)), make([]map[string]string, len(shellUndoCases))
			for i := range shellUndoCases {
				dir, err := os.MkdirTemp(tg.base, "undo-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				fillUndoDir(t, dir)
				dirs[i], shown[i], before[i] = dir, dir, snapshot(t, dir)
				// as the command names it: from ~ in the SSH user's home (root's is a system path)
				if rel, ok := strings.CutPrefix(dir, d.Home+"/"); ok && strings.HasPrefix(tg.name, "ssh") {
					shown[i] = "~/" + rel
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			h, err := engine.Open(ctx, tg.target, engine.DialOptions{}, engine.HostOptions{
				Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: tg.enf})
			if err != nil {
				t.Fatal(err)
			}
			ran := false
			for i, tc := range shellUndoCases {
				cmd := strings.ReplaceAll(tc.cmd, "DIR", shown[i])
				r, err := h.Executor().RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}})
				if err != nil {
					h.Close()
					t.Fatalf("%d: %s: %v", i, cmd, err)
				}
				got := snapshot(t, dirs[i])
				switch {
				case tc.high:
					if r.Risk.Level != safety.High || r.Status != "denied" {
						t.Errorf("%d: %s: %s, %s (%v), want high and denied", i, cmd, r.Risk.Level, r.Status, r.Risk.Reasons)
					}
					if fmt.Sprint(got) != fmt.Sprint(before[i]) {
						t.Errorf("%d: %s changed files without approval:\n%v\n%v", i, cmd, before[i], got)
					}
				case r.Status != "ok" || r.Risk.Level != safety.Medium || len(r.Journaled) == 0:
					t.Errorf("%d: %s: %s %s journaled %v: %s (%v)", i, cmd, r.Status, r.Risk.Level, r.Journaled, r.Observation, r.Risk.Reasons)
				case fmt.Sprint(got) == fmt.Sprint(before[i]):
					t.Errorf("%d: %s changed nothing", i, cmd)
				default:
					ran = true
				}
			}
			name, session := h.Name, h.Session
			h.Close()
			if !ran {
				t.Fatal("no case ran")
			}
			tr, err := engine.Dial(ctx, tg.target, engine.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if _, err := engine.Undo(ctx, tr, stateDir, session, name, false, nil); err != nil {
				t.Fatalf("undo: %v", err)
			}
			for i, tc := range shellUndoCases {
				if got := snapshot(t, dirs[i]); fmt.Sprint(got) != fmt.Sprint(before[i]) {
					t.Errorf("%d: after %s and undo:\n got %v\nwant %v", i, strings.ReplaceAll(tc.cmd, "DIR", shown[i]), got, before[i])
				}
			}
		})
	}
}

// TestShellUndoNeverClobbers: a file changed again after the session's
// command changed it is not overwritten by undo without force.
func TestShellUndoNeverClobbers(t *testing.T) {
	localState(t)
	dir := t.TempDir()
	fillUndoDir(t, dir)
	f := filepath.Join(dir, "data.txt")
	ctx := context.Background()
	h, err := engine.Open(ctx, engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, engine.HostOptions{
		Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"echo one > " + f, "rm -f " + dir + "/other.txt"} {
		if r, err := h.Executor().RunStep(ctx, planner.Step{Tool: "execute_command", Parameters: map[string]any{"command": cmd}}); err != nil || r.Status != "ok" {
			t.Fatalf("%s: %v %+v", cmd, err, r)
		}
	}
	name, session := h.Name, h.Session
	h.Close()
	if err := os.WriteFile(f, []byte("newer work\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	tr, err := engine.Dial(ctx, engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stateDir, _ := statedir.Dir()
	_, err = engine.Undo(ctx, tr, stateDir, session, name, false, nil)
	if err == nil || !strings.Contains(err.Error(), "changed since session") {
		t.Fatalf("undo over a newer change: %v", err)
	}
	if b, _ := os.ReadFile(f); string(b) != "newer work\n" {
		t.Errorf("newer work clobbered: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "other.txt")); err != nil || string(b) != "other\n" {
		t.Errorf("the removed file was not put back: %q %v", b, err)
	}
	if _, err := engine.Undo(ctx, tr, stateDir, session, name, true, nil); err != nil {
		t.Fatalf("undo --force: %v", err)
	}
	if b, _ := os.ReadFile(f); string(b) != "precious\n" {
		t.Errorf("forced undo: %q", b)
	}
}
