// Package confinetest builds the agent-launch launcher for tests, so that
// tests run from a clean clone (no `make build`) confine SSH hosts too.
package confinetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/autoshell/agent/confine"
)

var (
	once  sync.Once
	built []byte
	err   error
)

// Launcher builds cmd/agent-launch for linux on this machine's
// architecture (once per test process) and returns it as a
// confine.LauncherFunc; other architectures are not built.
func Launcher(t testing.TB) confine.LauncherFunc {
	t.Helper()
	once.Do(func() {
		dir, derr := os.MkdirTemp("", "agent-launch-test-")
		if derr != nil {
			err = derr
			return
		}
		defer os.RemoveAll(dir)
		exe := filepath.Join(dir, "agent-launch")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", exe, "github.com/autoshell/agent/cmd/agent-launch")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if out, cerr := cmd.CombinedOutput(); cerr != nil {
			err = fmt.Errorf("build agent-launch: %v\n%s", cerr, out)
			return
		}
		built, err = os.ReadFile(exe)
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(arch string) ([]byte, error) {
		if arch != runtime.GOARCH {
			return nil, fmt.Errorf("no launcher for linux/%s in tests", arch)
		}
		return built, nil
	}
}
