package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// secretSpec is the safe level's secrets part as engine.SpecFor makes it,
// with the default lists' essentials.
func secretSpec(home string, findIn ...string) Spec {
	return Spec{
		NoRead:   []string{home + "/.ssh"},
		Public:   []string{home + "/.ssh/known_hosts"},
		HideDots: []string{home},
		DotsOK:   []string{".bashrc", ".profile", ".config", ".local", ".vimrc", ".gitconfig"},
		FindIn:   append([]string{home}, findIn...),
		Secrets: []string{"id_*", "*.pem", "*.key", "*.p12", ".env", ".env.*", "*credentials*", ".netrc", ".npmrc",
			".pypirc", ".my.cnf", ".*history", "keyrings"},
	}
}

func mkfile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realisticHome makes a home like a developer's: start-up files, a dozen
// dot-directories, .config with apps, projects with sources, a
// node_modules tree and a .git each, and a few secrets in odd places;
// about n files in all.
func realisticHome(t testing.TB, home string, n int) {
	t.Helper()
	for _, f := range []string{".bashrc", ".profile", ".vimrc", ".gitconfig", ".bash_history", ".npmrc", ".lesshst", ".viminfo",
		".ssh/id_ed25519", ".ssh/known_hosts", ".cache/pip/x", ".mozilla/firefox/p/cookies.sqlite", ".docker/config.json"} {
		mkfile(t, filepath.Join(home, f), "x\n")
	}
	for i := range 12 {
		mkfile(t, filepath.Join(home, ".config", fmt.Sprintf("app%d", i), "config.toml"), "a = 1\n")
	}
	mkfile(t, filepath.Join(home, ".local/share/keyrings/login.keyring"), "k\n")
	made := 30
	for p := 0; made < n; p++ {
		proj := filepath.Join(home, "src", fmt.Sprintf("proj%d", p))
		mkfile(t, filepath.Join(proj, ".git", "HEAD"), "ref\n")
		mkfile(t, filepath.Join(proj, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
		for d := range 8 {
			for f := range 10 {
				mkfile(t, filepath.Join(proj, "pkg", fmt.Sprintf("d%d", d), fmt.Sprintf("f%d.go", f)), "package x\n")
			}
		}
		for m := range 10 {
			for f := range 10 {
				mkfile(t, filepath.Join(proj, "node_modules", fmt.Sprintf("m%d", m), "lib", fmt.Sprintf("f%d.js", f)), "x\n")
			}
		}
		made += 182
		if p%3 == 0 {
			mkfile(t, filepath.Join(proj, ".env"), "DB_PASSWORD=x\n")
			made++
		}
	}
	mkfile(t, filepath.Join(home, "work", "certs", "server.key"), "KEY\n")
	mkfile(t, filepath.Join(home, "Documents", "notes.txt"), "n\n")
}

func TestSecretsFound(t *testing.T) {
	home := t.TempDir()
	realisticHome(t, home, 600)
	cwd := t.TempDir()
	mkfile(t, filepath.Join(cwd, "deploy", "config", ".env.production"), "TOKEN=x\n")
	mkfile(t, filepath.Join(cwd, "deploy", "README"), "r\n")
	rs := Compile(secretSpec(home, cwd))
	for _, p := range []string{".npmrc", ".bash_history", ".lesshst", ".viminfo", ".cache/pip/x", ".mozilla/firefox/p/cookies.sqlite",
		".docker/config.json", ".ssh/id_ed25519", ".local/share/keyrings/login.keyring", "work/certs/server.key", "src/proj0/.env"} {
		if rs.Allows(filepath.Join(home, p), false) {
			t.Errorf("~/%s is readable", p)
		}
	}
	if rs.Allows(filepath.Join(cwd, "deploy/config/.env.production"), false) {
		t.Error("the working directory's .env.production is readable")
	}
	for _, p := range []string{".bashrc", ".profile", ".gitconfig", ".config/app3/config.toml", ".ssh/known_hosts", "src/proj1/pkg/d1/f1.go",
		"src/proj0/node_modules/m1/lib/f1.js", "Documents/notes.txt", "src/proj0/.git/HEAD"} {
		if !rs.Allows(filepath.Join(home, p), false) {
			t.Errorf("~/%s is not readable", p)
		}
	}
	if !rs.Allows(filepath.Join(cwd, "deploy/README"), false) || !rs.Allows("/etc/passwd", false) {
		t.Error("benign files beside the secrets are not readable")
	}
	// The repositories' hooks and configuration in the home are found,
	// for writes; not those of the working directory outside it.
	var w watcher
	_, git := secretSpec(home, cwd).found(&w)
	if !slices.Contains(git, filepath.Join(home, "src/proj0/.git/hooks")) || !slices.Contains(git, filepath.Join(home, "src/proj1/.git/config")) {
		t.Errorf("git hooks not found: %q", git)
	}
	// The explanation knows them by name.
	s := rs.Spec
	for _, p := range []string{home + "/.npmrc", home + "/.pypirc", home + "/x/y/.env", cwd + "/a.pem"} {
		if !s.Hides(p) {
			t.Errorf("Hides(%s) = false", p)
		}
	}
	for _, p := range []string{home + "/.bashrc", home + "/.config/x", home + "/a.txt", "/etc/ssl/certs/ca.pem"} {
		if s.Hides(p) {
			t.Errorf("Hides(%s) = true", p)
		}
	}
}

// TestSecretsLinked: a secret that is a link hides what it points to
// (a stow-style home whose .npmrc lives in ~/dotfiles).
func TestSecretsLinked(t *testing.T) {
	home := t.TempDir()
	mkfile(t, filepath.Join(home, "dotfiles", "npmrc"), "//registry/:_authToken=x\n")
	mkfile(t, filepath.Join(home, "dotfiles", "bashrc"), "rc\n")
	mkfile(t, filepath.Join(home, "dotfiles", "my-key"), "k\n")
	if err := os.Symlink("dotfiles/npmrc", filepath.Join(home, ".npmrc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "dotfiles", "my-key"), filepath.Join(home, "id_work")); err != nil {
		t.Fatal(err)
	}
	rs := Compile(secretSpec(home))
	if rs.Allows(filepath.Join(home, "dotfiles", "npmrc"), false) || rs.Allows(filepath.Join(home, "dotfiles", "my-key"), false) {
		t.Error("the target of a hidden link is readable")
	}
	if !rs.Allows(filepath.Join(home, "dotfiles", "bashrc"), false) {
		t.Error("~/dotfiles/bashrc is not readable")
	}
}

// TestSecretsStale: a secret appearing where the rules did not see one
// makes them stale — in the home, in a directory the walk watches, beside
// a secret found — and the next compilation hides it.
func TestSecretsStale(t *testing.T) {
	home := t.TempDir()
	realisticHome(t, home, 400)
	for _, p := range []string{".pypirc", "src/.npmrc", "src/proj0/.env.local", "src/proj1/.env", "work/certs/other.pem"} {
		rs := Compile(secretSpec(home))
		time.Sleep(10 * time.Millisecond)
		mkfile(t, filepath.Join(home, p), "secret\n")
		if !rs.Stale() {
			t.Errorf("~/%s appeared: the rules are not stale", p)
			continue
		}
		if fresh, _ := rs.Fresh(); fresh.Allows(filepath.Join(home, p), false) {
			t.Errorf("~/%s is readable after the rules were computed again", p)
		}
	}
	// What is not watched: the directories deep in a tree the walk read
	// (a new file there is found when the rules are next computed), so
	// that a step's check stays a few stats.
	rs := Compile(secretSpec(home))
	for _, st := range rs.Stamps {
		if strings.HasPrefix(st.Path, filepath.Join(home, "src/proj2/pkg")) {
			t.Errorf("a directory deep in a project is watched: %s", st.Path)
		}
	}
}

// TestSecretsWalkBounded: a home far larger than the walk's bound is
// walked within its bounds, shallow places first.
func TestSecretsWalkBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 25,000 files")
	}
	home := t.TempDir()
	mkfile(t, filepath.Join(home, "a", ".env"), "x\n")
	for d := range 250 {
		dir := filepath.Join(home, "big", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 100 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", f)), nil, 0o644)
		}
	}
	mkfile(t, filepath.Join(home, "big", "d249", "zz", "deep.key"), "k\n")
	var w watcher
	start := time.Now()
	got, _ := secretSpec(home).found(&w)
	took := time.Since(start)
	if !slices.Contains(got, filepath.Join(home, "a", ".env")) {
		t.Errorf("the shallow secret was not found: %q", got)
	}
	// The bounds, not the clock (a loaded machine's scheduler is not the
	// walk's): past walkEntries the last directory is not reached, and a
	// walk whose deadline has passed stops at its next check.
	if slices.Contains(got, filepath.Join(home, "big", "d249", "zz", "deep.key")) {
		t.Errorf("the walk went past %d entries: %q", walkEntries, got)
	}
	late := finder{s: secretSpec(home), names: newNameMatcher(secretSpec(home).Secrets), w: &w, seen: map[string]bool{},
		deadline: time.Now().Add(-time.Second), maxEntries: walkEntries, maxDepth: walkDepth, watchTo: watchDepth}
	late.walk(resolve(home))
	if late.entries > 512 {
		t.Errorf("a walk past its deadline read %d entries, want it stopped at its first check (256)", late.entries)
	}
	t.Logf("25,000 entries: walk %v (bound %v), found %d", took, walkTime, len(got))
}

// TestSecretsCost measures a realistic home's compilation with and
// without the secrets found: time, rules, stamps and a staleness check.
func TestSecretsCost(t *testing.T) {
	home := t.TempDir()
	realisticHome(t, home, 3000)
	time.Sleep(settle) // no stamp Hot: a check is what a step pays
	base := secretSpec(home)
	base.HideDots, base.FindIn = nil, nil
	for _, c := range []struct {
		name string
		s    Spec
	}{{"listed only", base}, {"found", secretSpec(home)}} {
		start := time.Now()
		rs := Compile(c.s)
		took := time.Since(start)
		start = time.Now()
		const checks = 200
		for range checks {
			rs.Stale()
		}
		t.Logf("%s: compile %v, %d rules, %d stamps, staleness check %v", c.name, took, len(rs.Rules), len(rs.Stamps), time.Since(start)/checks)
	}
	files := 0
	filepath.WalkDir(home, func(_ string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			files++
		}
		return nil
	})
	t.Logf("home of %d files; load %s", files, strings.Fields(readLoad())[0])
}

func readLoad() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b) + " ?"
}
