package confine

import (
	"errors"
	"path"
	"strconv"
	"strings"
)

// Level is how far a confined command may reach.
type Level int

const (
	// None: the command runs unconfined (a person approved it, or high
	// risk approved by --approve all).
	None Level = iota
	// ReadOnly is a safe step's: no writes but to harmless devices, no TCP
	// connect or bind, no signals outside the step, no reads of secrets.
	ReadOnly
	// NoProtected is a medium step's approved by policy (--approve
	// medium): writes anywhere but the protected hierarchies, no signals
	// outside the step, no reads of secrets.
	NoProtected
)

func (l Level) String() string {
	switch l {
	case ReadOnly:
		return "safe"
	case NoProtected:
		return "medium"
	}
	return "unconfined"
}

// Spec is the ruleset of one confined command, as the launcher receives it.
// Paths are absolute and cleaned; the last component may be a shell glob,
// expanded on the host. A path that does not exist still counts: what
// would create it is denied.
type Spec struct {
	// Write allows writes outside NoWrite; false denies every write but to
	// Devices.
	Write bool
	// Net allows TCP connect and bind (Landlock ABI ≥ 4 denies them
	// otherwise).
	Net bool
	// NoWrite are hierarchies never written, created, renamed or removed
	// (when Write).
	NoWrite []string
	// NoRead are hierarchies never read (secrets); Public are files inside
	// them that may be read all the same (~/.ssh/known_hosts). A Public
	// entry without "/" is a base-name pattern matched in each NoRead
	// directory.
	NoRead, Public []string
	// Devices may be read and written whatever the rest says (/dev/null).
	Devices []string
	// Writable are hierarchies that may be written whatever the rest
	// says but NoRead (the --sandbox's allowed paths).
	Writable []string
	// Caps limits the capabilities of the command (CapsRead,
	// CapsNoSystem; "": as they are).
	Caps string
	// Syscalls denies, with seccomp-bpf, what Landlock cannot express
	// (SyscallsRead, SyscallsOwn; "": nothing).
	Syscalls string
	// Readable, when set, limits reads to these hierarchies and Writable
	// (--sandbox=strict); else everything but NoRead may be read.
	Readable []string
	// HideDots are directories (the home) whose dot-entries are not read
	// but those DotsOK names (base names); FindIn are directories walked,
	// bounded, for entries named like Secrets (base-name patterns), which
	// are not read either (secrets.go).
	HideDots, DotsOK, FindIn, Secrets []string
	// LinksIn are directories (the home) in which the NoWrite and NoRead
	// hierarchies are searched for links, whose targets are denied too
	// (links.go).
	LinksIn []string
	// AccountHomes hides, at the top of every other account's home on
	// the host (/etc/passwd's, /home's directories), the dot-entries but
	// DotsOK and the names Secrets matches (accounts.go).
	AccountHomes bool
}

// Caps modes (Spec.Caps): Landlock does not confine what root's
// capabilities allow (the clock, the host name, netlink, raw sockets,
// mounts, modules, reboot), so a confined command also loses capabilities.
const (
	// CapsRead keeps only what reading needs (a safe step as root reads
	// every file the rules let it: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH).
	CapsRead = "read"
	// CapsNoSystem drops the capabilities that change the system beyond
	// its files (a medium step, the sandbox).
	CapsNoSystem = "nosystem"
)

// Syscalls modes (Spec.Syscalls): Landlock confines files, TCP and
// signals; a seccomp-bpf filter denies, with EPERM, the system calls
// that reach past them (seccomp_linux.go).
const (
	// SyscallsRead is a safe step's: no socket but AF_UNIX and netlink's
	// route and socket-diagnostics families (ip, ss), hence no UDP, raw
	// or packet socket; no change to a file's mode, owner, times,
	// extended attributes or flags; and SyscallsOwn's.
	SyscallsRead = "read"
	// SyscallsOwn is a medium step's: no change to the priority,
	// scheduling, affinity, limits or memory of processes but its own
	// (renice, ionice, taskset, chrt, prlimit on another PID), no other
	// process's memory, no kernel keyring, no input pushed into a
	// terminal, no system call of another ABI (i386, x32, arm32).
	SyscallsOwn = "own"
)

// Launcher flags. A launcher's argv is FLAGS -- COMMAND...; the probe is
// the single flag ProbeFlag.
const (
	flagWrite    = "-write"
	flagNet      = "-net"
	flagAccounts = "-account-homes"
	flagNoWrite  = "-no-write"
	flagNoRead   = "-no-read"
	flagPublic   = "-public"
	flagDevice   = "-device"
	flagWritable = "-writable"
	flagReadable = "-readable"
	flagCaps     = "-caps"
	flagSyscalls = "-syscalls"
	flagHideDots = "-hide-dots"
	flagDotOK    = "-dot-ok"
	flagFindIn   = "-find-in"
	flagSecret   = "-secret"
	flagLinksIn  = "-links-in"
	// ProbeFlag asks the launcher which Landlock ABI the host's kernel
	// has and whether it takes seccomp filters: it prints "landlock N
	// protocol P seccomp S" (N 0: no Landlock; S 0: no seccomp) and
	// exits 0.
	ProbeFlag = "-probe"
	// CompileFlag FILE SPECFLAGS -- computes a Ruleset into FILE.
	CompileFlag = "-compile"
	// RulesFlag FILE confines to the Ruleset in FILE (repeatable: stacked).
	RulesFlag = "-rules"
)

// Args is s as launcher arguments, up to and including "--".
func (s Spec) Args() []string {
	var a []string
	if s.Write {
		a = append(a, flagWrite)
	}
	if s.Net {
		a = append(a, flagNet)
	}
	if s.AccountHomes {
		a = append(a, flagAccounts)
	}
	if s.Caps != "" {
		a = append(a, flagCaps, s.Caps)
	}
	if s.Syscalls != "" {
		a = append(a, flagSyscalls, s.Syscalls)
	}
	for _, l := range []struct {
		flag  string
		paths []string
	}{{flagNoWrite, s.NoWrite}, {flagNoRead, s.NoRead}, {flagPublic, s.Public}, {flagDevice, s.Devices}, {flagWritable, s.Writable}, {flagReadable, s.Readable},
		{flagHideDots, s.HideDots}, {flagDotOK, s.DotsOK}, {flagFindIn, s.FindIn}, {flagSecret, s.Secrets}, {flagLinksIn, s.LinksIn}} {
		for _, p := range l.paths {
			a = append(a, l.flag, p)
		}
	}
	return append(a, "--")
}

// ParseArgs is the inverse of Args: the Spec and the command after "--"
// (possibly none). Paths must be absolute (a Public entry may be a base
// name).
func ParseArgs(args []string) (Spec, []string, error) {
	var s Spec
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--":
			return s, args[i+1:], nil
		case flagWrite:
			s.Write = true
			continue
		case flagNet:
			s.Net = true
			continue
		case flagAccounts:
			s.AccountHomes = true
			continue
		case flagCaps:
			if i+1 >= len(args) || (args[i+1] != CapsRead && args[i+1] != CapsNoSystem) {
				return Spec{}, nil, errors.New(flagCaps + " needs " + CapsRead + " or " + CapsNoSystem)
			}
			i++
			s.Caps = args[i]
			continue
		case flagSyscalls:
			if i+1 >= len(args) || (args[i+1] != SyscallsRead && args[i+1] != SyscallsOwn) {
				return Spec{}, nil, errors.New(flagSyscalls + " needs " + SyscallsRead + " or " + SyscallsOwn)
			}
			i++
			s.Syscalls = args[i]
			continue
		}
		var dst *[]string
		switch a {
		case flagNoWrite:
			dst = &s.NoWrite
		case flagNoRead:
			dst = &s.NoRead
		case flagPublic:
			dst = &s.Public
		case flagDevice:
			dst = &s.Devices
		case flagWritable:
			dst = &s.Writable
		case flagReadable:
			dst = &s.Readable
		case flagHideDots:
			dst = &s.HideDots
		case flagDotOK:
			dst = &s.DotsOK
		case flagFindIn:
			dst = &s.FindIn
		case flagSecret:
			dst = &s.Secrets
		case flagLinksIn:
			dst = &s.LinksIn
		default:
			return Spec{}, nil, errors.New("unknown launcher flag " + strconv.Quote(a))
		}
		if i+1 >= len(args) {
			return Spec{}, nil, errors.New(a + " needs a path")
		}
		i++
		p := args[i]
		var err error
		switch a {
		case flagDotOK, flagSecret:
			err = checkName(p)
		default:
			err = checkPath(p, a == flagPublic)
		}
		if err != nil {
			return Spec{}, nil, wrap(a, err)
		}
		*dst = append(*dst, p)
	}
	return Spec{}, nil, errors.New("no -- before the command")
}

// checkName accepts a base name or base-name pattern: not empty, no "/",
// no NUL, a pattern path.Match can read.
func checkName(p string) error {
	if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\x00") {
		return errors.New("bad name " + strconv.Quote(p))
	}
	if _, err := path.Match(p, ""); err != nil {
		return errors.New("bad pattern " + strconv.Quote(p))
	}
	return nil
}

func checkPath(p string, baseOK bool) error {
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return errors.New("bad path " + strconv.Quote(p))
	case baseOK && !strings.Contains(p, "/"):
		return nil
	case !path.IsAbs(p) || path.Clean(p) != p:
		return errors.New("path " + strconv.Quote(p) + " is not absolute and clean")
	}
	return nil
}

// Protocol is the version of the launcher's arguments and ruleset files;
// agent refuses a launcher that answers the probe with another (one
// embedded by an older build).
const Protocol = 9

// ErrNotEnforced refuses a step nobody approved on a host that cannot
// confine it, when enforcement is required (--require-enforcement).
var ErrNotEnforced = errors.New("not enforced")

// LauncherFunc returns the agent-launch executable for linux/arch (amd64,
// arm64); an error when this build has none.
type LauncherFunc func(arch string) ([]byte, error)

// Confinement is how the commands of one step are confined; the zero
// value runs them as they are.
type Confinement struct {
	// Wrap is the launcher's argv the shell runs under
	// (transport.Command.Wrap).
	Wrap []string
	// Thread, when set, confines a command the local transport starts
	// without a launcher process (Restrictor.Do); commands that already
	// run under a wrapper (sudo) use Wrap instead.
	Thread *Restrictor
}

// None reports whether c leaves commands unconfined.
func (c Confinement) None() bool { return c.Wrap == nil && c.Thread == nil }
