//go:build linux

package confine

import (
	"errors"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock scopes (ABI 6).
const (
	scopeAbstractUnix = 1 << 0
	scopeSignal       = 1 << 1
)

// Landlock network rights (ABI 4).
const (
	netBindTCP    = 1 << 0
	netConnectTCP = 1 << 1
)

// ABI returns the Landlock ABI version of the running kernel, 0 when it
// has none (not built in, or disabled at boot).
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// restrict confines the calling OS thread (and what it execs) to each
// ruleset in turn (Landlock domains stack: what the command may do is what
// all of them allow), then to their seccomp filters. The caller must have locked the goroutine to its
// thread and exec right after.
func restrict(rss ...Ruleset) error {
	if keep, ok := keepOf(rss); ok {
		if err := dropCaps(keep); err != nil {
			return err
		}
	}
	for _, rs := range rss {
		fd, err := rulesetFD(rs)
		if err != nil {
			return err
		}
		err = restrictThread(fd)
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return applySyscalls(rss)
}

// rulesetFD is rs as a Landlock ruleset, ready for restrictThread.
func rulesetFD(rs Ruleset) (int, error) { return rulesetFDWith(rs, nil) }

// rulesetFDWith is rulesetFD opening its rules' paths through paths (nil:
// each opened and closed by its rule).
func rulesetFDWith(rs Ruleset, paths pathFDs) (int, error) {
	abi := ABI()
	if abi < 1 {
		return -1, errors.New("the kernel has no Landlock")
	}
	handled := handledFS(abi)
	attr := llsys.RulesetAttr{HandledAccessFS: handled}
	if abi >= 4 && !rs.Spec.Net {
		attr.HandledAccessNet = netBindTCP | netConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = scopeAbstractUnix | scopeSignal
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, wrap("landlock_create_ruleset", err)
	}
	for _, r := range rs.rules() {
		if err := addRuleWith(fd, r, handled, paths); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// pathFDs are the paths opened for rulesets built together
// (NewRestrictors): each path their rules name is opened once (O_PATH) and
// its descriptor added to every ruleset that names it, then closed when
// the build ends (close). -1: the path could not be opened. Past
// maxPathFDs paths they are opened and closed rule by rule, as alone.
type pathFDs map[string]int

// maxPathFDs bounds the descriptors pathFDs holds open at once: a
// level's rules name ~340 paths, and a process may have no more than
// 1,024 (past it an open fails, and its rule is left out).
const maxPathFDs = 512

// open returns path's descriptor, -1 when it cannot be opened.
func (p pathFDs) open(path string) int {
	if fd, ok := p[path]; ok {
		return fd
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		fd = -1
	}
	if p != nil && len(p) < maxPathFDs {
		p[path] = fd
	}
	return fd
}

// done is the end of a rule's use of fd: closed unless p keeps it.
func (p pathFDs) done(path string, fd int) {
	if kept, ok := p[path]; fd >= 0 && (!ok || kept != fd) {
		unix.Close(fd)
	}
}

// close closes every descriptor p kept.
func (p pathFDs) close() {
	for _, fd := range p {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// addRules adds rules to the Landlock ruleset fd (a patch's grants):
// a thread confined from now on gets them, those confined before keep
// what they had.
func addRules(fd int, rules []rule) error {
	handled := handledFS(ABI())
	for _, r := range rules {
		if err := addRule(fd, r, handled); err != nil {
			return err
		}
	}
	return nil
}

// restrictThread confines the calling OS thread to the ruleset fd.
func restrictThread(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return wrap("no_new_privs", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return wrap("landlock_restrict_self", err)
	}
	return nil
}

// addRule adds r; a path that vanished or cannot be a rule (a pipe, a
// socket of an internal file system) is left out: nothing is granted on it.
func addRule(fd int, r rule, handled uint64) error { return addRuleWith(fd, r, handled, nil) }

// addRuleWith is addRule opening r's path through paths.
func addRuleWith(fd int, r rule, handled uint64, paths pathFDs) error {
	pfd := paths.open(r.path)
	if pfd < 0 {
		return nil
	}
	defer paths.done(r.path, pfd)
	attr := llsys.PathBeneathAttr{AllowedAccess: r.rights & handled, ParentFd: pfd}
	err := llsys.LandlockAddPathBeneathRule(fd, &attr, 0)
	if errors.Is(err, unix.EBADFD) || errors.Is(err, unix.EINVAL) && !r.dir {
		return nil
	}
	if err != nil {
		return wrap("landlock rule on "+r.path, err)
	}
	return nil
}
