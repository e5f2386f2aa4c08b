package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
)

// resumeState is what `agent resume` hands to the command it runs again.
type resumeState struct {
	engine.Resume
}

// openRecord starts the record of the run's session (st), or with agent
// resume takes up the session being resumed. The caller ends it (endRecord).
func (a *app) openRecord(st session.Start) (*session.Log, error) {
	dir, err := statedir.Dir()
	if err != nil {
		return nil, err
	}
	if a.resume != nil {
		s := a.resume.Session
		if s.Start.Kind != st.Kind {
			return nil, usagef("resume %s: it was a %s session, the command now is a %s", s.ID, s.Start.Kind, st.Kind)
		}
		l, err := session.Append(dir, s.ID)
		if err != nil {
			return nil, usageError{err}
		}
		l.Write(session.Record{R: session.RecResume, Text: strings.Join(redactedArgs(a.resumeArgs), " ")}, true)
		return l, nil
	}
	st.Args, st.Redacted = redactArgs(a.args)
	if st.Dir, err = os.Getwd(); err != nil {
		return nil, err
	}
	return session.Create(dir, statedir.NewSessionID(), st)
}

// endRecord records how the session ended: done, failed, or interrupted
// (Ctrl-C: agent resume takes it up), and closes it. A failure to keep the
// record is said once.
func (a *app) endRecord(ctx context.Context, l *session.Log, ok bool) {
	if l == nil {
		return
	}
	state := session.StateFailed
	switch {
	case ctx.Err() != nil:
		state = session.StateInterrupted
	case ok:
		state = session.StateDone
	}
	if err := l.Err(); err != nil {
		fmt.Fprintf(a.stderr, "agent: the session record is incomplete (agent resume may not work): %v\n", err)
	}
	l.End(state)
}

// targetName names the single host a session ran on.
func (a *app) targetName() string {
	if a.host.sshHost == "" {
		return "local"
	}
	return a.host.sshHost
}

// secretVar reports whether a --var of that name holds a secret, which
// the session record leaves out.
func secretVar(name string) bool { return engine.HiddenVar(name) || redact.SecretKey(name) }

// redactArgs is args with what the session record must not keep taken
// out: the values of --secret-var and secret-named --var variables (named in redacted:
// agent resume asks for them again), and whatever redact.String
// finds.
func redactArgs(args []string) (out, redacted []string) {
	out = make([]string, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		kv, isVar, secret, flag := "", false, false, "--var"
		switch {
		case (arg == "--var" || arg == "--secret-var") && i+1 < len(args):
			out[i] = arg
			i++
			kv, isVar, secret, flag = args[i], true, arg == "--secret-var", arg
		case strings.HasPrefix(arg, "--var="):
			kv, isVar = strings.TrimPrefix(arg, "--var="), true
		case strings.HasPrefix(arg, "--secret-var="):
			kv, isVar, secret, flag = strings.TrimPrefix(arg, "--secret-var="), true, true, "--secret-var"
		}
		if !isVar {
			out[i] = redact.String(arg)
			continue
		}
		if k, _, ok := strings.Cut(kv, "="); ok && (secret || secretVar(k)) {
			kv = k + "=" + redact.Redacted
			redacted = append(redacted, k)
		} else {
			kv = redact.String(kv)
		}
		if arg == flag {
			out[i] = kv
		} else {
			out[i] = flag + "=" + kv
		}
	}
	return out, redacted
}

func redactedArgs(args []string) []string {
	out, _ := redactArgs(args)
	return out
}

// fileSHA256 is the hash of the file at path.
func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// checkPlanUnchanged refuses to resume with a plan file that changed since
// the session began: step numbers would not mean the same steps.
func (a *app) checkPlanUnchanged(path string) error {
	if a.resume == nil {
		return nil
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return usageError{err}
	}
	if want := a.resume.Session.Start.PlanSHA256; want != "" && sum != want {
		return usagef("resume %s: %s changed since the session began; its steps would not line up with what ran (agent run it as a new session)", a.resume.Session.ID, path)
	}
	return nil
}
