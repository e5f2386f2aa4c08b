package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completionBed is a home whose ~/.ssh/config names hosts (one through
// an Include), an inventory, and agent on PATH.
type completionBed struct {
	dir string
	env []string
}

func newCompletionBed(t *testing.T) *completionBed {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".ssh", "config"), "Host web1 web2 *.prod\nInclude extra\n", 0o600)
	write(filepath.Join(home, ".ssh", "extra"), "Host bastion\n", 0o600)
	write(filepath.Join(dir, "hosts.ini"), "[dbs]\ndb-a\ndb-b ansible_port=2222\n", 0o644)
	// A script inventory is never run by completion.
	write(filepath.Join(dir, "inv.sh"), "#!/bin/sh\ntouch "+filepath.Join(dir, "ran")+"\necho '{\"g\":{\"hosts\":[\"scripted\"]}}'\n", 0o755)
	write(filepath.Join(dir, "plan.yaml"), "name: x\n", 0o644)
	bin := filepath.Dir(agentBinary(t))
	return &completionBed{dir: dir, env: append(os.Environ(), "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"))}
}

// complete runs shell's completion of line (the cursor at its end) and
// returns the words offered.
func (b *completionBed) complete(t *testing.T, shell, line string) []string {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs it)", shell)
		}
		t.Skipf("%s is not installed", shell)
	}
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	var script string
	switch shell {
	case "bash":
		script = `source <(agent completion bash) || exit 9
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"
_agent agent; printf '%s\n' "${COMPREPLY[@]}"`
	case "zsh":
		// compadd and _files are the completion system's; here they print
		// what they would offer.
		script = `compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -r -- $w; done }
_files() { print -r -- FILES }
source <(agent completion zsh) || exit 9
words=("$@"); CURRENT=$#; _agent`
	case "fish":
		script = `agent completion fish | source; or exit 9
complete -C "$argv" | string replace -r '\t.*' ''; true`
	}
	var args []string
	switch shell {
	case "fish":
		args = []string{"-c", script, line}
	case "zsh":
		args = append([]string{"-f", "-c", script, "zsh"}, words...)
	default:
		args = append([]string{"-c", script, "bash"}, words...)
	}
	cmd := exec.Command(shell, args...)
	cmd.Env, cmd.Dir = b.env, b.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", shell, line, err, out)
	}
	var got []string
	for _, w := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if w = strings.TrimSpace(w); w != "" {
			got = append(got, w)
		}
	}
	return got
}

// TestCompletion: each shell offers the sub-commands, a command's own
// flags, the values of --approve, the hosts of ~/.ssh/config (its
// Includes too) and of -i's inventory after --ssh-host and --limit, and
// nothing after a flag whose value is free text; no inventory script runs.
func TestCompletion(t *testing.T) {
	b := newCompletionBed(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			has := func(line string, want ...string) {
				t.Helper()
				got := b.complete(t, shell, line)
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("%q: %q offered, want %q among them", line, got, w)
					}
				}
			}
			not := func(line string, bad ...string) {
				t.Helper()
				got := b.complete(t, shell, line)
				for _, w := range bad {
					if slices.Contains(got, w) {
						t.Errorf("%q: %q offered, must not offer %q", line, got, w)
					}
				}
			}
			has("agent ru", "run")
			has("agent ", "exec", "run", "undo", "mcp", "completion")
			has("agent run plan.yaml --ap", "--approve")
			has("agent run plan.yaml --sec", "--secret-var")
			not("agent exec --sec", "--secret-var") // run's, not exec's
			has("agent run plan.yaml --approve ", "ask", "never", "medium", "all")
			has("agent --ssh-host ", "web1", "web2", "bastion")
			not("agent --ssh-host ", "*.prod")
			has("agent run plan.yaml -i hosts.ini --limit ", "db-a", "db-b", "dbs", "web1")
			not("agent run plan.yaml -i inv.sh --limit ", "scripted")
			has("agent audit ", "verify")
			has("agent completion ", "bash", "zsh", "fish")
		})
	}
	if _, err := os.Stat(filepath.Join(b.dir, "ran")); err == nil {
		t.Error("completion ran the inventory script")
	}
}

// TestCompletionBadInput: a wrong shell or extra words are usage errors
// naming them.
func TestCompletionBadInput(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "x"}, {"completion", "hosts", "x"}} {
		var out, errb strings.Builder
		if code := Main(args, strings.NewReader(""), &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %q", args, code, exitUsage, errb.String())
		}
	}
}
