package confine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// LaunchArg, as the first argument of agent, makes it the launcher
// (MaybeLaunch): how agent re-executes itself to confine a local command.
const LaunchArg = "__confine"

// LaunchExit is the status the launcher exits with when it could not
// confine or start the command (the command did not run).
const LaunchExit = 125

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

// Launch is the launcher: with ProbeFlag it prints the kernel's Landlock
// ABI; else it parses a Spec and a command (ParseArgs), confines itself to
// the Spec and execs the command, and returns only on failure, with
// LaunchExit. It never runs the command unconfined.
func Launch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == ProbeFlag {
		fmt.Fprintf(stdout, "landlock %d\n", ABI())
		return 0
	}
	s, argv, err := ParseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "%s%v\n", LaunchPrefix, err)
		return LaunchExit
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "%s%v\n", LaunchPrefix, err)
		return LaunchExit
	}
	// Landlock and no_new_privs bind the calling thread; execve from the
	// same thread carries them into the command, the only thread left.
	runtime.LockOSThread()
	if err := restrict(s); err != nil {
		fmt.Fprintf(stderr, "%snot confined, not run: %v\n", LaunchPrefix, err)
		return LaunchExit
	}
	err = syscall.Exec(prog, argv, os.Environ())
	fmt.Fprintf(stderr, "%sexec %s: %v\n", LaunchPrefix, argv[0], err)
	return LaunchExit
}
