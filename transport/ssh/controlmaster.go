package ssh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/autoshell/agent/transport/sshmux"
)

// dialMaster returns a connection carried by the operator's live
// ControlMaster for cfg (its ControlPath), or nil when agent dials its own.
// As with ssh, a master is used when ControlMaster is no (the default),
// auto or autoask; agent never starts one. No key exchange and no login
// happen: the master made them, and the host key is the one the master
// verified (docs/decisions.md, "The operator's ControlMaster"). A socket
// that is not the operator's, a stale socket, a master that refuses, and
// ControlMaster yes or ask are named in a warning; a missing socket is
// not (ssh is silent then too).
func dialMaster(ctx context.Context, cfg *HostConfig, opts Options) *conn {
	if cfg.ControlPath == "" {
		return nil
	}
	if cfg.ControlMaster == "true" || cfg.ControlMaster == "ask" {
		opts.Warn(fmt.Sprintf("%s: ControlMaster %s: agent starts no master, and with this setting ssh uses none either; agent dials its own connection", describe(cfg), sshYes(cfg.ControlMaster)))
		return nil
	}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = defaultConnectTimeout
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := sshmux.Dial(mctx, cfg.ControlPath)
	if err == nil {
		return newConn(client, nil)
	}
	if ctx.Err() == nil && !errors.Is(err, fs.ErrNotExist) {
		opts.Warn(fmt.Sprintf("%s: not using the ControlMaster (%v); agent dials its own connection", describe(cfg), err))
	}
	return nil
}

// sshYes is a ControlMaster value as a user writes it.
func sshYes(v string) string {
	if v == "true" {
		return "yes"
	}
	return v
}
