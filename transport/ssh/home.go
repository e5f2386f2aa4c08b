package ssh

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/autoshell/agent/transport"
)

// HomeDir is the home directory "~" means on the host (the transport.HomeDirer
// capability): the $HOME commands see, which sshd's SetEnv or the user's
// environment file may set apart from the password database's home that
// SFTP starts in. The worker shell prints it when it starts, so that
// resolving "~" costs no command of its own (one process start per host of
// a batch, bench/fanout); without a worker it is one command. It is found
// once per Transport.
func (t *Transport) HomeDir(ctx context.Context) (string, error) {
	t.hmu.Lock()
	defer t.hmu.Unlock()
	if t.home != "" {
		return t.home, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	home := t.workerHome(ctx)
	if home == "" {
		res, err := t.Run(ctx, transport.Command{Command: `printf '%s\n' "$HOME"`})
		if err != nil {
			return "", fmt.Errorf("home directory: %w", err)
		}
		home = strings.TrimSuffix(res.Stdout, "\n")
		if res.ExitCode != 0 || !path.IsAbs(home) || strings.ContainsRune(home, '\n') {
			return "", errors.New("home directory: $HOME on the host is not an absolute path")
		}
	}
	t.home = home
	return home, nil
}

// workerHome is the $HOME the worker shell reported, starting the worker
// when there is none yet; "" when there is no worker to ask.
func (t *Transport) workerHome(ctx context.Context) string {
	t.wmu.Lock()
	w := t.worker
	t.wmu.Unlock()
	if w != nil && w.home != "" {
		return w.home
	}
	// Asked first by a confined plan, whose next request is its 22 KB
	// set-up: no shell started ahead for it (startWorker); the first
	// step of an unconfined one starts its own, later ones get it.
	if w = t.takeWorker(ctx, true); w == nil {
		return ""
	}
	home := w.home
	t.releaseWorker(w)
	return home
}

// expandHome makes p absolute: "~" and relative paths are under the $HOME
// of commands once it is known (HomeDir asked, or a worker running: the
// executor asks before its first step), so that the file methods and
// commands agree on "~/x"; before that under sftpHome, where SFTP starts
// (the same unless sshd sets HOME apart). A file method starts no worker:
// a worker on a connection that is then cut fails its next command instead
// of dialling again.
func (t *Transport) expandHome(p string, sftpHome func() string) string {
	if strings.HasPrefix(p, "/") {
		return transport.ExpandHome(p, "")
	}
	t.hmu.Lock()
	home := t.home
	t.hmu.Unlock()
	if home == "" {
		t.wmu.Lock()
		if w := t.worker; w != nil {
			home = w.home
		}
		t.wmu.Unlock()
	}
	if home == "" && sftpHome != nil {
		home = sftpHome()
	}
	if home == "" {
		home = "." // not known: relative, where the SFTP server starts
	}
	return transport.ExpandHome(p, home)
}
