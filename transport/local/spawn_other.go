//go:build !linux

package local

import (
	"context"
	"errors"
	"io"
)

// child: elsewhere than Linux every command goes through os/exec.
type child struct{ pid int }

var errNoRaw = errors.New("not started without os/exec")

func rawStarts() bool { return false }

func dedupEnv(env []string) ([]string, bool) { return env, false }

func spawn(path string, argv, env []string, dir string) (*child, error) { return nil, errNoRaw }

func (c *child) wait(ctx context.Context, stdout, stderr io.Writer, inline bool) (int, error) {
	return -1, errNoRaw
}

func exitStatus(status int) int { return status }
