package safety

import (
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/autoshell/agent/confine"
)

// Other accounts' homes (issue 26). A path in the operator's home, in
// /root or in /home/X is also read from "~", so the "~/" patterns of the
// policy (SensitivePaths, ProtectedPaths) and the found-secret rule (a
// dot-entry not in ReadableDotfiles, a name in SecretNames) apply there.
// Service accounts keep their credentials in homes elsewhere: the homes
// this machine's /etc/passwd names (confine.ParseHomes: not /usr/sbin,
// /bin, /nonexistent …), and, for targets whose accounts the classifier
// cannot read, the usual homes of common services (serviceHomes). The
// kernel reads the target's own /etc/passwd (confine/accounts.go).

// serviceHomes are where common services' accounts have their homes on
// Debian, Ubuntu, Fedora and in their packages. Not /srv/* or /opt/*,
// where projects live as often as accounts (`cd /srv/app && grep -r
// TODO .` must stay safe): an account whose home is there is found in
// /etc/passwd, by this machine's classifier and by a target's kernel.
var serviceHomes = []string{"/var/lib/postgresql", "/var/lib/pgsql", "/var/lib/mysql", "/var/lib/jenkins",
	"/var/lib/gitlab-runner", "/var/opt/gitlab", "/var/lib/redis", "/var/lib/rabbitmq", "/var/lib/grafana",
	"/var/lib/prometheus", "/var/lib/mongodb", "/var/lib/elasticsearch", "/var/lib/docker-registry",
	"/var/lib/nginx", "/var/lib/git", "/var/lib/gitea", "/var/lib/forgejo", "/var/lib/nextcloud",
	"/var/lib/zabbix", "/var/lib/munin", "/var/lib/bacula", "/var/lib/barman", "/var/lib/pgbackrest",
	"/var/lib/minio", "/var/lib/vault", "/var/lib/consul", "/var/lib/nomad", "/var/lib/ceph", "/var/lib/libvirt",
	"/var/www", "/var/backups"}

// accountHomes are serviceHomes and this machine's accounts' homes
// (/etc/passwd, read once).
var accountHomes = sync.OnceValue(func() []string {
	out := slices.Clone(serviceHomes)
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return out
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
	for _, h := range confine.ParseHomes(b) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
})

// accountForm is p written from "~" when p lies in (or is) an account's
// home, hs (a home may be a pattern; so may p, glob: any overlap counts).
func accountForm(p string, hs []string) (string, bool) {
	pc := components(p)
	for _, h := range hs {
		hc := components(h)
		if len(hc) == 0 || len(pc) < len(hc) {
			continue
		}
		all := true
		for i := range hc {
			all = all && overlap(hc[i], pc[i], true)
		}
		if all {
			return path.Join(append([]string{"~"}, pc[len(hc):]...)...), true
		}
	}
	return "", false
}

// holdsHome reports whether the directory abs holds an account's home
// (abs is an ancestor of one): reading it recursively reads that home.
func holdsHome(abs string) bool {
	ac := components(abs)
	for _, h := range accountHomes() {
		hc := components(h)
		if len(ac) >= len(hc) {
			continue
		}
		all := true
		for i := range ac {
			all = all && overlap(hc[i], ac[i], true)
		}
		if all && !strings.HasPrefix(abs, "/proc") {
			return true
		}
	}
	return false
}

// otherAccountDot reports whether abs is, or lies in, a dot-entry at the
// top of an account's home that is not the operator's (home): the
// kernel denies writing those (confine/accounts.go), and the classifier
// rates them as it does.
func otherAccountDot(abs, home string) bool {
	for _, h := range []string{home, homeStandIn} { // "~/x" is classified as /home/~/x
		if h != "" && h != "/" && (abs == h || strings.HasPrefix(abs, h+"/")) {
			return false
		}
	}
	form, ok := accountForm(abs, accountHomes())
	if !ok {
		if rest, isHome := strings.CutPrefix(abs, "/home/"); isHome && strings.Contains(rest, "/") {
			_, below, _ := strings.Cut(rest, "/")
			form, ok = "~/"+below, true
		}
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(form, "~/"), "/")
	return ok && strings.HasPrefix(first, ".") && first != "." && first != ".."
}
