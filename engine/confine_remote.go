package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
)

// The launcher on an SSH host (docs/decisions.md, "The launcher cached on
// the host"). It is kept between sessions in agent's own state directory
// on the host, ${XDG_STATE_HOME:-~/.local/state}/agent/launch, named by
// its SHA-256 — a directory the policy protects (no unapproved step may
// write there; each level's rules also deny it by its real path) and
// that must be the user's own, not a link, and writable by nobody else,
// nor its parents: then only the user (or root) could have put a file
// there, and the file was verified by its hash when it was sent. Each
// session computes its rules into a directory of its own there, removed
// by Close.
//
// The set-up is one command when the host has the launcher: it learns the
// system and the architecture, makes and checks the directories, and runs
// the launcher once to probe the kernel and compute every level's rules
// (and print the sandbox's). Otherwise the launcher is sent over SFTP
// under a temporary name, and a second command checks its hash, renames
// it into place and does the rest.

// launcherSums are the SHA-256 of the launchers of Launcher, by
// architecture ("" when there is none), computed once per process.
var launcherSums struct {
	mu   sync.Mutex
	sums map[string]string // by arch and the launcher's address and size
}

var launchArchs = []string{"amd64", "arm64"}

func launcherSum(f confine.LauncherFunc, arch string) (string, []byte) {
	if f == nil {
		return "", nil
	}
	bin, err := f(arch)
	if err != nil || len(bin) == 0 {
		return "", nil
	}
	key := fmt.Sprintf("%s/%p/%d", arch, &bin[0], len(bin))
	launcherSums.mu.Lock()
	defer launcherSums.mu.Unlock()
	if s, ok := launcherSums.sums[key]; ok {
		return s, bin
	}
	sum := sha256.Sum256(bin)
	s := hex.EncodeToString(sum[:])
	if launcherSums.sums == nil {
		launcherSums.sums = map[string]string{}
	}
	launcherSums.sums[key] = s
	return s, bin
}

// setupHead is the start of the set-up command: uname, the architecture's
// launcher hash ($s), the launch directory made, resolved ($d) and
// checked, the session's directory ($sd) and the launcher's path ($f).
// It prints "uname …", then "unsafe WHY", "none ARCH" or "dir D"; a
// line it prints ends the set-up there (exit 0).
func setupHead(sums map[string]string, sess string) string {
	return `u=$(uname -srm) || u=
printf 'uname %s\n' "$u"
case $u in Linux\ *) ;; *) exit 0 ;; esac
case ${u##* } in
x86_64 | amd64) s=` + sums["amd64"] + ` a=amd64 ;;
aarch64 | arm64) s=` + sums["arm64"] + ` a=arm64 ;;
*) exit 0 ;;
esac
[ -n "$s" ] || { echo "none $a"; exit 0; }
umask 077
case ${XDG_STATE_HOME:-} in /*) st=$XDG_STATE_HOME ;; *) st=$HOME/.local/state ;; esac
mkdir -p "$st/agent/launch/` + sess + `" || { echo "unsafe cannot make $st/agent/launch"; exit 0; }
for x in "$st" "$st/agent" "$st/agent/launch"; do
	if [ -L "$x" ] || [ ! -O "$x" ]; then echo "unsafe $x is a link or not yours"; exit 0; fi
done
d=$(cd "$st/agent/launch" && pwd -P) && p=$(cd "$st/.." && pwd -P) || { echo "unsafe cannot resolve $st"; exit 0; }
f=$d/agent-launch-$s sd=$d/` + sess + `
set -- "$HOME" "$p" "$st" "$st/agent" "$d"
[ -e "$f" ] && { [ -L "$f" ] && { echo "unsafe $f is a link"; exit 0; }; set -- "$@" "$f"; }
me=$(id -u)
ls -ldnL -- "$@" | {
	while read -r m _ o _; do
		case $m in ?????????[tT]*) ;; ?????w* | ????????w*) exit 1 ;; esac
		case $o in "$me" | 0) ;; *) exit 1 ;; esac
	done
	exit 0
} || { echo "unsafe writable by others or not yours: $*"; exit 0; }
printf 'dir %s\n' "$d"
`
}

// setupFinish runs the launcher $f once: the probe, then every ruleset
// into $sd, the sandbox's printed ("sandbox JSON"); "ready" when all went
// well.
func (h *confiner) setupFinish() string {
	var b strings.Builder
	b.WriteString(`"$f" ` + confine.ProbeFlag)
	var names []string
	for name := range h.specs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		args := h.specs[name].Args()
		b.WriteString(" " + confine.CompileFlag + ` "$sd/` + name + `.rules" ` + quoteArgs(args[:len(args)-1]))
		if name == sandboxName {
			// The host's working and temporary directories, as it
			// resolves them.
			b.WriteString(` -writable "$c" -writable "$t"`)
		} else {
			// The launcher and the rules, by their real path.
			b.WriteString(` -no-write "$d"`)
		}
		b.WriteString(" --")
	}
	pre := ""
	if _, ok := h.specs[sandboxName]; ok {
		pre = `c=$(pwd -P) && t=$(cd "${TMPDIR:-/tmp}" && pwd -P) && `
		b.WriteString(` && printf 'sandbox ' && cat "$sd/` + sandboxName + `.rules"`)
	}
	return pre + b.String() + " && echo ready\n"
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// setupRemote finds out whether the host can confine, puts the launcher
// there when it does not have it, and computes the rules (see above).
func (h *confiner) setupRemote(ctx context.Context) {
	sums := map[string]string{}
	for _, a := range launchArchs {
		sums[a], _ = launcherSum(h.o.Launcher, a)
	}
	if h.o.Probe != nil {
		abi, rel, err := h.o.Probe(ctx)
		if err != nil {
			h.err = fmt.Errorf("confine: %w", err)
			return
		}
		if abi < 1 {
			h.reason = "kernel " + rel + " has no Landlock"
			return
		}
	}
	stacks := h.stacks()
	sess := "s." + randomName()
	run := func(script string) (transport.Result, error) {
		return h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: script})
	}
	res, err := run(setupHead(sums, sess) + `if [ -e "$f" ]; then ` + h.setupFinish() + "else echo send; fi\n")
	if err != nil {
		h.err = fmt.Errorf("confine: %w", err)
		return
	}
	out := parseSetup(res.Stdout)
	uname := strings.Fields(out["uname"])
	if len(uname) != 3 {
		h.reason = fmt.Sprintf("the host's system is unknown (uname: %q)", strings.TrimSpace(res.Stdout+res.Stderr))
		return
	}
	sys, release, machine := uname[0], uname[1], uname[2]
	switch {
	case sys != "Linux":
		h.reason = "the host runs " + sys + "; Landlock is Linux's"
		return
	case out["none"] != "":
		h.reason = "agent has no launcher for linux/" + out["none"]
		return
	case out["unsafe"] != "":
		h.err = fmt.Errorf("confine: the launcher's directory on the host is not safe to use: %s", out["unsafe"])
		return
	case out["dir"] == "":
		if _, ok := map[string]bool{"x86_64": true, "amd64": true, "aarch64": true, "arm64": true}[machine]; !ok {
			h.reason = "agent has no launcher for " + machine
			return
		}
		h.err = fmt.Errorf("confine: no launcher directory on the host (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
		return
	}
	dir := out["dir"]
	h.dir = dir + "/" + sess
	for _, l := range []confine.Level{confine.ReadOnly, confine.NoProtected} {
		// As the host's rules have it (setupFinish), for Explain.
		s := h.specs[l.String()]
		s.NoWrite = append(slices.Clone(s.NoWrite), dir)
		h.specs[l.String()] = s
	}
	arch := map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[machine]
	want, bin := launcherSum(h.o.Launcher, arch)
	exe := dir + "/agent-launch-" + want
	if _, ok := out["send"]; ok {
		if res, err = h.send(ctx, dir, exe, want, bin); err != nil {
			h.err = err
			h.cleanup()
			return
		}
		out = parseSetup(res.Stdout)
	}
	if err := h.finishRemote(out, res, release, exe, stacks); err != nil {
		h.err = err
		h.cleanup()
	}
}

// send puts the launcher on the host under a temporary name and runs the
// rest of the set-up: its hash checked on the host (or, without sha256sum,
// read back), renamed into place, run.
func (h *confiner) send(ctx context.Context, dir, exe, want string, bin []byte) (transport.Result, error) {
	tmp := dir + "/.agent-launch-" + randomName()
	if _, err := h.tr.WriteFile(ctx, tmp, bytes.NewReader(bin), 0o700); err != nil {
		h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: "rm -f " + shellQuote(tmp)})
		return transport.Result{}, fmt.Errorf("confine: send the launcher: %w", err)
	}
	vars := "d=" + shellQuote(dir) + " sd=" + shellQuote(h.dir) + " f=" + shellQuote(exe) + " tmp=" + shellQuote(tmp) + "\n"
	res, err := h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: vars +
		`x=$(sha256sum < "$tmp" 2>/dev/null) || { echo nosum; exit 0; }
case $x in ` + want + `\ *) ;; *) printf 'sum %s\n' "$x"; rm -f "$tmp"; exit 0 ;; esac
mv -f "$tmp" "$f" || exit 0
` + h.setupFinish()})
	if err != nil {
		return res, fmt.Errorf("confine: %w", err)
	}
	out := parseSetup(res.Stdout)
	if s, ok := out["sum"]; ok {
		return res, fmt.Errorf("confine: the launcher on the host has SHA-256 %s, not %s: refused", strings.Fields(s + " ?")[0], want)
	}
	if _, ok := out["nosum"]; !ok {
		return res, nil
	}
	// No sha256sum on the host: read it back.
	var b strings.Builder
	if _, err := h.tr.ReadFile(ctx, tmp, &b); err != nil {
		return res, fmt.Errorf("confine: verify the launcher: %w", err)
	}
	if sum := sha256.Sum256([]byte(b.String())); hex.EncodeToString(sum[:]) != want {
		h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: "rm -f " + shellQuote(tmp)})
		return res, fmt.Errorf("confine: the launcher on the host has SHA-256 %s, not %s: refused", hex.EncodeToString(sum[:]), want)
	}
	res, err = h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: vars + `mv -f "$tmp" "$f" || exit 0
` + h.setupFinish()})
	if err != nil {
		return res, fmt.Errorf("confine: %w", err)
	}
	return res, nil
}

// finishRemote reads what the launcher's run printed: the probe, the
// sandbox's rules, "ready".
func (h *confiner) finishRemote(out map[string]string, res transport.Result, release, exe string, stacks map[confine.Level][]string) error {
	probe := strings.Fields(out["landlock"])
	if len(probe) != 3 || probe[1] != "protocol" {
		return fmt.Errorf("confine: the launcher did not answer (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stdout+res.Stderr))
	}
	if probe[2] != strconv.Itoa(confine.Protocol) {
		return fmt.Errorf("confine: the launcher speaks protocol %s, not %d: it is from another build of agent (make build)", probe[2], confine.Protocol)
	}
	if abi, _ := strconv.Atoi(probe[0]); abi < 1 {
		h.reason = "kernel " + release + " has no Landlock"
		return nil
	}
	if _, ok := out["ready"]; !ok {
		return fmt.Errorf("confine: compute the rules on the host: exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	h.launcher = []string{exe}
	h.conf = map[confine.Level]confine.Confinement{}
	for l, names := range stacks {
		wrap := []string{exe}
		for _, n := range names {
			wrap = append(wrap, confine.RulesFlag, h.dir+"/"+n+".rules")
		}
		h.conf[l] = confine.Confinement{Wrap: append(wrap, "--")}
	}
	if _, ok := h.specs[sandboxName]; ok {
		// The file tools check their paths against the rules as the host
		// computed them (its links resolved).
		rs, err := confine.DecodeRuleset([]byte(out["sandbox"]))
		if err != nil {
			return fmt.Errorf("confine: the sandbox's rules: %w", err)
		}
		h.sandbox = &rs
	}
	return nil
}

// parseSetup reads the set-up's lines "KEY REST" (the first of each key).
func parseSetup(stdout string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		k, v, _ := strings.Cut(line, " ")
		if k == "" {
			continue
		}
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}
