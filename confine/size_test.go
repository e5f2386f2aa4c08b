package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// launcherPkg is the launcher agent sends to SSH hosts.
const launcherPkg = "github.com/autoshell/agent/cmd/agent-launch"

// heavyPackages are what made the launcher 2.6 MB: none may come back
// into its imports (docs/decisions.md, "The launcher kept small"). An
// imported package costs its initialisation even where nothing calls it
// (crypto/sha256 alone: 168 KB).
var heavyPackages = []string{"fmt", "encoding/json", "encoding/hex", "regexp", "os/exec", "path/filepath", "crypto", "log", "net", "text/template"}

// maxLauncher bounds the launcher's size for linux/amd64, stripped as
// `make build` builds it (1,605,794 bytes before -serve, 1,667,234 with it;
// 1,798,306 before the served worker's state request, 1,802,402 with it:
// 3.3 KB of code that saves 4 round trips a journaled step, states.go;
// +28 KB for confine/dirnotify: the served worker's checks read no listed
// directory again on a busy host; +8 KB for the look request, states.go:
// a confined plan of commands opens no file session; 1,855,650 with a
// plan's static steps run as one batch, serve.go: one round trip for a
// host's static steps, not one a step; 1,863,842 with a Restrictor's
// threads reused, thread_linux.go, which the served worker links but
// does not use: agent's local step; 1,876,130 with the other accounts'
// homes read from /etc/passwd, accounts.go: their secrets were readable;
// 1,884,322 with a batch's levels built together, their paths opened once,
// serve.go and landlock_linux.go: a third of the rules' build);
// 1,892,514 with the other accounts' secrets below their top and the
// medium filter's set-id blocks, accounts.go and seccomp_linux.go: another
// account's .env and a set-user-ID file made at medium); 1,896,610 with
// the rules file keeping account-homes, encoding.go: an SSH host's served
// worker dropped the other accounts' homes at its first recompile (a few
// bytes past a 4 KB page; session 16's medium filter, openat2, io_uring,
// xattrs and the look's link count fit in the page before).
const maxLauncher = 1_896_700

// TestLauncherStaysSmall: the launcher imports none of heavyPackages and
// stays under maxLauncher bytes.
func TestLauncherStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", launcherPkg).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, h := range heavyPackages {
			if p == h || strings.HasPrefix(p, h+"/") {
				t.Errorf("the launcher imports %s (as %s)", h, p)
			}
		}
	}
	exe := filepath.Join(t.TempDir(), "agent-launch")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", exe, launcherPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxLauncher {
		t.Errorf("the launcher is %d bytes, more than %d: see what it links with `go build -ldflags=-dumpdep`"+
			" (os.Stat, os.Lstat, os.ReadDir, os.ReadFile, os.Rename and os.StartProcess make an fs.FileInfo,"+
			" which links time's formatting: ~90 KB; fsys_linux.go and syscall.ForkExec do not)", fi.Size(), maxLauncher)
	}
	t.Logf("linux/amd64 launcher: %d bytes", fi.Size())
}
