package confine

import (
	"errors"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"syscall"
)

// LaunchArg, as the first argument of agent, makes it the launcher
// (MaybeLaunch): how agent re-executes itself to confine a local command.
const LaunchArg = "__confine"

// LaunchExit is the status the launcher exits with when it could not
// confine or start the command (the command did not run).
const LaunchExit = 125

// umaskOwnProcess: the process execs the command right after its
// confinement (Launch), so its umask is the command's (stepUmask).
var umaskOwnProcess bool

// LaunchPrefix starts every message the launcher prints about itself.
const LaunchPrefix = "agent-launch: "

// MaybeLaunch runs the launcher (Launch, never returning) when the
// process's first argument is LaunchArg; else it returns. agent's main and
// the TestMain of packages that confine local commands call it first.
func MaybeLaunch() {
	if len(os.Args) > 1 && os.Args[1] == LaunchArg {
		os.Exit(Launch(os.Args[2:], os.Stdout, os.Stderr))
	}
}

// Launch is the launcher. Its forms:
//
//	-serve                       serve as an SSH connection's worker (Serve)
//	-probe                       print the kernel's Landlock ABI, the protocol and whether it takes
//	                             seccomp filters ("landlock N protocol P seccomp 0|1")
//	-compile FILE SPECFLAGS --   compute the Spec's Ruleset once, into FILE (repeatable;
//	                             after -probe: the host's set-up in one process)
//	-rules FILE... -- COMMAND    confine to each Ruleset file (stacked), exec COMMAND
//	SPECFLAGS -- COMMAND         compute the Spec, confine, exec COMMAND
//
// It returns only on failure, with LaunchExit; it never runs the command
// unconfined.
func Launch(args []string, stdout, stderr io.Writer) int {
	fail := func(msg string) int {
		io.WriteString(stderr, LaunchPrefix+msg+"\n")
		return LaunchExit
	}
	if len(args) == 1 && args[0] == ServeFlag {
		// The launcher's own argv before -serve names it in a request's
		// wrapper.
		return Serve(serveInput(), os.Stdout, os.Stderr, os.Args[:len(os.Args)-1])
	}
	if len(args) >= 1 && args[0] == ProbeFlag {
		sc := "0"
		if Seccomp() {
			sc = "1"
		}
		io.WriteString(stdout, "landlock "+strconv.Itoa(ABI())+" protocol "+strconv.Itoa(Protocol)+" seccomp "+sc+"\n")
		if args = args[1:]; len(args) == 0 {
			return 0
		}
		if args[0] != CompileFlag {
			return fail(ProbeFlag + " takes nothing but " + CompileFlag + " after it")
		}
	}
	if len(args) >= 1 && args[0] == CompileFlag {
		// -compile FILE SPECFLAGS -- [-compile FILE SPECFLAGS --]...
		for len(args) > 0 {
			if len(args) < 2 || args[0] != CompileFlag {
				return fail(CompileFlag + " FILE SPECFLAGS -- may only be followed by another")
			}
			file := args[1]
			s, rest, err := ParseArgs(args[2:])
			if err == nil && !path.IsAbs(file) {
				err = errors.New(CompileFlag + " " + file + ": not an absolute path")
			}
			if err != nil {
				return fail(err.Error())
			}
			if err := WriteRuleset(file, Compile(s)); err != nil {
				return fail(err.Error())
			}
			args = rest
		}
		return 0
	}
	var rss []Ruleset
	for len(args) >= 2 && args[0] == RulesFlag {
		rs, err := ReadRuleset(args[1])
		if err != nil {
			return fail(err.Error())
		}
		if stale, _ := rs.check(); stale {
			// Compiled again: best effort, the next command reads it
			// fresh. Stamps merely renewed (a busy directory's time moved,
			// its entries did not) are not written back: where the time
			// moves all the time, as in a busy home, that would be a file
			// written per command to save a directory's reading.
			rs = Compile(rs.Spec)
			WriteRuleset(args[1], rs)
		}
		rss, args = append(rss, rs), args[2:]
	}
	var argv []string
	if len(rss) > 0 {
		if len(args) < 2 || args[0] != "--" {
			return fail(RulesFlag + " FILE... must be followed by -- COMMAND")
		}
		argv = args[1:]
	} else {
		s, cmd, err := ParseArgs(args)
		if err != nil {
			return fail(err.Error())
		}
		rss, argv = []Ruleset{Compile(s)}, cmd
	}
	if len(argv) == 0 {
		return fail("no command after --")
	}
	prog, err := lookPath(argv[0])
	if err != nil {
		return fail(err.Error())
	}
	// Landlock, the seccomp filter and no_new_privs bind the calling
	// thread; execve from the same thread carries them into the command,
	// the only thread left.
	runtime.LockOSThread()
	umaskOwnProcess = true // seccomp_linux.go: stepUmask
	if err := restrict(rss...); err != nil {
		return fail("not confined, not run: " + err.Error())
	}
	err = syscall.Exec(prog, argv, stepEnviron(os.Environ())) // env.go
	return fail("exec " + argv[0] + ": " + err.Error())
}
