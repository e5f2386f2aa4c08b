package confine

import (
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Other accounts' homes (issue 26). HideDots and FindIn are the
// operator's home; the host's other accounts keep credentials in theirs
// too — a service account's home is rarely under /home
// (/var/lib/postgresql/.pgpass, /var/lib/jenkins/.ssh, /var/www/.env),
// and a step of root, or of a user their modes let read, could read
// them. With Spec.AccountHomes the rules also deny, in each home that
// the host's /etc/passwd names and in each directory of /home, the
// dot-entries DotsOK does not name and the entries Secrets names — at
// the top of that home only: the bounded walk stays the operator's (a
// database's cluster under its account's home would cost every
// session's set-up a walk). Read on the host where the rules are
// computed (agent's for a local step, the launcher's on a target), so a
// target's own accounts count. Accounts that only NSS knows (LDAP) are
// seen when their home is under /home; an account added after the rules
// were computed is seen at the next session (/etc/passwd is not watched;
// /home is).

// passwdFile is where the host's accounts are read from.
const passwdFile = "/etc/passwd"

// maxAccountHomes bounds the homes taken from /etc/passwd and /home.
const maxAccountHomes = 512

// notHome are places accounts name as their home that are not one
// (system directories and what is below them, "no home"): their
// dot-entries are not hidden. notHomeItself are directories that are not
// a home though what is below them may be (/tmp's churn would make the
// rules stale at every step).
var (
	notHome = []string{"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/dev", "/proc", "/sys",
		"/boot", "/etc", "/run", "/var/run", "/var/cache", "/var/spool", "/var/mail", "/nonexistent"}
	notHomeItself = []string{"/tmp", "/var/tmp", "/var", "/home", "/srv", "/opt"}
)

// ParseHomes returns the home directories of the accounts in passwd (the
// /etc/passwd format: NAME:PW:UID:GID:GECOS:HOME:SHELL), cleaned, each
// once, in order, without those that are not a home (notHome, "/", not
// absolute). Malformed lines are skipped.
func ParseHomes(passwd []byte) []string {
	var out []string
	rest := string(passwd)
	for rest != "" && len(out) < maxAccountHomes {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.HasPrefix(line, "#") || strings.Count(line, ":") != 6 {
			continue
		}
		// The sixth field: after five colons.
		f := line
		for range 5 {
			_, f, _ = strings.Cut(f, ":")
		}
		f, _, _ = strings.Cut(f, ":")
		if h, ok := homeDir(f); ok && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// homeDir cleans h and reports whether it is a home whose entries may
// hold an account's secrets.
func homeDir(h string) (string, bool) {
	if !path.IsAbs(h) || strings.ContainsRune(h, 0) {
		return "", false
	}
	h = path.Clean(h)
	if h == "/" || slices.Contains(notHomeItself, h) {
		return "", false
	}
	for _, r := range notHome {
		if h == r || strings.HasPrefix(h, r+"/") {
			return "", false
		}
	}
	return h, true
}

// otherHomes are the host's account homes and /home's directories that
// are not already HideDots, links resolved; /home is watched (a new
// home there makes the rules stale).
func (s Spec) otherHomes(w *watcher) []string {
	var homes []string
	if f, err := os.Open(passwdFile); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
		f.Close()
		homes = ParseHomes(b)
	}
	for _, e := range w.dir("/home") {
		if len(homes) >= 2*maxAccountHomes {
			break
		}
		if e.Type().IsDir() || e.Type()&os.ModeSymlink != 0 {
			homes = append(homes, path.Join("/home", e.Name()))
		}
	}
	var out []string
	for _, h := range homes {
		r := resolveWatched(w, h)
		r, ok := homeDir(r)
		if !ok || slices.Contains(s.HideDots, h) || slices.Contains(s.HideDots, r) || slices.Contains(out, r) {
			continue
		}
		if t, err := statType(r); err == nil && t.IsDir() {
			out = append(out, r)
		}
	}
	return out
}

// Bounds of the walk of the other accounts' homes for secret-named
// entries below their top, shared by all of them: smaller than the
// operator's (walkDepth, walkEntries, walkTime), as a database's cluster
// or a CI runner's builds may lie there, and every session's set-up pays
// it. Directories read at otherWatchDepth or less are watched.
const (
	otherWalkDepth   = 4
	otherWalkEntries = 5000
	otherWalkTime    = 40 * time.Millisecond
	otherWatchDepth  = 1
)

// others are the entries of the other accounts' homes that a step may
// not read (noRead: dot-entries at the top but DotsOK, names Secrets
// matches, and the policy's places of the operator's home found in
// theirs: NoRead's ~/.config/gcloud is /var/lib/x/.config/gcloud
// there) or write (noWrite: every dot-entry at the top — another
// account's .bashrc runs at its next login — and the secrets), links
// resolved too; those homes are watched. A denied entry leaves its home
// listed: a new name at the top of another account's home cannot be
// created either. Below the top, secret-named entries are found by a
// bounded walk (otherWalk*): what it did not reach is not found.
func (s Spec) others(w *watcher) (noRead, noWrite []string) {
	if !s.AccountHomes {
		return nil, nil
	}
	return s.othersIn(w, s.otherHomes(w))
}

// othersIn is others for the homes given.
func (s Spec) othersIn(w *watcher, homes []string) (noRead, noWrite []string) {
	names := newNameMatcher(s.Secrets)
	for _, d := range homes {
		for _, e := range w.dir(d) {
			n := e.Name()
			dot, secret := strings.HasPrefix(n, "."), names.match(n)
			if dot && !slices.Contains(s.DotsOK, n) || secret {
				noRead = appendResolved(w, noRead, path.Join(d, n), e.Type())
			}
			if dot || secret {
				noWrite = appendResolved(w, noWrite, path.Join(d, n), e.Type())
			}
		}
	}
	// Below the top (session 15): /home/bob/app/.env, bob's
	// ~/.config/gcloud. The walk does not enter the dot-entries denied
	// whole above.
	placed := s.homePlaces(w, homes)
	noRead, noWrite = append(noRead, placed...), append(noWrite, placed...)
	if len(s.Secrets) == 0 {
		return noRead, noWrite
	}
	fw := finder{s: s, names: names, w: w, seen: map[string]bool{}, deadline: time.Now().Add(otherWalkTime),
		maxEntries: otherWalkEntries, maxDepth: otherWalkDepth, watchTo: otherWatchDepth}
	for _, d := range homes {
		fw.dots = d
		fw.walk(d)
	}
	return append(noRead, fw.out...), append(noWrite, fw.out...)
}

// homePlaces are the NoRead places under the operator's home (a HideDots
// directory) found, at the same place, in each of homes — those below a
// dot-entry the top-level rule already denies whole are left out — that
// exist there (a pattern: its matches), links resolved too.
func (s Spec) homePlaces(w *watcher, homes []string) []string {
	var out []string
	for _, p := range s.NoRead {
		for _, h := range s.HideDots {
			rest, ok := strings.CutPrefix(p, h+"/")
			if !ok {
				continue
			}
			first, _, _ := strings.Cut(rest, "/")
			if strings.HasPrefix(first, ".") && !slices.Contains(s.DotsOK, first) {
				continue
			}
			for _, d := range homes {
				for _, m := range globWatched(w, path.Join(d, rest)) {
					if t, err := statType(m); err == nil {
						out = appendResolved(w, out, m, t)
					}
				}
			}
		}
	}
	return out
}
