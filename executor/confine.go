package executor

import (
	"context"
	"slices"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// confineLevel is how far the commands of a step at risk l, allowed by d,
// may reach: a person's approval, or high risk allowed by --approve all,
// leaves them unconfined; a safe step is read-only; a medium one allowed
// by policy may write all but the protected hierarchies.
func confineLevel(l safety.Level, d safety.Decision) confine.Level {
	if d.By == safety.ByUser {
		return confine.None
	}
	switch l {
	case safety.Safe:
		return confine.ReadOnly
	case safety.Medium:
		return confine.NoProtected
	}
	return confine.None
}

// confined returns the transport the step's tool runs through: the host's,
// or one whose commands run under the Confiner's launcher.
func (e *Executor) confined(ctx context.Context, tr transport.Transport, l confine.Level) (transport.Transport, error) {
	if e.cfg.Confiner == nil || l == confine.None {
		return tr, nil
	}
	wrap, err := e.cfg.Confiner.Wrap(ctx, l)
	if err != nil || wrap == nil {
		return tr, err
	}
	return wrapped{Transport: tr, wrap: wrap}, nil
}

// wrapped runs every command under wrap (after any wrapper the command
// already has, such as sudo): sudo → launcher → shell.
type wrapped struct {
	transport.Transport
	wrap []string
}

func (w wrapped) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	c.Wrap = append(slices.Clone(c.Wrap), w.wrap...)
	return w.Transport.Run(ctx, c)
}

// HomeDir is the host's, without a command when the transport knows it.
func (w wrapped) HomeDir(ctx context.Context) (string, error) {
	if hd, ok := w.Transport.(tools.HomeDirer); ok {
		return hd.HomeDir(ctx)
	}
	res, err := w.Transport.Run(ctx, transport.Command{Command: `printf '%s\n' "$HOME"`})
	if err != nil {
		return "", err
	}
	return trimNewline(res.Stdout), nil
}
