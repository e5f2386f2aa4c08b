package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
)

// The launcher on an SSH host (docs/decisions.md, "The launcher on the
// host"). By default it is kept, named by its SHA-256, with the levels'
// rules, in agent's launch directory in its state directory on the host,
// ${XDG_STATE_HOME:-~/.local/state}/agent/launch, and checked at every
// set-up: owner and mode with the directories', and its ls line against
// the stamp written when its hash was last checked (keptCheck). With
// --ephemeral (Keep false) it is sent for the session into a directory of
// the session's own there, where the levels' rules are computed too;
// Close removes it, and the directories the set-up made: nothing stays on
// the host. The launch directory is one the policy protects (no unapproved
// step may write there; each level's rules also deny it by its real path)
// and must be the user's own, not a link, and writable by nobody else,
// nor its parents: then only the user (or root) could have put a file
// there, and the file was verified by its hash.
//
// The set-up is one command when the host has the launcher (kept): it
// learns the system and the architecture, makes and checks the
// directories, and runs the launcher once to probe the kernel and compute
// every level's rules (and print the sandbox's). Otherwise a second
// command gets the launcher gzip-compressed on its standard input (where
// the host has gzip; else it is sent over SFTP first) under a temporary
// name, checks its hash, renames it into place and does the rest.

var launchArchs = []string{"amd64", "arm64"}

// launchArch is the launcher's architecture for a host's `uname -m`, ""
// when agent has none.
func launchArch(machine string) string {
	return map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[machine]
}

// launcher is one architecture's launcher as agent sends it: its bytes,
// their SHA-256 and, made on first need, their gzip (~43% of the size).
type launcher struct {
	bin    []byte
	sum    string
	gzOnce sync.Once
	gz     []byte // nil when it could not be compressed
}

// sentLaunchers are the launchers of Launcher by architecture and the bytes'
// address and size, each hashed once per process.
var sentLaunchers struct {
	mu sync.Mutex
	m  map[string]*launcher
}

// launcherFor is f's launcher for arch, nil when there is none.
func launcherFor(f confine.LauncherFunc, arch string) *launcher {
	if f == nil {
		return nil
	}
	bin, err := f(arch)
	if err != nil || len(bin) == 0 {
		return nil
	}
	key := fmt.Sprintf("%s/%p/%d", arch, &bin[0], len(bin))
	sentLaunchers.mu.Lock()
	defer sentLaunchers.mu.Unlock()
	if l, ok := sentLaunchers.m[key]; ok {
		return l
	}
	sum := sha256.Sum256(bin)
	l := &launcher{bin: bin, sum: hex.EncodeToString(sum[:])}
	if sentLaunchers.m == nil {
		sentLaunchers.m = map[string]*launcher{}
	}
	sentLaunchers.m[key] = l
	return l
}

// noLauncher says why agent has no launcher for linux/arch: what
// Launcher answered (a `go install` build has none, and how to get one).
func noLauncher(f confine.LauncherFunc, arch string) string {
	msg := "agent has no launcher for linux/" + arch
	if f == nil {
		return msg
	}
	if _, err := f(arch); err != nil {
		return msg + ": " + err.Error()
	}
	return msg
}

// gzipped is l's bytes gzip-compressed, or nil when they cannot be.
func (l *launcher) gzipped() []byte {
	l.gzOnce.Do(func() {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write(l.bin); err == nil && w.Close() == nil {
			l.gz = b.Bytes()
		}
	})
	return l.gz
}

// setupHead is the start of the set-up command: uname, the architecture's
// launcher hash ($s), the launch directory made, resolved ($d) and
// checked, the session's directory ($sd, not made), the launcher's path
// ($f) and the kept rules' ($r).
// It prints "uname …", then "unsafe WHY", "none ARCH" or "dir D"; a
// line it prints ends the set-up there (exit 0).
func setupHead(sums, keys map[string]string, sess string, keep bool) string {
	where := sessionDir(sess)
	if keep {
		where = keptDir(sess) + keptCheck
	}
	// Builtins where they do (a fork and exec each cost the host more than
	// the rest): the system from /proc (uname where it has no arch),
	// directories resolved with cd -P, id only when a directory is not the
	// user's own.
	return `{ read -r u < /proc/sys/kernel/ostype && read -r rel < /proc/sys/kernel/osrelease && read -r m < /proc/sys/kernel/arch && u="$u $rel $m"; } 2>/dev/null ||
	u=$(uname -srm) || u=
printf 'uname %s\n' "$u"
case $u in Linux\ *) ;; *) exit 0 ;; esac
case ${u##* } in
x86_64 | amd64) s=` + sums["amd64"] + ` k=` + keys["amd64"] + ` a=amd64 ;;
aarch64 | arm64) s=` + sums["arm64"] + ` k=` + keys["arm64"] + ` a=arm64 ;;
*) exit 0 ;;
esac
[ -n "$s" ] || { echo "none $a"; exit 0; }
rel=${u#* } rel=${rel% *}
case $rel in '' | *[!A-Za-z0-9._+-]*) rel=other ;; esac
umask 077
` + where + `printf 'dir %s\n' "$d"
`
}

// keptDir makes and checks agent's launch directory in
// its state directory on the host ($d), where the launcher and the rules
// are kept between sessions.
func keptDir(sess string) string {
	return stateDir + `for x in "$st" "$st/agent" "$st/agent/launch"; do
	if [ -L "$x" ] || [ ! -O "$x" ]; then echo "unsafe $x is a link or not yours"; exit 0; fi
done
o=$PWD
cd -P "$st/agent/launch" && d=$PWD && cd -P ../../.. && p=$PWD && cd "$o" || { echo "unsafe cannot resolve $st"; exit 0; }
f=$d/agent-launch-$s sd=$d/` + sess + ` r=$d/rules-$k-$rel
set -- "$p" "$st" "$st/agent" "$d"
case $st in "$HOME"/*) set -- "$HOME" "$@" ;; esac
[ -e "$f" ] && { { [ -L "$f" ] || [ ! -O "$f" ]; } && { echo "unsafe $f is a link or not yours"; exit 0; }; set -- "$@" "$f"; }
me=
[ -O "$HOME" ] && [ -O "$p" ] || me=$(id -u)
l=$(ls -ldnL -- "$@") || { echo "unsafe cannot list $*"; exit 0; }
bad= fl=
while read -r m i o x; do
	case $m in ?????????[tT]*) ;; ?????w* | ????????w*) bad=1 ;; esac
	[ -z "$me" ] || case $o in "$me" | 0) ;; *) bad=1 ;; esac
	case $x in *" $f") fl="$m $i $o $x" ;; esac
done <<EOF
$l
EOF
[ -z "$bad" ] || { echo "unsafe writable by others or not yours: $*"; exit 0; }
`
}

// keptCheck (the default) checks the kept launcher ($f) against the stamp
// written when its SHA-256 was last checked ($f.ok: its ls line, with its
// mode, owner, size and time): a launcher whose line changed is hashed
// again, and one whose hash is not the launcher's ($s) is refused. Without
// sha256sum it is removed, and sent again (and read back to check it).
const keptCheck = `if [ -n "$fl" ]; then
	read -r x < "$f.ok" 2>/dev/null || x=
	if [ "$x" != "$fl" ]; then
		x=$(sha256sum < "$f" 2>/dev/null) || { rm -f "$f" "$f.ok"; x=; }
		case $x in '') ;; "$s "*) printf '%s\n' "$fl" > "$f.ok" ;; *) echo "unsafe $f is not the launcher agent sent (its SHA-256 differs)"; exit 0 ;; esac
	fi
fi
`

// stateDir picks agent's state directory on the host ($st), where
// agent/launch is or can be made: ${XDG_STATE_HOME:-~/.local/state}; where
// the home cannot be written, $XDG_RUNTIME_DIR (an absolute directory of
// the user's own); else /tmp/agent-UID, the user's own, not a link, mode
// 0700 (checked after it is made: one made by another user meanwhile is
// refused). $n is how many of agent/launch and its parents up to $st's
// parent it made. It prints "nowhere …" and ends the set-up when there is
// none: the host then runs with the classifier alone, said once
// (docs/decisions.md, "The launcher on the host").
const stateDir = `pick() {
	n=0
	for x in "$1/agent/launch" "$1/agent" "$1" "${1%/*}"; do [ -d "$x" ] && break; n=$((n + 1)); done
	[ -d "$1/agent/launch" ] || mkdir -p "$1/agent/launch" 2>/dev/null || return 1
	st=$1
}
case ${XDG_STATE_HOME:-} in /*) st=$XDG_STATE_HOME ;; *) st=$HOME/.local/state ;; esac
if ! pick "$st"; then
	st=
	case ${XDG_RUNTIME_DIR:-} in /*) [ -d "$XDG_RUNTIME_DIR" ] && [ ! -L "$XDG_RUNTIME_DIR" ] && [ -O "$XDG_RUNTIME_DIR" ] && pick "$XDG_RUNTIME_DIR" ;; esac
fi
if [ -z "$st" ]; then
	t=/tmp/agent-$(id -u)
	pick "$t" || { echo "nowhere $HOME, \$XDG_RUNTIME_DIR and $t cannot hold it"; exit 0; }
	if [ -L "$t" ] || [ ! -O "$t" ]; then echo "unsafe $t is a link or not yours"; exit 0; fi
	case $(ls -ldn "$t") in drwx------*) ;; *) echo "unsafe $t is not private (mode 0700)"; exit 0 ;; esac
fi
`

// sessionDir (the default) is keptDir's checks, then the session's own
// directory in the launch directory ($d), where the launcher is sent and
// the rules computed, removed by Close with the directories the set-up
// made ("made N": how many of the launch directory and its parents up to
// the state directory's parent did not exist): nothing stays on the
// host. Not in $TMPDIR: a medium step may write there, and denying one
// entry of a busy directory would cost every step a recompilation.
func sessionDir(sess string) string {
	return keptDir(sess) + `mkdir "$sd" || { echo "unsafe cannot make $sd"; exit 0; }
` + ownerRecord + `
d=$sd
f=$d/agent-launch-$s sd=$d/sandbox r=$d/rules-$k-$rel
printf 'made %s\n' "$n"
`
}

// ownerRecord writes, in the session's directory ($sd), the process that
// lives as long as the session's SSH connection: the first of the set-up
// command's ancestors that is the server's connection process (sshd,
// sshd-session, dropbear), as "PID STARTTIME" (/proc/PID/stat's 22nd
// field: a PID used again is told apart; read with the shell's own read,
// not cat: a fan-out's hosts that share a home list each other's sessions,
// and a process per entry cost a host 30 ms). reapDead removes the directory
// once that process is gone (agent killed, the connection cut). A server
// whose connection process has another name gets no record.
const ownerRecord = `(o=$$
while [ "$o" -gt 1 ] 2>/dev/null; do
	read -r s < "/proc/$o/stat" 2>/dev/null || exit 0
	c=${s#*"("} c=${c%")"*}
	set -- ${s##*")"}
	case $c in sshd | sshd-session | dropbear) printf '%s %s\n' "$o" "${20}" > "$sd/.owner"; exit 0 ;; esac
	o=$2
done)`

// reapDead removes the session directories in the launch directory that
// belong to no live session (docs/decisions.md, "The launcher on the
// host"): whose owner (ownerRecord) is gone or is another process now,
// or, without a record, unchanged for 7 days. Never the session's own (keep);
// it never fails.
func reapDead(launch, keep string) string {
	return `for x in ` + shellQuote(launch) + `/s.*; do
	[ -d "$x" ] && [ "$x" != ` + shellQuote(keep) + ` ] || continue
	if [ -f "$x/.owner" ]; then
		read -r p t < "$x/.owner" || continue
		read -r s < "/proc/$p/stat" 2>/dev/null && set -- ${s##*")"} && [ "${20}" = "$t" ] && continue
	elif [ -z "$(find "$x" -maxdepth 0 -mtime +7 2>/dev/null)" ]; then
		continue
	fi
	rm -rf "$x"
done 2>/dev/null; :
`
}

// setupFinish prints the probe's answer and has every level's rules in
// $r.LEVEL.rules: kept on the host like the launcher and shared by its
// sessions (the launcher renews them when stale), so a host that has them
// runs no launcher to set up; otherwise one launcher process probes and
// computes them all, and its answer is kept in $r.ok (written last). With
// --sandbox the session's own rules (its working directory) go to $sd
// and are printed ("sandbox RULES", one line). "ready" when all went well.
func (h *confiner) setupFinish() string {
	prune := ""
	if h.o.Keep {
		prune = " && " + pruneKept
	}
	var b strings.Builder
	b.WriteString(`if [ -f "$r.ok" ]`)
	for _, name := range levelNames {
		b.WriteString(` && [ -f "$r.` + name + `.rules" ]`)
	}
	b.WriteString(`; then read -r x < "$r.ok" && printf '%s\n' "$x"; else x=$("$f" ` + confine.ProbeFlag)
	for _, name := range levelNames {
		args := h.specs[name].Args()
		// The launcher and the rules, by their real path.
		b.WriteString(" " + confine.CompileFlag + ` "$r.` + name + `.rules" ` + quoteArgs(args[:len(args)-1]) + ` -no-write "$d" --`)
	}
	b.WriteString(`) && printf '%s\n' "$x" > "$r.ok.$$" && mv -f "$r.ok.$$" "$r.ok" && printf '%s\n' "$x"` + prune + `; fi`)
	if s, ok := h.specs[sandboxName]; ok {
		// The host's working and temporary directories, as it resolves
		// them.
		args := s.Args()
		b.WriteString(` && mkdir "$sd" && c=$(pwd -P) && t=$(cd "${TMPDIR:-/tmp}" && pwd -P) && "$f" ` + confine.CompileFlag + ` "$sd/` +
			sandboxName + `.rules" ` + quoteArgs(args[:len(args)-1]) + ` -writable "$c" -writable "$t" -- && printf 'sandbox ' && cat "$sd/` + sandboxName + `.rules"`)
	}
	return b.String() + " && echo ready\n"
}

// pruneKept removes, when a host computes new rules (a new policy,
// launcher or kernel: rare), the launchers and rules no session changed
// for 30 days but its own. A session still using one that old (rules
// never stale for a month) then fails its next step closed, and its next
// set-up sends or computes them again. It never fails the set-up.
const pruneKept = `{ find "$d" -maxdepth 1 -type f \( -name 'agent-launch-*' -o -name 'rules-*' \) -mtime +30 ! -name "agent-launch-$s" ! -name "agent-launch-$s.ok" ! -name "rules-$k-*" -exec rm -f {} + 2>/dev/null || :; }`

// levelNames are the levels' rulesets, as setupFinish has them.
var levelNames = []string{confine.NoProtected.String(), confine.ReadOnly.String()}

// rulesKey names the levels' rules kept on the host for the launcher of
// hash sum: the same launcher and the same rules share them.
func (h *confiner) rulesKey(sum string) string {
	if sum == "" {
		return ""
	}
	k := sha256.New()
	k.Write([]byte(sum))
	for _, name := range levelNames {
		k.Write([]byte{0})
		k.Write([]byte(strings.Join(h.specs[name].Args(), "\x00")))
	}
	return hex.EncodeToString(k.Sum(nil)[:12])
}

// release is the kernel release as setupHead puts it in a file name.
func release(rel string) string {
	if rel == "" || strings.Trim(rel, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") != "" {
		return "other"
	}
	return rel
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// setupRemote finds out whether the host can confine, puts the launcher
// there when it does not have it, and computes the rules (see above).
func (h *confiner) setupRemote(ctx context.Context) {
	sums, keys, ls := map[string]string{}, map[string]string{}, map[string]*launcher{}
	for _, a := range launchArchs {
		if ls[a] = launcherFor(h.o.Launcher, a); ls[a] != nil {
			sums[a] = ls[a].sum
		}
		keys[a] = h.rulesKey(sums[a])
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
		// No shell started ahead after it: the worker next execs the
		// launcher in its place (ServeWorker), or the launcher is sent
		// on a session of its own.
		return h.tr.Run(transport.WithLastStep(ctx), transport.Command{Timeout: remoteTimeout, Command: script})
	}
	res, err := run(setupHead(sums, keys, sess, h.o.Keep) + `if [ -e "$f" ]; then ` + h.setupFinish() + "else if command -v gzip >/dev/null 2>&1; then echo send gzip; else echo send; fi; fi\n")
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
	sys, release_, machine := uname[0], uname[1], uname[2]
	arch := launchArch(machine)
	switch {
	case sys != "Linux":
		h.reason = "the host runs " + sys + "; Landlock is Linux's"
		return
	case out["none"] != "":
		h.reason = noLauncher(h.o.Launcher, out["none"])
		return
	case out["nowhere"] != "":
		h.reason = "no directory on the host can hold the launcher (" + out["nowhere"] + ")"
		return
	case out["unsafe"] != "":
		h.err = fmt.Errorf("confine: the launcher's directory on the host is not safe to use: %s", out["unsafe"])
		return
	case out["dir"] == "":
		if arch == "" {
			h.reason = "agent has no launcher for " + machine
			return
		}
		h.err = fmt.Errorf("confine: no launcher directory on the host (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
		return
	}
	dir := out["dir"]
	rules := dir + "/rules-" + keys[arch] + "-" + release(release_)
	h.sandboxDir = dir + "/" + sess
	switch _, sb := h.specs[sandboxName]; {
	case !h.o.Keep:
		// The session's launcher and rules, and the directories the
		// set-up made for them, removed by Close.
		h.dir, h.sandboxDir = dir, dir+"/sandbox"
		n, _ := strconv.Atoi(out["made"])
		for p := path.Dir(dir); n > 0 && len(h.made) < 4 && p != "/"; n, p = n-1, path.Dir(p) {
			h.made = append(h.made, p)
		}
	case sb:
		h.dir = h.sandboxDir // the session's own rules, removed by Close
	}
	for _, l := range []confine.Level{confine.ReadOnly, confine.NoProtected} {
		// As the host's rules have it (setupFinish), for Explain.
		s := h.specs[l.String()]
		s.NoWrite = append(slices.Clone(s.NoWrite), dir)
		h.specs[l.String()] = s
	}
	exe := dir + "/agent-launch-" + sums[arch]
	if how, ok := out["send"]; ok {
		if ls[arch] == nil {
			// The host answered for an architecture the set-up head
			// gave no launcher ("none" ends it first).
			h.err = fmt.Errorf("confine: no launcher for linux/%s to send", arch)
			h.cleanup()
			return
		}
		if res, err = h.send(ctx, how == "gzip", ls[arch], dir, exe, h.sandboxDir, rules, keys[arch]); err != nil {
			h.err = err
			h.cleanup()
			return
		}
		out = parseSetup(res.Stdout)
	}
	if err := h.finishRemote(out, res, release_, exe, rules, stacks); err != nil {
		h.err = err
		h.cleanup()
	}
}

// send puts the launcher on the host under a temporary name and runs the
// rest of the set-up: its hash checked on the host (or, without sha256sum,
// read back), renamed into place, run. Where the host has gzip (zipped)
// the launcher goes compressed on the set-up command's standard input and
// is decompressed there, in the same command: no SFTP subsystem, 43% of
// the bytes, no fsync of a file removed at the end (docs/decisions.md,
// "The launcher on the host"); the hash checked is the decompressed
// file's, as before. Otherwise, or when that fails, it is sent as it is
// over SFTP.
func (h *confiner) send(ctx context.Context, zipped bool, l *launcher, dir, exe, sd, rules, key string) (transport.Result, error) {
	want := l.sum
	tmp := dir + "/.agent-launch-" + randomName()
	vars := "umask 077\nd=" + shellQuote(dir) + " sd=" + shellQuote(sd) + " r=" + shellQuote(rules) + " f=" + shellQuote(exe) + " tmp=" + shellQuote(tmp) +
		" s=" + want + " k=" + key + "\n"
	check := `x=$(sha256sum < "$tmp" 2>/dev/null) || { echo nosum; exit 0; }
case $x in ` + want + `\ *) ;; *) printf 'sum %s\n' "$x"; rm -f "$tmp"; exit 0 ;; esac
mv -f "$tmp" "$f" || exit 0
` + h.setupFinish()
	var res transport.Result
	var err error
	sent := false
	if zipped && l.gzipped() != nil {
		// gzip's output is 0600 (umask): made executable once checked.
		res, err = h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Stdin: bytes.NewReader(l.gzipped()), Command: vars +
			`gzip -dc > "$tmp" || { rm -f "$tmp"; echo unzipped; exit 0; }
chmod 700 "$tmp" || { rm -f "$tmp"; echo unzipped; exit 0; }
` + check})
		if err != nil {
			h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: "rm -f " + shellQuote(tmp)})
			return res, fmt.Errorf("confine: send the launcher: %w", err)
		}
		_, failed := parseSetup(res.Stdout)["unzipped"]
		sent = !failed
	}
	if !sent {
		if _, err := h.tr.WriteFile(ctx, tmp, bytes.NewReader(l.bin), 0o700); err != nil {
			h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: "rm -f " + shellQuote(tmp)})
			return transport.Result{}, fmt.Errorf("confine: send the launcher: %w", err)
		}
		res, err = h.tr.Run(ctx, transport.Command{Timeout: remoteTimeout, Command: vars + check})
		if err != nil {
			return res, fmt.Errorf("confine: %w", err)
		}
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
func (h *confiner) finishRemote(out map[string]string, res transport.Result, release, exe, rules string, stacks map[confine.Level][]string) error {
	probe := strings.Fields(out["landlock"])
	if len(probe) < 3 || probe[1] != "protocol" {
		return fmt.Errorf("confine: the launcher did not answer (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stdout+res.Stderr))
	}
	if probe[2] != strconv.Itoa(confine.Protocol) {
		return fmt.Errorf("confine: the launcher speaks protocol %s, not %d: it is from another build of agent (make build)", probe[2], confine.Protocol)
	}
	if len(probe) != 5 || probe[3] != "seccomp" || (probe[4] != "0" && probe[4] != "1") {
		return fmt.Errorf("confine: the launcher did not answer (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stdout+res.Stderr))
	}
	if abi, _ := strconv.Atoi(probe[0]); abi < 1 {
		h.reason = "kernel " + release + " has no Landlock"
		return nil
	}
	if probe[4] == "0" {
		h.partly = noSeccomp(release)
	}
	if _, ok := out["ready"]; !ok {
		return fmt.Errorf("confine: compute the rules on the host: exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	h.launcher = []string{exe}
	if ws, ok := h.tr.(workerServer); ok {
		// One process for the session's commands, each level's confined
		// in a thread of its own, instead of a launcher per command.
		ws.ServeWorker([]string{exe, confine.ServeFlag})
	}
	h.conf = map[confine.Level]confine.Confinement{}
	for l, names := range stacks {
		wrap := []string{exe}
		for _, n := range names {
			if n == sandboxName {
				wrap = append(wrap, confine.RulesFlag, h.sandboxDir+"/"+n+".rules")
			} else {
				wrap = append(wrap, confine.RulesFlag, rules+"."+n+".rules")
			}
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

// workerServer is a transport whose worker a launcher may serve as
// (transport/ssh; confine.Serve): the launcher then runs the commands
// whose Wrap is its own confinement in its own process, confined in a
// thread, the rules checked for staleness in-process before each
// (docs/decisions.md, "Locally on a thread, over SSH a launcher").
type workerServer interface{ ServeWorker(argv []string) }

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
