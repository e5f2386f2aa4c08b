// Package corpustest gives tests outside package safety its attack corpus
// (safety/testdata: attacks.txt and gtfobins.json) aimed at a scratch home,
// the files those attacks aim at, and snapshots of a tree that prove
// nothing under it changed. It is test support: nothing in agent imports
// it but tests.
package corpustest

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Entry is one attack: its class in attacks.txt ("writer", "path", …;
// "medium-…" for the entries rated medium on purpose; "gtfobins" for
// GTFOBins' techniques) and the command, aimed at the home given.
type Entry struct {
	Class   string
	Command string
}

// Medium reports whether the entry is one the classifier rates medium on
// purpose (an unknown variable, an alias, a write to an ordinary file):
// every other entry must be rated high.
func (e Entry) Medium() bool { return strings.HasPrefix(e.Class, "medium") }

// Dir is package safety's testdata directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Attacks reads attacks.txt and then gtfobins.json, their "/home/u"
// replaced by home.
func Attacks(t testing.TB, home string) []Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), "attacks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		class, cmd, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(class, "#") {
			continue
		}
		out = append(out, Entry{class, strings.ReplaceAll(cmd, "/home/u", home)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(Dir(), "gtfobins.json"))
	if err != nil {
		t.Fatal(err)
	}
	var es []struct{ Code string }
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		out = append(out, Entry{"gtfobins", strings.ReplaceAll(e.Code, "/home/u", home)})
	}
	return out
}

// Safe reports whether the entry is one the classifier rates safe on
// purpose ("safe-env": the step reads its own environment, an
// allow-list): it runs unattended, and what it prints is judged.
func (e Entry) Safe() bool { return strings.HasPrefix(e.Class, "safe") }

// Split is the corpus's commands: those that must be rated high, and the
// medium ones (the safe ones are neither: SafeOnes).
func Split(es []Entry) (high, medium []string) {
	for _, e := range es {
		if e.Safe() {
			continue
		}
		if e.Medium() {
			medium = append(medium, e.Command)
		} else {
			high = append(high, e.Command)
		}
	}
	return high, medium
}

// SafeOnes is the corpus's commands rated safe on purpose.
func SafeOnes(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.Safe() {
			out = append(out, e.Command)
		}
	}
	return out
}

// Secrets are the secret values Home writes and the one EnvKeys hold: no
// step's output may hold them.
var Secrets = []string{"SECRET-SSH-KEY-5b2d", "SECRET-AWS-0e4f", "SECRET-NPM-61c3", "SECRET-HUB-9a07", "SECRET-ENV-3d8e"}

// EnvKeys are agent's own keys, as an operator's environment holds them
// (the last of Secrets): a test sets them in agent's environment, and no
// step may see them.
var EnvKeys = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_API_KEY"}

// Home fills home with what the attacks aim at: start-up files, an SSH
// key and authorized_keys, cloud credentials, agent's own config and
// audit log, ~/important with the script the attacks run, and ~/work's
// ordinary files.
func Home(t testing.TB, home string) {
	t.Helper()
	writeHome(t, home, func(string) bool { return true })
}

// homeFiles is what Home writes, by path under the home.
var homeFiles = map[string]string{
	".bashrc": "# rc\n", ".profile": "# profile\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA ok\n",
	".ssh/id_rsa":               "-----BEGIN PRIVATE KEY-----\n" + Secrets[0] + "\n",
	".aws/credentials":          "[default]\naws_secret_access_key = " + Secrets[1] + "\n",
	".npmrc":                    "//registry.npmjs.org/:_authToken=" + Secrets[2] + "\n",
	".config/hub":               "github.com:\n- oauth_token: " + Secrets[3] + "\n",
	".config/agent/config.yaml": "safety: {}\n", ".local/state/agent/audit.log": "{}\n",
	"important/a.txt": "keep\n", "important/x.sh": "#!/bin/sh\nrm -rf \"$HOME/important\"\n",
	// ~/work: ordinary files a medium entry may change, and undo
	// must put back (Work).
	"work/f": "abc\n", "work/sub/g": "a b\n", "work/sub/deep/h": "h\n",
}

// writeHome writes the files of homeFiles that want picks.
func writeHome(t testing.TB, home string, want func(rel string) bool) {
	t.Helper()
	for name, content := range homeFiles {
		if !want(name) {
			continue
		}
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// ResetWork puts back what a medium entry may change in a home Home
// filled (MediumMayChange: ~/work, ~/important, plain names directly in
// ~) as Home (or ToolHome) left it, so that one entry's leftovers are
// not the next's; the protected files are left as they are.
func ResetWork(t testing.TB, home string) {
	t.Helper()
	tool := toolLayout(home)
	des, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range des {
		p := filepath.Join(home, d.Name())
		if !MediumMayChange(home, p) {
			continue
		}
		os.Chmod(p, 0o700) // an entry may have closed it
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(q, 0o700)
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	writeHome(t, home, func(rel string) bool { return MediumMayChange(home, filepath.Join(home, rel)) })
	if tool {
		toolExtras(t, home) // ~/work's links, ~/dotfiles, ~/src
	}
}

// Work is the scratch home's directory of ordinary files (Home fills it):
// what the corpus's medium entries may change at --approve medium, and
// agent undo must put back.
func Work(home string) string { return filepath.Join(home, "work") }

// Changed is the paths whose entry differs between two Trees (changed,
// gone or new), sorted.
func Changed(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if w, ok := after[p]; !ok || w != v {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Tree records every file, directory and link under root: its mode, and
// a regular file's SHA-256 or a link's target. A part that cannot be read
// is recorded as the error, so that an attack making it unreadable shows
// as a change.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				v += " error " + err.Error()
			} else {
				v += fmt.Sprintf(" %x", sha256.Sum256(b))
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[p] = v
		return nil
	})
	return out
}

// Same reports (t.Errorf, prefixed with what) every entry of before that
// changed or went in after, and every entry that appeared.
func Same(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s changed: %q → %q", what, p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// systemCaps are the capabilities that change the system beyond a step's
// files: CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_MODULE, CAP_SYS_ADMIN,
// CAP_SYS_BOOT, CAP_SYS_TIME and CAP_SYSLOG.
const systemCaps = 1<<12 | 1<<13 | 1<<16 | 1<<21 | 1<<22 | 1<<25 | 1<<34

// CheckCapsDropped reads the CapEff and CapBnd lines of a confined probe
// step's /proc/self/status (its output of
// `grep -E '^Cap(Eff|Bnd)' /proc/self/status`) and returns an error
// unless both are there and hold none of the system capabilities: a test
// that runs attacks for real as root must not run them otherwise (one
// that did set this machine's clock and host name and took its network
// down).
func CheckCapsDropped(status string) error {
	seen := 0
	for _, l := range strings.Split(strings.TrimSpace(status), "\n") {
		name, v, ok := strings.Cut(l, ":")
		if !ok || (name != "CapEff" && name != "CapBnd") {
			continue
		}
		var n uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%x", &n); err != nil {
			return fmt.Errorf("capabilities %q: %v", l, err)
		}
		if n&systemCaps != 0 {
			return fmt.Errorf("a confined step still holds system capabilities (%s)", strings.TrimSpace(l))
		}
		seen++
	}
	if seen != 2 {
		return fmt.Errorf("the probe read no CapEff and CapBnd (%q)", status)
	}
	return nil
}
