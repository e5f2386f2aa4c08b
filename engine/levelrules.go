package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/explain"
	"github.com/autoshell/agent/transport"
)

// maxRulesFile bounds a level's rules read back from the host.
const maxRulesFile = 16 << 20

// LevelBlocked is the observation for a file tool of a step confined at
// level that would read (or, with write, write or create; with dir, list)
// real — its path
// with the links resolved on the host — where the rules a shell step of
// that level runs under do not allow it: the very rules files the
// launcher or the confined worker applies, read back from the host, so
// the file tools obey what the kernel enforces (issue 26); on this
// machine, the rulesets the confined thread holds. "" when they
// allow it, at confine.None, and on a host that does not enforce (the
// classifier alone holds both alike). The error refuses the step.
func (h *confiner) LevelBlocked(ctx context.Context, level confine.Level, write, dir bool, real string) (string, error) {
	if level == confine.None || h.o.LevelsOff {
		return "", nil
	}
	c, err := h.Confine(ctx, level)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	home := h.home
	h.mu.Unlock()
	if c.Thread != nil {
		// This machine: the rules the confined thread holds, compiled
		// again first when stale, as its next command would.
		if _, err := c.Thread.Current(0); err != nil {
			return "", fmt.Errorf("confine: the %s step's rules: %w", level, err)
		}
		_, rss := c.Thread.Rules()
		for _, rs := range rss {
			if !allows(rs, write, dir, real) {
				return fileBlocked(level, write, real, home), nil
			}
		}
		return "", nil
	}
	for renewed := false; ; renewed = true {
		ok, err := h.filesAllow(ctx, c.Wrap, write, dir, real)
		switch {
		case err != nil:
			return "", fmt.Errorf("confine: the %s step's rules: %w", level, err)
		case ok:
			return "", nil
		case renewed:
			if !write && h.kernelReads(ctx, c.Wrap, dir, real) {
				return "", nil
			}
			return fileBlocked(level, write, real, home), nil
		}
		// The files may be stale (kept from an earlier session, or a
		// directory made since): a command under them renews them, as
		// the launcher and the served worker write fresh rules back.
		if _, err := h.tr.Run(ctx, transport.Command{Wrap: c.Wrap, Command: "true"}); err != nil {
			return "", fmt.Errorf("confine: renew the %s step's rules: %w", level, err)
		}
	}
}

// kernelReads asks the kernel itself whether a shell step under wrap may
// read real (list it, with dir): a command that opens it for reading and
// reads nothing. The rules files read back can lag behind the rules the
// host's confined worker holds: it patches them in memory when a
// directory changed (a directory a medium step made this session, under
// rules kept from an earlier one) and writes them back later, so a read
// the kernel would allow must not be refused on their word alone. Writes
// are not probed: opening a file for writing may create it.
func (h *confiner) kernelReads(ctx context.Context, wrap []string, dir bool, real string) bool {
	q := shellQuote(real)
	probe := "[ -f " + q + " ] && head -c0 -- " + q // never a fifo's open, which waits
	if dir {
		probe = "[ -d " + q + " ] && ls -a -- " + q + " >/dev/null"
	}
	res, err := h.tr.Run(ctx, transport.Command{Wrap: wrap, Command: probe})
	return err == nil && res.ExitCode == 0
}

// filesAllow reports whether every rules file of wrap allows the access.
func (h *confiner) filesAllow(ctx context.Context, wrap []string, write, dir bool, real string) (bool, error) {
	for i := 0; i+1 < len(wrap); i++ {
		if wrap[i] != confine.RulesFlag {
			continue
		}
		rs, err := h.readRules(ctx, wrap[i+1])
		if err != nil {
			return false, err
		}
		if !allows(rs, write, dir, real) {
			return false, nil
		}
	}
	return true, nil
}

// allows is the access of a file tool as the kernel decides it: a
// directory read is a listing (the tool reads the files in it one by
// one, each refused where a command's read would be).
func allows(rs confine.Ruleset, write, dir bool, real string) bool {
	if dir && !write {
		return rs.AllowsList(real)
	}
	return rs.Allows(real, write)
}

// readRules reads a rules file where the launcher reads it: on a remote
// host, as the launcher or the served worker last wrote it.
func (h *confiner) readRules(ctx context.Context, file string) (confine.Ruleset, error) {
	if h.tr.Host().Kind == "local" {
		rs, err := confine.ReadRuleset(file)
		rs, _ = rs.Fresh()
		return rs, err
	}
	var b bytes.Buffer
	if _, err := h.tr.ReadFile(ctx, file, &limited{w: &b, n: maxRulesFile}); err != nil {
		return confine.Ruleset{}, err
	}
	return confine.DecodeRuleset(b.Bytes())
}

// fileBlocked says what a file tool was refused, as the kernel would
// have refused a shell step of the level.
func fileBlocked(level confine.Level, write bool, real, home string) string {
	what := "read of " + explain.Short(real, home)
	if write {
		what = "write to " + explain.Short(real, home)
	}
	why := "no writes to protected files, no new names in a directory that holds one, no secrets"
	if level == confine.ReadOnly {
		why = "read-only, no secrets"
	}
	msg := "[blocked: " + what + " outside what a " + level.String() + " step may do (the kernel's rules for a " +
		level.String() + " shell step: " + why + ")"
	if dir := path.Dir(real); write && dir == home {
		msg += "; a new name directly in ~ must not start with \".\""
	}
	return msg + "; ask for approval or take another way]"
}

// limited fails a write past n bytes.
type limited struct {
	w io.Writer
	n int64
}

func (l *limited) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("over %d bytes", maxRulesFile)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
