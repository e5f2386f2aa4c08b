package mcpserver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// Reaping. A server killed by SIGKILL cannot kill what its calls were
// running: the commands run on, locally and on the SSH hosts. Each
// command's process group is in its session's record (session.RecProc,
// written when the transport learns it), and a session whose server died
// has no end record and no lock. The next `agent mcp` on this machine
// takes each such session's lock, kills on its host the groups still
// there, and ends the record ("interrupted", with a reaped record per
// group). A group is killed only when its leader still leads it and
// started within the dead session's life, after the command's record
// minus reapSlack: its ID, reused since by another group, is never
// killed. What it cannot check is kept: a group whose leader exited
// (its other processes run on), a command run as a become user (the
// login user may not signal it), a host without /proc.

// ReapTool is the tool name of the reaper's audit lines.
const ReapTool = "reap"

// reapSlack allows for the time between a command's start and its record,
// and for the rounding of ages to seconds on the host.
const reapSlack = 5

// reapTimeout bounds the reaping of one dead session (its host's dial).
const reapTimeout = time.Minute

// reapScript kills the groups its arguments name ("PGID:MINAGE:MAXAGE",
// ages in seconds) whose leader leads them still and is that old, and
// prints "PGID killed|gone|kept" for each. POSIX sh, Linux's /proc.
const reapScript = `read -r up _ < /proc/uptime || exit 0
up=${up%%.*}
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
for a in "$@"; do
	g=${a%%:*}; r=${a#*:}; lo=${r%%:*}; hi=${r#*:}
	if ! { read -r st < /proc/"$g"/stat; } 2>/dev/null; then echo "$g gone"; continue; fi
	st=${st##*) }
	set -- $st
	age=$((up - ${20} / hz))
	if [ "$3" != "$g" ] || [ "$age" -lt "$lo" ] || [ "$age" -gt "$hi" ]; then echo "$g kept"; continue; fi
	if kill -9 -"$g" 2>/dev/null; then echo "$g killed"; else echo "$g kept"; fi
done`

// reapDead reaps the sessions of dead servers (see above); it reports
// what it did through Warn.
func (s *Server) reapDead(ctx context.Context) {
	dir, err := statedir.Dir()
	if err != nil {
		return
	}
	infos, err := session.List(dir)
	if err != nil {
		s.o.Warn("reap: " + err.Error())
		return
	}
	var log *audit.Log // opened when a session is to be reaped
	defer func() {
		if log != nil {
			log.Close()
		}
	}()
	for _, in := range infos {
		// A dead server's session has no end record: it reads as
		// interrupted (done, failed: its server ended it; running: live).
		if in.Kind != session.KindMCP || in.State != session.StateInterrupted || ctx.Err() != nil {
			continue
		}
		if log == nil {
			path, err := statedir.AuditPath()
			if err == nil {
				log, err = audit.Open(path)
			}
			if err != nil {
				// Nothing is killed unlogged: the next start tries again.
				s.o.Warn("reap: " + err.Error() + "; nothing reaped")
				return
			}
		}
		sctx, cancel := context.WithTimeout(ctx, reapTimeout)
		s.reapSession(sctx, log, dir, in.ID)
		cancel()
	}
}

// reapSession reaps session id when its server died leaving commands.
func (s *Server) reapSession(ctx context.Context, log *audit.Log, dir, id string) {
	l, err := session.Append(dir, id)
	if err != nil {
		return // recording (a live server), or gone
	}
	defer l.Close()
	recs, err := session.ReadFile(session.Path(dir, id))
	if err != nil || len(recs) == 0 {
		return
	}
	var started time.Time
	procs := map[string][]session.Record{} // by host
	var hosts []string
	for _, r := range recs {
		switch r.R {
		case session.RecStart:
			if started.IsZero() {
				started = r.Time
			}
		case session.RecEnd:
			return // it ended: its server killed what it ran
		case session.RecProc:
			if r.PGID > 1 && r.Host != "" {
				if procs[r.Host] == nil {
					hosts = append(hosts, r.Host)
				}
				procs[r.Host] = append(procs[r.Host], r)
			}
		}
	}
	if len(hosts) == 0 {
		return
	}
	failed := false
	for _, host := range hosts {
		if !s.reapHost(ctx, log, l, id, host, started, procs[host]) {
			failed = true
		}
	}
	if failed {
		return // the record stays open: the next start tries again
	}
	l.Write(session.Record{R: session.RecEnd, Status: session.StateInterrupted}, true)
}

// reapHost kills on host the groups of procs (RecProc records) that are
// still the session's; false when the host could not be reached. Like a
// step it writes an audit line before it acts (tool "reap", the groups
// and their ages; when the line cannot be written nothing is killed) and
// one with what it did.
func (s *Server) reapHost(ctx context.Context, log *audit.Log, l *session.Log, id, host string, started time.Time, procs []session.Record) bool {
	now := time.Now()
	args := make([]string, 0, len(procs))
	for _, p := range procs {
		lo := int(math.Floor(now.Sub(p.Time).Seconds())) - reapSlack
		hi := int(math.Ceil(now.Sub(started).Seconds())) + reapSlack
		args = append(args, fmt.Sprintf("%d:%d:%d", p.PGID, lo, hi))
	}
	ent := audit.Entry{Session: id, Host: host, Tool: ReapTool, Command: "reap " + strings.Join(args, " "),
		Params:   map[string]any{"groups": args},
		Risk:     safety.Assessment{Level: safety.Medium, Reasons: []string{"kills the process groups (PGID:MINAGE:MAXAGE) a SIGKILLed agent mcp left running"}},
		Decision: audit.Started, By: safety.ByPolicy, Approval: "the next agent mcp reaps its dead session's own process groups"}
	if err := log.AppendUnsynced(ctx, ent); err != nil {
		s.o.Warn(fmt.Sprintf("session %s: its commands on %s were not reaped: %v", id, host, err))
		return false
	}
	start := time.Now()
	res, err := s.reapOn(ctx, host, args)
	ent.Decision, ent.Duration, ent.Output = audit.Allowed, time.Since(start), res
	code := 0
	if err != nil {
		code, ent.Error = 1, err.Error()
	}
	ent.ExitCode = &code
	if aerr := log.Append(ctx, ent); aerr != nil {
		s.o.Warn(fmt.Sprintf("session %s: reaping on %s: %v", id, host, aerr))
	}
	if err != nil {
		s.o.Warn(fmt.Sprintf("session %s (agent mcp, ended by a signal): its commands on %s could not be reaped: %v", id, host, err))
		return false
	}
	killed := 0
	for _, line := range strings.Split(strings.TrimSpace(res), "\n") {
		g, what, ok := strings.Cut(line, " ")
		n, err := strconv.Atoi(g)
		if !ok || err != nil {
			continue
		}
		l.Write(session.Record{R: session.RecReaped, Host: host, PGID: n, Status: what}, false)
		if what == "killed" {
			killed++
		}
	}
	if killed > 0 {
		s.o.Warn(fmt.Sprintf("session %s (agent mcp, ended by a signal): killed %d command(s) it left running on %s", id, killed, host))
	}
	return true
}

// reapOn runs reapScript with args on host, as the server reaches it.
func (s *Server) reapOn(ctx context.Context, host string, args []string) (string, error) {
	t, err := s.target(host)
	if err != nil {
		return "", err
	}
	tr, err := engine.Dial(ctx, t, engine.DialOptions{SSH: sshtr.Options{Warn: s.o.Warn}})
	if err != nil {
		return "", err
	}
	defer tr.Close()
	line := "sh -c " + tools.Quote(reapScript) + " reap"
	for _, a := range args {
		line += " " + a // digits and colons only
	}
	res, err := tr.Run(ctx, transport.Command{Command: line, Timeout: 30 * time.Second})
	if err != nil {
		return "", err
	}
	return res.Stdout, nil
}
