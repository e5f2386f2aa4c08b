// Package launchers finds the agent-launch executables agent sends to SSH
// hosts (package confine): embedded in agent by `make build`, else beside
// the agent executable.
package launchers

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

//go:embed embedded
var embedded embed.FS

// Name is the file name of the launcher for linux/arch.
func Name(arch string) string { return "agent-launch-linux-" + arch }

// Find returns agent-launch for linux/arch: the one `make build` embedded,
// else the file Name(arch) in the directory of the running executable. It
// is read once per process and the same bytes returned every time: they
// must not be changed.
func Find(arch string) ([]byte, error) {
	cache.Lock()
	defer cache.Unlock()
	if c, ok := cache.found[arch]; ok {
		return c.b, c.err
	}
	b, err := find(arch)
	if cache.found == nil {
		cache.found = map[string]found{}
	}
	cache.found[arch] = found{b, err}
	return b, err
}

type found struct {
	b   []byte
	err error
}

var cache struct {
	sync.Mutex
	found map[string]found
}

func find(arch string) ([]byte, error) {
	if b, err := embedded.ReadFile("embedded/" + Name(arch)); err == nil {
		return b, nil
	}
	exe, err := os.Executable()
	if err == nil {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), Name(arch)))
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("launcher for linux/%s: %w", arch, err)
		}
	}
	return nil, fmt.Errorf("this agent was built without the launcher for linux/%s (`go install` and `go build` build none: `make build` embeds it, or put %s beside the agent executable)", arch, Name(arch))
}
