package ssh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// matchPattern reports whether s matches an ssh_config pattern: '*' is any
// run of bytes, '?' exactly one byte, everything else itself (case
// matters). It runs in linear time, unlike OpenSSH's recursive version,
// with the same results.
func matchPattern(s, pattern string) bool {
	si, pi := 0, 0
	star, mark := -1, 0 // last '*' in pattern, and where s was then
	for si < len(s) {
		switch {
		case pi < len(pattern) && (pattern[pi] == '?' || pattern[pi] == s[si]):
			si++
			pi++
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			si, pi = mark, star+1
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}

// matchPatternList matches s against a comma-separated pattern list (ssh's
// match_pattern_list): 1 for a match, -1 when a negated ("!") pattern
// matched, 0 otherwise. lower lowercases the patterns.
func matchPatternList(s, list string, lower bool) int {
	positive := 0
	for _, sub := range strings.Split(list, ",") {
		neg := strings.HasPrefix(sub, "!")
		if neg {
			sub = sub[1:]
		}
		if len(sub) >= 1023 {
			return 0 // OpenSSH's subpattern limit
		}
		if lower {
			sub = asciiLower(sub)
		}
		if matchPattern(s, sub) {
			if neg {
				return -1
			}
			positive = 1
		}
	}
	return positive
}

// matchHostname matches a host name against a pattern list, ignoring case.
func matchHostname(host, list string) bool {
	return matchPatternList(asciiLower(host), list, true) == 1
}

// matchExecTimeout bounds a Match exec command (ssh waits for ever; a
// batch must not hang on a config line).
const matchExecTimeout = 60 * time.Second

// matchExec runs a Match exec command as ssh does (readconf.c
// execute_in_shell): its %-tokens expanded with the settings obtained so
// far, through $SHELL (else /bin/sh) -c, stdin and stdout on /dev/null,
// stderr ours. It returns the exit status; a command that cannot be run
// or does not finish in time is an error.
func (r *reader) matchExec(cmd string) (int, error) {
	return matchExecHook(r, cmd)
}

// matchExecHook runs Match exec commands; fuzz tests replace it, so that
// random configs never run random commands.
var matchExecHook = runMatchExec

func runMatchExec(r *reader, cmd string) (int, error) {
	host, err := r.st.matchHost()
	if err != nil {
		return 0, fmt.Errorf("HostName %q: %w", r.st.hostName, err)
	}
	cfg := &HostConfig{Alias: r.st.alias, HostName: host, Port: 22, User: r.env.localUser}
	if r.st.port != 0 {
		cfg.Port = r.st.port
	}
	if r.st.userSet {
		cfg.User = r.st.user
	}
	line, err := percentExpand(cmd, r.env.tokens(cfg))
	if err != nil {
		return 0, fmt.Errorf("Match exec %q: %w", cmd, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), matchExecTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, userShell(), "-c", line)
	c.Stderr = os.Stderr
	c.WaitDelay = time.Second
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return 0, fmt.Errorf("Match exec %q: did not finish within %s", cmd, matchExecTimeout)
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("Match exec %q: %w", cmd, err)
	}
	return 0, nil
}

// errUnsupportedMatch marks a Match criterion agent cannot evaluate.
var errUnsupportedMatch = errors.New("unsupported Match criterion")

// match evaluates a Match line's criteria (ssh's match_cfg_line): all,
// host, originalhost, user and localuser, each optionally negated with
// "!", and exec (matchExec). localnetwork is refused when it would decide
// the result; canonical and final always (agent does a single pass).
func (r *reader) match(args []string, flags readFlags) (bool, error) {
	result, attributes := true, 0
	for i := 0; i < len(args); i++ {
		attrib := args[i]
		neg := strings.HasPrefix(attrib, "!")
		if neg {
			attrib = attrib[1:]
		}
		crit := asciiLower(attrib)
		if crit == "all" {
			if attributes > 1 || (i+1 < len(args) && args[i+1] != "") {
				return false, fmt.Errorf("%q cannot be combined with other Match attributes", args[i])
			}
			return result && !neg, nil
		}
		attributes++
		if crit == "canonical" || crit == "final" {
			if flags&neverMatch != 0 {
				continue
			}
			return false, fmt.Errorf("%w %q: agent does not re-read the config after canonicalization", errUnsupportedMatch, attrib)
		}
		if i+1 >= len(args) || args[i+1] == "" || args[i+1][0] == '#' {
			return false, fmt.Errorf("missing Match criteria for %s", attrib)
		}
		i++
		arg := args[i]
		var ok bool
		switch crit {
		case "host":
			host, err := r.st.matchHost()
			if err != nil {
				return false, fmt.Errorf("HostName %q: %w", r.st.hostName, err)
			}
			ok = matchHostname(host, arg)
		case "originalhost":
			ok = matchHostname(r.st.alias, arg)
		case "user":
			ruser := r.env.localUser
			if r.st.userSet {
				ruser = r.st.user
			}
			ok = matchPatternList(ruser, arg, false) == 1
		case "localuser":
			ok = matchPatternList(r.env.localUser, arg, false) == 1
		case "exec":
			if !result || flags&neverMatch != 0 {
				continue // the block is off whatever this says: not run, as in ssh
			}
			status, err := r.matchExec(arg)
			if err != nil {
				return false, err
			}
			ok = status == 0
		case "localnetwork":
			if !result || flags&neverMatch != 0 {
				continue // the block is off whatever this says
			}
			return false, fmt.Errorf("%w %q", errUnsupportedMatch, attrib)
		default:
			return false, fmt.Errorf("%w %q", errUnsupportedMatch, attrib)
		}
		if ok == neg {
			result = false
		}
	}
	if attributes == 0 {
		return false, errors.New("one or more attributes required for Match")
	}
	return result, nil
}
