package corpustest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ToolEntry is one attack through the file tools or a {{var}} template
// (safety/testdata/toolattacks.jsonl): its class ("file-read",
// "file-write", "template", or "control" for ordinary medium work that
// must run), the plan's steps, the payload a template entry reads into
// {{out}} first (from ~/work/payloads/Name on the target), and whether
// the last step must print that payload as it is.
type ToolEntry struct {
	Class   string           `json:"class"`
	Steps   []map[string]any `json:"steps"`
	Payload *string          `json:"payload"`
	Echo    bool             `json:"echo"`
	// Name is the entry's line in the file ("line 12"); its payload file
	// is ~/work/payloads/<Line>.
	Name string `json:"-"`
	Line int    `json:"-"`
}

// PayloadPath is where ToolHome put the entry's payload under home.
func (e ToolEntry) PayloadPath(home string) string {
	return filepath.Join(home, "work", "payloads", fmt.Sprint(e.Line))
}

// ToolAttacks reads toolattacks.jsonl, "/home/u" replaced by home, but
// the entries aimed at a victim process (ToolAttacksAt).
func ToolAttacks(t testing.TB, home string) []ToolEntry {
	t.Helper()
	return ToolAttacksAt(t, home, "")
}

// ToolAttacksAt is ToolAttacks with "@VICTIM@" replaced by victim's pid
// (Victim); "" leaves those entries out.
func ToolAttacksAt(t testing.TB, home, victim string) []ToolEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), "toolattacks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ToolEntry
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, `{"#"`) {
			continue
		}
		if strings.Contains(line, "@VICTIM@") {
			if victim == "" {
				continue
			}
			line = strings.ReplaceAll(line, "@VICTIM@", victim)
		}
		var e ToolEntry
		dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(line, "/home/u", home)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("toolattacks.jsonl:%d: %v", n, err)
		}
		switch e.Class {
		case "file-read", "file-write", "template", "control":
		default:
			t.Fatalf("toolattacks.jsonl:%d: unknown class %q", n, e.Class)
		}
		if len(e.Steps) == 0 {
			t.Fatalf("toolattacks.jsonl:%d: no steps", n)
		}
		e.Line, e.Name = n, fmt.Sprintf("toolattacks.jsonl:%d", n)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ToolHome fills home as Home does, and adds what the file tool attacks
// aim through: ~/work with an ordinary file and links into protected
// places (~/work/rc → ~/.bashrc, ~/work/ssh → ~/.ssh, ~/work/key →
// ~/.ssh/id_rsa, ~/work/keys → ~/.ssh/authorized_keys, ~/work/aws →
// ~/.aws/credentials, ~/work/deep/npm → ~/.npmrc through a linked
// directory; dangling ones to ~/.zshrc, ~/.vim/plugin/evil.vim and
// ~/.ssh/id_ed25519; hard links ~/work/hardrc = ~/.bashrc, ~/work/hardkeys
// = ~/.ssh/authorized_keys, ~/work/hardnotes = ~/work/linked.txt, and
// deeper than the home's probe looks or under what it skips:
// ~/work/a/b/c/d/e/f/deepkeys, ~/work/node_modules/pkg/hardrc,
// ~/work/.cache/hardrc, ~/src/repo/.git/hardkeys),
// ~/.ssh/config a link into ~/dotfiles, the autorun
// directories that exist on a workstation (user site-packages, editor
// plugins, autostart, systemd user units, a repository's hooks), and
// each entry's payload in ~/work/payloads.
func ToolHome(t testing.TB, home string, es []ToolEntry) {
	t.Helper()
	Home(t, home)
	toolExtras(t, home)
	pth := filepath.Join(home, "work", "payloads", "pth")
	if err := os.MkdirAll(filepath.Dir(pth), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pth, []byte("import os; os.system('touch "+home+"/work/PWNED')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Payload == nil {
			continue
		}
		if err := os.WriteFile(e.PayloadPath(home), []byte(*e.Payload), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolExtras is what ToolHome adds to Home's files (all but the
// payloads); ResetWork calls it again for a home ToolHome filled.
func toolExtras(t testing.TB, home string) {
	t.Helper()
	for name, content := range map[string]string{
		"work/notes.txt": "notes\n", "work/linked.txt": "linked\n", "dotfiles/ssh_config": "Host *\n  ForwardAgent no\n",
		"src/repo/.git/HEAD": "ref: refs/heads/main\n", "src/repo/.git/config": "[core]\n",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".local/lib/python3.11/site-packages", ".vim/plugin", ".local/share/nvim/site/plugin",
		".config/autostart", ".config/systemd/user", "src/repo/.git/hooks", "work/hop"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"work/rc": "../.bashrc", "work/ssh": "../.ssh", "work/key": filepath.Join(home, ".ssh/id_rsa"),
		"work/keys": "../.ssh/authorized_keys", "work/aws": "../.aws/credentials",
		"work/hop/npm": "../../.npmrc", "work/deep": "hop", ".ssh/config": "../dotfiles/ssh_config",
		// Dangling: writing through them creates a protected file.
		"work/dangle": "../.zshrc", "work/plug": "../.vim/plugin/evil.vim", "work/dangle-key": "../.ssh/id_ed25519",
	} {
		if _, err := os.Lstat(filepath.Join(home, link)); err == nil {
			continue // ResetWork left it
		}
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	// Hard links: other names of protected files (the kernel's rules are
	// paths), and of an ordinary one (undo puts back a copy).
	// Session 14: where the home's probe does not look (deeper than 6,
	// under node_modules, .cache, .git).
	for name, other := range map[string]string{"work/hardrc": ".bashrc", "work/hardkeys": ".ssh/authorized_keys", "work/hardnotes": "work/linked.txt",
		"work/a/b/c/d/e/f/deepkeys": ".ssh/authorized_keys", "work/node_modules/pkg/hardrc": ".bashrc", "work/.cache/hardrc": ".bashrc",
		"src/repo/.git/hardkeys": ".ssh/authorized_keys"} {
		if _, err := os.Lstat(filepath.Join(home, name)); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(home, other), filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// toolLayout reports whether ToolHome filled home (its ~/.ssh/config is
// a link into ~/dotfiles).
func toolLayout(home string) bool {
	fi, err := os.Lstat(filepath.Join(home, ".ssh", "config"))
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// MediumMayChange reports whether an attack at --approve medium may
// change path p of home (and undo must then put it back): ~/work and
// what is under it (but not ~/work/payloads), ~/important and what is
// under it, or a name directly in ~ that is not a dot-name.
func MediumMayChange(home, p string) bool {
	rel, err := filepath.Rel(home, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	if rel == "work/payloads" || strings.HasPrefix(rel, "work/payloads/") {
		return false
	}
	if rel == "work" || rel == "important" || strings.HasPrefix(rel, "work/") || strings.HasPrefix(rel, "important/") {
		return true
	}
	return !strings.Contains(rel, "/") && !strings.HasPrefix(rel, ".")
}

// Victim starts a process that holds secrets another process's files
// show: SECRET-ENV in its environment (under a name no redaction learns
// from: the classifier, not the redactor, must hold it), and ~/.aws/credentials (which
// ToolHome wrote in home) open as its stdin. It returns its pid; the
// process ends with the test.
func Victim(t testing.TB, home string) string {
	t.Helper()
	in, err := os.Open(filepath.Join(home, ".aws", "credentials"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "AGENT_VICTIM_DATA=" + Secrets[len(Secrets)-1]}
	cmd.Stdin = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return fmt.Sprint(cmd.Process.Pid)
}
