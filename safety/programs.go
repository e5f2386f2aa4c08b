package safety

import (
	"path"
	"slices"
	"strings"
)

// What a command runs and whom it connects to, for declared permissions
// (Analysis.Programs, Analysis.Network).

// builtins are shell builtins that run no program and touch no file by
// themselves: they are not listed among the programs a command runs.
var builtins = []string{"cd", "pushd", "popd", "dirs", "export", "unset", "shift", "true", "false", ":", "test",
	"[", "echo", "printf", "read", "local", "declare", "typeset", "readonly", "return", "exit", "break",
	"continue", "wait", "set", "getopts", "let", "umask", "type", "jobs", "shopt", "exec", "command", "builtin"}

// program records a program the command runs.
func (c *classifier) program(name string) {
	if slices.Contains(builtins, name) || len(c.programs) >= maxTouched {
		return
	}
	c.programs = append(c.programs, name)
}

// netPrograms connect to other hosts whatever they are asked; netLocal
// lists, for programs that connect only for some subcommands, those that
// do not (any other subcommand counts as connecting).
var (
	netPrograms = []string{"curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
		"ping", "ping6", "traceroute", "traceroute6", "tracepath", "tracepath6", "mtr", "dig", "nslookup", "host", "whois",
		"nmap", "ssh-keyscan", "aws", "gcloud", "az", "ansible", "ansible-playbook", "mosh", "rsh", "rlogin",
		"lftp", "aria2c", "httpie", "http", "https", "yum", "dnf", "zypper", "apk", "pacman", "snap",
		"flatpak", "brew", "go", "cargo", "gem", "yarn", "pnpm", "mysql", "psql", "redis-cli", "mongo", "mongosh",
		"ldapsearch", "smbclient", "ntpdate", "chronyc", "nsupdate", "git-remote-http", "svn", "hg", "arping", "fping",
		"hping3", "nping", "iperf", "iperf3", "finger", "tftp", "logger", "mail", "mailx", "sendmail", "mutt", "lynx", "w3m",
		"links", "elinks", "drill", "kdig", "delv", "systemd-resolve", "avahi-resolve", "snmpget", "snmpwalk", "ntpq",
		"rdate", "sntp", "wol", "etherwake", "lwp-request", "lwp-download", "GET", "POST", "HEAD", "xh", "websocat",
		"dnsmasq", "tcptraceroute", "mosh-client", "rclone", "s3cmd", "gsutil", "doctl", "hcloud"}
	netLocal = map[string][]string{
		"git": {"status", "log", "diff", "show", "add", "commit", "checkout", "switch", "branch", "tag", "rev-parse",
			"config", "init", "reset", "restore", "stash", "merge", "rebase", "blame", "grep", "ls-files", "cat-file",
			"describe", "shortlog", "reflog", "worktree", "mv", "rm", "clean", "apply", "am", "format-patch",
			"cherry-pick", "revert", "bisect", "notes", "gc", "fsck", "version", "help", "rev-list", "show-ref",
			"symbolic-ref", "update-ref", "for-each-ref", "ls-tree", "diff-tree", "diff-index", "hash-object", "var"},
		"apt":     {"list", "show", "policy", "search", "depends", "rdepends", "remove", "purge", "autoremove", "clean", "autoclean", "help", "moo"},
		"apt-get": {"remove", "purge", "autoremove", "clean", "autoclean", "check", "moo", "help"},
		"pip":     {"list", "show", "freeze", "check", "help", "uninstall", "cache", "config", "debug", "inspect"},
		"pip3":    {"list", "show", "freeze", "check", "help", "uninstall", "cache", "config", "debug", "inspect"},
		"npm":     {"ls", "list", "run", "run-script", "test", "start", "stop", "version", "help", "config", "prefix", "root", "bin", "uninstall", "prune"},
		"docker":  {"ps", "images", "image", "logs", "inspect", "exec", "start", "stop", "restart", "rm", "rmi", "kill", "top", "stats", "version", "info", "volume", "network", "container", "cp", "diff", "port", "wait", "pause", "unpause", "rename", "system", "tag", "compose", "builder", "context", "history", "events"},
		"podman":  {"ps", "images", "image", "logs", "inspect", "exec", "start", "stop", "restart", "rm", "rmi", "kill", "top", "stats", "version", "info", "volume", "network", "container", "cp", "diff", "port", "wait", "pause", "unpause", "rename", "system", "tag", "pod", "unshare"},
		"rsync":   nil, // by its operands: host:path or rsync://
		"getent":  nil, // by its database: hosts, ahosts …
		"ss":      nil, // by its filter: a host named in dst/src, a filter file
		// openssl connects for s_client, s_server, s_time, ocsp, …
		"openssl": {"x509", "verify", "version", "list", "crl", "asn1parse", "ciphers", "dgst", "req", "genrsa", "genpkey",
			"rsa", "pkey", "pkeyutl", "ec", "ecparam", "enc", "rand", "passwd", "pkcs12", "pkcs7", "pkcs8", "crl2pkcs7",
			"base64", "md5", "sha1", "sha256", "sha512", "dhparam", "dsa", "dsaparam", "gendsa", "rsautl", "smime", "cms",
			"speed", "errstr", "help", "storeutl", "kdf", "mac", "prime", "spkac", "nseq", "sess_id", "ts", "info"},
		"kubectl":    {"config", "completion", "kustomize", "plugin", "options", "help"},
		"helm":       {"version", "env", "completion", "lint", "create", "package", "template", "help", "dependency"},
		"terraform":  {"fmt", "validate", "version", "graph", "providers", "help", "-help", "-version"},
		"resolvectl": {"status", "statistics", "reset-statistics", "flush-caches", "reset-server-features", "monitor", "help", "log-level", "dns", "domain", "default-route", "llmnr", "mdns", "dnssec", "dnsovertls", "nta", "revert"},
	}
)

// connects records whether name with args connects to another host, and
// rates it: a step that sends data off the host changes nothing here,
// but only a person or --approve medium may let data leave (Medium); one
// whose arguments are computed when it runs may send anything it can
// read (High: dig "$(tr -dc a-z < ~/.npmrc).x" leaks a token through DNS).
func (c *classifier) connects(name string, args []arg, e env) {
	why := c.connectsWhy(name, args)
	if why == "" {
		return
	}
	if e.xargs != "" {
		c.opaque("%s %s: what it sends off the host is read from input when it runs", e.xargs, name)
	}
	c.network = append(c.network, why)
	c.add(Medium, "%s: sends data off the host (it changes nothing here, but only a person or --approve medium may let data leave)", why)
	if name == "virsh" && strings.Contains(strings.ToLower(why), "+ext:") {
		c.add(High, "%s: libvirt's ext transport runs the command the URI names", why)
	}
	for _, a := range args {
		if !a.static {
			c.opaque("%s %s: what it sends off the host is computed when it runs", name, a.text)
			return
		}
	}
}

// netValueOptions are the options before a subcommand that take the next
// word as their value (git -C DIR status), so that it is not taken for
// the subcommand.
var netValueOptions = map[string][]string{"git": {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
	"--config-env"}, "kubectl": {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server"},
	"helm": {"-n", "--namespace", "--kube-context", "--kubeconfig"}, "docker": {"-H", "--host", "-c", "--context", "--config"},
	"podman": {"--url", "-c", "--connection"}}

// connectsWhy names what connects out ("dig", "git fetch"), or "".
func (c *classifier) connectsWhy(name string, args []arg) string {
	if onlyVersion(args) {
		return ""
	}
	if slices.Contains(netPrograms, name) {
		return name
	}
	if name == "virsh" {
		return virshConnects(args)
	}
	local, ok := netLocal[name]
	if !ok {
		return ""
	}
	switch name {
	case "rsync":
		for _, a := range args {
			if !a.static || !strings.HasPrefix(a.val, "-") && strings.Contains(a.val, ":") {
				return name
			}
		}
		return ""
	case "ss":
		// A filter's host (dst NAME, src NAME) is looked up by the
		// resolver, through nscd's or systemd-resolved's socket where the
		// host has one (past the seccomp filter); a filter file (-F) may
		// name one.
		for i, a := range args {
			switch {
			case !a.static:
				return name + " " + a.text
			case strings.HasPrefix(a.val, "--filter") || strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "--") && strings.Contains(a.val, "F"):
				return name + " " + a.val
			case (a.val == "dst" || a.val == "src") && i+1 < len(args) && namedHost(args[i+1].val):
				return name + " " + a.val + " " + args[i+1].val
			}
		}
		return ""
	case "getent":
		// Host and network lookups go through DNS (and through
		// systemd-resolved's socket, which the kernel layer cannot tell
		// from a local one).
		// -s/--service takes the next word (getent -s dns hosts x):
		// not the database.
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a.static && (a.val == "--service" || strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "--") && strings.HasSuffix(a.val, "s")) {
				i++
				continue
			}
			if a.static && strings.HasPrefix(a.val, "-") {
				continue
			}
			if !a.static || slices.Contains([]string{"hosts", "ahosts", "ahostsv4", "ahostsv6", "networks"}, a.val) {
				return name + " " + a.text
			}
			return ""
		}
		return ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.static:
			return name + " " + a.text
		case strings.HasPrefix(a.val, "-"):
			if slices.Contains(netValueOptions[name], a.val) {
				i++ // its value
			}
			continue // an option before the subcommand
		case name == "git" && a.val == "remote":
			// git remote [-v] [add|rename|remove|get-url|set-url …] is
			// local; show (without -n), update and prune ask the remote.
			for _, b := range args[i+1:] {
				switch {
				case !b.static:
					return name + " remote " + b.text
				case b.val == "-n" && slices.ContainsFunc(args[i+1:], func(x arg) bool { return x.val == "show" }):
					return ""
				case strings.HasPrefix(b.val, "-"):
				case b.val == "show" || b.val == "update" || b.val == "prune":
					if b.val == "show" && slices.ContainsFunc(args[i+1:], func(x arg) bool { return x.static && x.val == "-n" }) {
						return ""
					}
					return name + " remote " + b.val
				default:
					return ""
				}
			}
			return ""
		case slices.Contains(local, a.val):
			return ""
		}
		return name + " " + a.val
	}
	if name == "resolvectl" || name == "openssl" {
		return "" // a bare resolvectl shows its status; a bare openssl asks for commands
	}
	return name
}

// virshConnects names virsh's connection when it is to another host
// (-c qemu+ssh://host/system, qemu://host/system over TLS, an alias of
// libvirt.conf, which may name any host, a computed one), or "": a local
// URI (qemu:///system, qemu+unix:///session) or no -c. Only virsh's own
// options are read: those before its command.
func virshConnects(args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return "virsh " + a.text
		}
		var uri arg
		switch {
		case a.val == "-c" || a.val == "--connect":
			if i+1 >= len(args) {
				return ""
			}
			i++
			uri = args[i]
		case strings.HasPrefix(a.val, "--connect="):
			uri = arg{static: true, val: strings.TrimPrefix(a.val, "--connect="), text: a.text}
		case strings.HasPrefix(a.val, "--"):
			continue
		case strings.HasPrefix(a.val, "-"):
			// short options bundled as getopt reads them (-rc URI,
			// -qcURI); -d, -e, -k, -K and -l take a value too
			j := strings.IndexAny(a.val[1:], "cdekKl") + 1
			if j == 0 {
				continue
			}
			if rest := a.val[j+1:]; rest != "" {
				uri = arg{static: true, val: rest, text: a.text}
			} else if i+1 < len(args) {
				i++
				uri = args[i]
			} else {
				return ""
			}
			if a.val[j] != 'c' {
				continue // another option's value
			}
		default:
			return "" // its command: what follows is the command's
		}
		if !uri.static || !libvirtLocal(uri.val) {
			return "virsh -c " + uri.text
		}
	}
	return ""
}

// libvirtLocal reports whether a libvirt URI connects on this host:
// driver[+transport]://[host]/path with no host and no transport but
// unix.
func libvirtLocal(uri string) bool {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return false // an alias (uri_aliases in libvirt.conf)
	}
	if _, transport, ok := strings.Cut(scheme, "+"); ok && transport != "unix" {
		return false
	}
	return strings.HasPrefix(rest, "/")
}

// findTrees records the directories find walks (its operands before the
// expression, "." when there are none) as read trees, and as written trees
// when it deletes; the commands -exec runs act on files under them.
func (c *classifier) findTrees(args []arg) []arg {
	var roots []arg
	for _, a := range args {
		if a.static && (strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" || a.val == ")") {
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []arg{{val: ".", text: ".", static: true}}
	}
	deletes := slices.ContainsFunc(args, func(a arg) bool { return a.static && a.val == "-delete" })
	for _, r := range roots {
		if !r.static {
			c.opaque("find %s: start directory is not statically resolvable", r.text)
			continue
		}
		c.tree(r, deletes)
	}
	return roots
}

// tree records a touch of the whole tree under the places a names.
func (c *classifier) tree(a arg, write bool) {
	for _, pl := range c.places(a) {
		if pl.lost {
			c.opaque("%s: path in another process's working directory", a.text)
			continue
		}
		if pl.unknown != "" {
			l := Medium
			if write {
				l = High
			}
			c.add(l, "%s: %s", a.text, pl.unknown)
			continue
		}
		if len(c.touched) < maxTouched {
			c.touched = append(c.touched, Touch{Path: pl.p, Raw: rawTouch(pl), Op: writeOp(write), Tree: true})
		}
	}
}

// findOperand reports an operand of a command find -exec runs that names
// the found file ({}): its touch is the tree find walks.
func (c *classifier) findOperand(a arg, write bool) bool {
	if c.findRoots == nil || !a.static || !strings.Contains(a.val, "{}") {
		return false
	}
	for _, r := range c.findRoots {
		if r.static {
			c.tree(r, write)
		}
	}
	return true
}

// relTouch is the path a touch records for a place: relative places stay
// relative to where the step starts (the executor knows where that is).
func relTouch(pl place) string {
	if pl.rel {
		return path.Clean(pl.p)
	}
	return pl.p
}

// rawTouch is Touch.Raw for a place: its raw path, from "~" in the home
// directory.
func rawTouch(pl place) string {
	if pl.raw == "" {
		return ""
	}
	return fromHome([]string{pl.raw})[0]
}

// programPath is how Analysis.Programs names a program file: relative
// paths start with "./" or "../", so that they differ from a command name.
func programPath(pl place) string {
	p := relTouch(pl)
	if pl.rel && !climbs(p) {
		return "./" + p
	}
	return p
}

// recursiveWriters are the writers that act on a whole tree with one of
// these options (none listed: always).
var recursiveWriters = map[string][]string{
	"rm": {"-r", "-R", "--recursive"}, "chmod": {"-R", "--recursive"}, "chown": {"-R", "--recursive"},
	"chgrp": {"-R", "--recursive"}, "setfacl": {"-R", "--recursive"}, "chattr": {"-R"},
	"cp": {"-r", "-R", "-a", "--recursive", "--archive"}, "rsync": {"-r", "-a", "--recursive", "--archive"},
	"shred": nil,
}

// recursiveWrite reports whether the command writes whole trees.
func (c *classifier) recursiveWrite(name string, s scanned, args []arg) bool {
	flags, ok := recursiveWriters[name]
	if !ok {
		return false
	}
	if len(flags) == 0 {
		return name != "shred"
	}
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			if slices.Contains(flags, f) {
				return true
			}
			// a cluster (-rf, -Rv)
			if len(f) > 2 && f[0] == '-' && f[1] != '-' {
				for _, ch := range f[1:] {
					if slices.Contains(flags, "-"+string(ch)) {
						return true
					}
				}
			}
		}
	}
	return false
}

// namedHost reports whether an ss filter's address (HOST, HOST:PORT,
// [V6]:PORT, PREFIX/LEN) names a host rather than giving its address.
func namedHost(a string) bool {
	h := a
	switch {
	case strings.HasPrefix(h, "["):
		h, _, _ = strings.Cut(h[1:], "]")
	case strings.Count(h, ":") == 1:
		h, _, _ = strings.Cut(h, ":")
	}
	h, _, _ = strings.Cut(h, "/")
	for _, r := range h {
		switch {
		case r >= 'g' && r <= 'z' || r >= 'G' && r <= 'Z':
			return true
		case (r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') && !strings.Contains(h, ":"):
			return true // hex letters outside an IPv6 address
		}
	}
	return false
}
