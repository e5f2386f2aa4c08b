package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStepEnviron(t *testing.T) {
	in := []string{"PATH=/bin", "GITHUB_TOKEN=t", "AWS_SECRET_ACCESS_KEY=k", "PWD=/h", "OLDPWD=/", "DB_PASSWORD=p",
		"JAVA_HOME=/j", "SSH_AUTH_SOCK=/s", "api_key=x", "LD_LIBRARY_PATH=/l", "noequals"}
	want := []string{"PATH=/bin", "PWD=/h", "OLDPWD=/", "JAVA_HOME=/j", "LD_LIBRARY_PATH=/l", "noequals"}
	if got := stepEnviron(in); !slices.Equal(got, want) {
		t.Errorf("stepEnviron = %q, want %q", got, want)
	}
}

// The prologue unsets the secret-named variables in every shell a host's
// /bin/sh may be, whatever the values hold (newlines, quotes, globs,
// command substitutions: never evaluated), and leaves globbing and IFS
// as the shell had them.
func TestSecretEnvPrologue(t *testing.T) {
	shells := [][]string{{"dash"}, {"bash", "--posix"}, {"bash"}, {"busybox", "sh"}, {"sh"}}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=/h", "AWS_SECRET_ACCESS_KEY=k1", "github_token=t2",
		"ML=line1\nFAKE_TOKEN=x\nexport DB_PASS", "FAKE_TOKEN=real", "DB_PASSWORD=a b * $(touch pwned) `touch pwned` 'q\" c",
		"JAVA_HOME=/opt/jdk", "SSH_AUTH_SOCK=/s", "Session_Id=9", "PWDX=p"}
	script := SecretEnvPrologue() + `env | cut -d= -f1 | sort | tr '\n' ' '; echo; echo "glob=$(echo /e*c)"; printf 'ifs=[%s]\n' "$IFS"; printenv FAKE_TOKEN || echo gone`
	ran := 0
	for _, sh := range shells {
		path, err := exec.LookPath(sh[0])
		if err != nil {
			continue
		}
		ran++
		dir := t.TempDir()
		cmd := exec.Command(path, append(sh[1:], "-c", script)...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", sh, err, out)
		}
		// ML's value spans lines of env's output: FAKE_TOKEN is checked by printenv.
		names, rest, _ := strings.Cut(string(out), "\n")
		for _, gone := range []string{"AWS_SECRET_ACCESS_KEY", "github_token", "DB_PASSWORD", "SSH_AUTH_SOCK", "Session_Id", "PWDX"} {
			if slices.Contains(strings.Fields(names), gone) {
				t.Errorf("%v: %s is still set: %s", sh, gone, names)
			}
		}
		for _, kept := range []string{"PATH", "HOME", "JAVA_HOME", "ML"} {
			if !slices.Contains(strings.Fields(names), kept) {
				t.Errorf("%v: %s was dropped: %s", sh, kept, names)
			}
		}
		for _, want := range []string{"glob=/etc\n", "ifs=[ \t\n]\n", "gone\n"} {
			if !strings.Contains(rest, want) {
				t.Errorf("%v: want %q in:\n%s", sh, want, rest)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("%v: a value was evaluated", sh)
		}
	}
	if ran == 0 {
		t.Skip("no shell found")
	}
}
