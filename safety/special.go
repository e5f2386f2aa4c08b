package safety

import (
	"path"
	"slices"
	"strings"
)

// special applies the rules of commands whose arguments need more than the
// policy's lists, and says how the remaining operands are to be read.
func (c *classifier) special(name string, s scanned, args []arg, e env) role {
	r := role{}
	for _, key := range s.keys {
		if m, ok := c.p.WriteOperands[key]; ok {
			r.write = m
		}
	}
	if slices.Contains(c.p.PatternCommands, name) {
		r.skip = 1
		for _, i := range s.opts {
			for _, opt := range []string{"-e", "-f", "--regexp", "--file", "--expression", "--source", "--from-file"} {
				if _, j, ok := s.value(args, i, opt); ok {
					r.skip = 0
					r.values = append(r.values, j)
				}
			}
		}
	}
	ops := func(yield func(int, arg) bool) {
		for _, i := range s.operands {
			if !slices.Contains(r.values, i) && !yield(i, args[i]) {
				return
			}
		}
	}
	// Options that move where the command works: later relative paths
	// are taken from there (git -C DIR, tar -C DIR, make -C DIR).
	for _, i := range s.opts {
		for _, opt := range chdirOptions[name] {
			if v, _, ok := s.value(args, i, opt); ok {
				c.cd([]arg{v})
			}
		}
	}
	switch name {
	case "find":
		roots := c.findTrees(args)
		outer := c.findRoots
		c.findRoots = roots
		c.findExec(args, e)
		c.findRoots = outer
	case "awk", "gawk", "mawk", "nawk":
		c.awk(name, s, args, &r, e)
	case "sed":
		c.sed(s, args, &r, e)
		if r.write == "all" {
			r.backup, r.backupAll = c.sedBackupSuffix(s, args), true
		}
	case "date", "hostname", "sysctl":
		r.noPath = true
		for _, a := range ops {
			switch {
			case name == "date" && a.static && !strings.HasPrefix(a.val, "+"):
				c.add(High, "date %s: sets the system clock", a.text)
			case name == "hostname":
				c.add(High, "hostname %s: sets the host name", a.text)
			case name == "sysctl" && (!a.static || strings.Contains(a.val, "=")):
				c.add(High, "sysctl %s: changes a kernel parameter", a.text)
			case name == "sysctl" && (strings.Contains(a.val, "/") && strings.Contains(a.val, "..") || strings.Contains(a.val, "~")):
				c.add(High, "sysctl %s: names a file outside /proc/sys", a.text)
			}
		}
	case "chmod", "chown", "chgrp":
		for _, i := range s.opts {
			for _, v := range s.forms(args, i) {
				if strings.HasPrefix(v, "--reference") {
					// No mode or owner operand: another file's, which
					// may let others write.
					r.opens = name + " " + args[i].text + " copies another file's " + map[bool]string{true: "mode", false: "owner"}[name == "chmod"] +
						" (which may let other users write it)"
					return r
				}
			}
		}
		for i, a := range ops {
			r.values = append(r.values, i) // the mode or owner
			if name != "chmod" {
				r.opens = name + " " + a.text + " gives it to another owner"
				break
			}
			if a.static && setuid(a.val) {
				c.add(High, "chmod %s: sets the setuid/setgid bit", a.text)
			}
			r.opens = c.modeOpens("chmod", a)
			break
		}
	case "mv", "install":
		r.backup = c.backupSuffix(name, s, args)
		c.copyTargets(name, s, args)
		if name == "install" {
			r.opens = c.setidOption(name, s, args)
		}
	case "mkdir":
		r.opens = c.setidOption(name, s, args)
	case "truncate":
		c.truncate(s, args, &r)
	case "dd":
		r.noPath = true
		for _, a := range ops {
			if k, v, ok := strings.Cut(a.val, "="); ok && a.static {
				va := arg{val: v, text: a.text, static: true, tilde: strings.HasPrefix(v, "~")}
				switch k {
				case "of":
					c.write("dd", va, wContent)
				case "if":
					c.read("dd", va)
				}
			}
		}
	case "trap", "alias":
		r.noPath = true
		if len(s.operands) > 0 && (name == "alias" || len(s.operands) > 1) {
			c.add(Medium, "%s: defines code that runs later or replaces a command name", name)
		}
		c.codeOperands(name, s, args, e)
	case "eval":
		r.noPath = true
		c.codeOperands(name, s, args, e)
	case "kill":
		r.noPath = true
		c.kill(args)
	case "set":
		r.noPath = true
		for _, a := range args {
			if !a.static {
				c.add(Medium, "set %s: not statically resolvable", a.text)
				continue
			}
			v := a.val
			if len(v) > 1 && (v[0] == '-' || v[0] == '+') && v[1] != '-' && v[1] != 'o' && strings.ContainsAny(v, "akBHT") ||
				slices.Contains([]string{"allexport", "keyword", "posix", "braceexpand", "histexpand", "functrace",
					"errtrace"}, v) {
				c.add(Medium, "set %s: changes how the shell reads or runs later code", a.text)
			}
			if strings.HasPrefix(v, "-") && strings.Contains(v, "a") && v[1] != '-' && v[1] != 'o' || v == "allexport" {
				c.allexport = true
			}
		}
	case "shopt", "enable":
		for _, a := range args {
			if a.static && (a.val == "-s" || a.val == "-u" || strings.HasPrefix(a.val, "-") && strings.ContainsAny(a.val, "su")) {
				c.add(Medium, "%s %s: changes how the shell reads or runs later code", name, a.text)
				break
			}
		}
	case "ps":
		c.ps(s, args, &r)
	case "service":
		for _, a := range args {
			if a.static && strings.HasPrefix(a.val, "-") {
				continue
			}
			if !a.static || strings.ContainsAny(a.val, "/") || a.val == ".." {
				c.opaque("service %s: runs a script outside the init directory", a.text)
			}
			break
		}
	case "curl", "wget":
		c.downloadNames(name, s, args, r)
		for _, a := range ops {
			if !a.static {
				continue
			}
			if scheme, _, ok := strings.Cut(a.val, "://"); ok && !slices.Contains([]string{"http", "https", "ftp", "ftps"},
				strings.ToLower(scheme)) {
				c.add(High, "%s %s: a %s:// URL can send anything to another host", name, a.text, scheme)
				c.network = append(c.network, name)
			}
		}
	case "tmux":
		for _, a := range args {
			if a.static && (a.val == ";" || strings.HasSuffix(a.val, ";")) {
				c.opaque("tmux %s: runs a further tmux command, which can start programs", a.text)
			}
		}
	case "vi", "vim", "nvim", "ex", "view", "vim.basic", "vim.tiny", "less", "more":
		for _, i := range s.operands {
			if a := args[i]; a.static && strings.HasPrefix(a.val, "+") || !a.static {
				c.opaque("%s %s: runs an editor or pager command, which can start programs", name, a.text)
			}
		}
	case "read", "mapfile", "readarray", "getopts", "printf":
		for _, a := range args {
			if a.static && isAssignment(a.val+"=") && c.p.dangerousEnv(a.val) {
				c.opaque("%s %s: sets a variable that changes how commands run", name, a.text)
			}
		}
		r.noPath = name != "printf"
		c.codeOperands(name, s, args, e)
		for _, i := range s.opts {
			if v, _, ok := s.value(args, i, "-v"); ok && name == "printf" && !v.static {
				c.add(High, "printf -v %s: variable name is not statically resolvable", v.text)
			}
		}
	case "jq":
		c.jq(s, args, &r)
	case "docker", "podman":
		c.containerMounts(name, s, args)
		c.containerExec(name, s, args, e)
	case "kubectl":
		// A bare "secret" after get/describe is a subcommand rule;
		// secret/NAME and lists (pods,secrets) are checked here.
		if slices.Contains(s.keys, "kubectl get") || slices.Contains(s.keys, "kubectl describe") {
			for _, a := range args {
				if a.static && !isOption(a) && strings.ContainsAny(a.val, "/,") && kubeSecret(a.val) {
					c.add(High, "kubectl %s: reads secrets", a.text)
				}
			}
			c.kubeEnv(s, args)
		}
	case "resolvectl":
		// resolvectl dns|domain [IFACE] shows; with servers or domains
		// after the interface it sets them.
		if slices.Contains(s.keys, "resolvectl dns") || slices.Contains(s.keys, "resolvectl domain") {
			if len(s.operands) >= 2 {
				c.add(High, "%s %s: sets the interface's DNS settings", s.shown, args[s.operands[0]].text)
			}
		}
	case "cd", "pushd":
		c.cd(args)
	case "ln", "cp":
		c.linkOperands(name, s, args)
		r.backup = c.backupSuffix(name, s, args)
		if name == "cp" {
			c.copyTargets(name, s, args)
		}
	case "popd":
		c.cwdLost = true
	case "git":
		if slices.Contains(s.keys, "git config") {
			for _, a := range args {
				if a.static && gitConfigRuns(a.val) {
					c.add(High, "git config %s: configures a command to run", a.text)
				}
			}
		}
	}
	return r
}

// jq: --arg, --argjson, --slurpfile and --rawfile take a name and a value
// (the scan skipped the name); --slurpfile and --rawfile read the value as
// a file.
func (c *classifier) jq(s scanned, args []arg, r *role) {
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			if !slices.Contains([]string{"--arg", "--argjson", "--slurpfile", "--rawfile"}, f) || i+2 >= len(args) {
				continue
			}
			r.values = append(r.values, i+2)
			if f == "--slurpfile" || f == "--rawfile" {
				c.read("jq "+f, args[i+2])
			}
		}
	}
}

// codeOperands classifies the code that trap, alias, eval and mapfile -C
// run later.
func (c *classifier) codeOperands(name string, s scanned, args []arg, e env) {
	switch name {
	case "trap":
		for _, i := range s.opts {
			if v := args[i].val; v == "-p" || v == "-l" || v == "-P" {
				return
			}
		}
		if len(s.operands) > 1 {
			c.codeArg("trap", args[s.operands[0]], e)
		}
	case "alias":
		for _, i := range s.operands {
			a := args[i]
			if !a.static {
				c.opaque("alias %s: not statically resolvable", a.text)
			} else if n, v, ok := strings.Cut(a.val, "="); ok {
				c.codeArg("alias "+n, arg{val: v, text: a.text, static: true}, e)
				c.aliases[n] = v
			}
		}
	case "eval":
		var b strings.Builder
		for _, i := range s.operands {
			if !args[i].static {
				return // High already; the code is unknown
			}
			b.WriteString(args[i].val + " ")
		}
		c.codeArg("eval", arg{val: b.String(), static: true}, e)
	case "mapfile", "readarray":
		for _, i := range s.opts {
			if v, _, ok := s.value(args, i, "-C"); ok {
				c.codeArg(name+" -C", v, e)
			}
		}
	}
}

func setuid(mode string) bool {
	if isDigits(mode) {
		return octalSetid(mode)
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		// "u+s", "g=s", and the octal form after an operator (GNU
		// chmod's "=4755", "+4000"; session 15: `chmod =4755 f` and
		// `chmod 04755 f` were medium).
		if op := clause[i+1:]; strings.Contains(op, "s") || isDigits(op) && octalSetid(op) {
			return true
		}
	}
	return false
}

// octalSetid reports whether the octal digits m set the set-user-ID or
// set-group-ID bit (leading zeros allowed: 04755, 0002755).
func octalSetid(m string) bool {
	m = strings.TrimLeft(m, "0")
	return len(m) >= 4 && strings.ContainsAny(m[len(m)-4:len(m)-3], "234567")
}

func gitConfigRuns(key string) bool {
	key = strings.ToLower(key)
	for _, p := range []string{"alias.", "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor",
		"core.hookspath", "core.gitproxy", "core.askpass", "diff.external", "credential.", "sequence.editor",
		"filter.", "gpg.", "uploadpack.", "pager.", "difftool.", "mergetool.", "web.browser",
		// Session 14: drivers and helpers git runs later (a safe `git
		// diff` runs a textconv; `git submodule update` runs a
		// submodule's `!cmd`), configuration loaded from elsewhere
		// (include.path: its file may set any of these), where git
		// works or what it allows (core.worktree, protocol.ext.allow),
		// and the porcelains that start programs.
		"include.", "includeif.", "core.attributesfile", "core.worktree", "protocol.", "sendemail.", "instaweb.",
		"browser.", "man.", "guitool.", "gui.", "trailer.", "receive.procreceiverefs"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	for _, d := range []struct{ prefix, suffix string }{{"diff.", ".textconv"}, {"diff.", ".command"}, {"merge.", ".driver"},
		{"remote.", ".uploadpack"}, {"remote.", ".receivepack"}, {"remote.", ".vcs"}, {"remote.", ".proxy"}, {"submodule.", ".update"}} {
		if strings.HasPrefix(key, d.prefix) && strings.HasSuffix(key, d.suffix) {
			return true
		}
	}
	return false
}

// findExec classifies the commands find runs with -exec, -execdir, -ok
// and -okdir (find's rule already makes them High).
func (c *classifier) findExec(args []arg, e env) {
	for i := 0; i < len(args); i++ {
		if !args[i].static || !slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, args[i].val) {
			continue
		}
		j := i + 1
		for j < len(args) && !(args[j].static && (args[j].val == ";" || args[j].val == "+")) {
			j++
		}
		e.xargs = ""
		c.argv(args[i+1:j], e.under("find "+args[i].val+" runs it once per file found"))
		i = j
	}
}

var (
	awkInplace  = []string{"-i", "--include", "-l", "--load"}
	awkProgFile = []string{"-f", "--file", "-E", "--exec"}
)

// awk classifies an awk program by its syntax tree (scanAwk): system(),
// print | cmd and cmd | getline run commands, each classified as the
// shell code it is (a computed one is High); print > FILE writes;
// getline < FILE reads. A program that does not parse is High: what it
// does cannot be known.
func (c *classifier) awk(name string, s scanned, args []arg, r *role, e env) {
	var progs []arg
	fromFile := false
	for _, i := range s.opts {
		for _, opt := range []string{"-e", "--source"} {
			if v, j, ok := s.value(args, i, opt); ok {
				progs = append(progs, v)
				r.values = append(r.values, j)
			}
		}
		for _, opt := range awkProgFile {
			if v, j, ok := s.value(args, i, opt); ok {
				c.programFile(name+" "+opt, v, e)
				r.skip, r.values = 0, append(r.values, j)
				fromFile = true
			}
		}
		for _, opt := range awkInplace {
			if v, j, ok := s.value(args, i, opt); ok {
				r.values = append(r.values, j)
				if v.static && v.val == "inplace" {
					r.write = "all"
				} else {
					c.opaque("%s %s %s: loads an extension", name, opt, v.text)
				}
			}
		}
	}
	if len(progs) == 0 && r.skip == 1 && len(s.operands) > 0 {
		progs = append(progs, args[s.operands[0]])
	}
	var src []string
	for _, p := range progs {
		if !p.static {
			c.opaque("%s: program %s is not statically resolvable", name, p.text)
			return
		}
		src = append(src, p.val)
	}
	if len(src) == 0 {
		return
	}
	sc := scanAwk(strings.Join(src, "\n"))
	if sc.err != nil {
		why := "program not understood"
		if fromFile {
			why = "program (with a program file) not understood"
		}
		c.opaque("%s: %s, so what it runs or writes cannot be known: %v", name, why, sc.err)
		return
	}
	c.awkEffects(name, sc, e)
}

// awkEffects classifies what an awk program runs, writes and reads.
func (c *classifier) awkEffects(name string, sc awkScan, e env) {
	if sc.argv {
		c.opaque("%s: program changes ARGV, so the files it reads are computed when it runs", name)
	}
	if sc.environ && len(sc.execs) > 0 {
		c.opaque("%s: program changes ENVIRON for the commands it runs", name)
	}
	for _, t := range sc.execs {
		if !t.static {
			c.opaque("%s: program runs a computed command (%s %s)", name, t.how, t.text)
			continue
		}
		c.add(Medium, "%s: program runs a command (%s %q)", name, t.how, shorten(t.val))
		ce := e.under(name + " runs it, once per input line or more")
		if t.how == "print |" || t.how == "printf |" {
			ce.stdin = input{kind: inPipe, text: name}
		}
		c.codeArg(name+" "+t.how, arg{val: t.val, text: t.text, static: true}, ce)
	}
	for _, t := range sc.writes {
		switch {
		case !t.static:
			c.opaque("%s: program writes to a computed file name (%s %s)", name, t.how, t.text)
		case awkNetwork(t.val):
			c.add(High, "%s %s %q: connects to another host", name, t.how, t.val)
			c.network = append(c.network, name+" "+t.val)
		default:
			c.write(name+" "+t.how, arg{val: t.val, text: t.text, static: true}, wContent)
		}
	}
	for _, t := range sc.reads {
		switch {
		case !t.static:
			c.opaque("%s: program reads a computed file name (%s %s)", name, t.how, t.text)
		case awkNetwork(t.val):
			c.add(High, "%s %s %q: connects to another host", name, t.how, t.val)
			c.network = append(c.network, name+" "+t.val)
		case t.val == "-" || t.val == "/dev/stdin":
		default:
			c.read(name+" "+t.how, arg{val: t.val, text: t.text, static: true})
		}
	}
}

// sed classifies a sed script: e and s///e run commands, w writes, r
// reads; -i makes the operands writes.
func (c *classifier) sed(s scanned, args []arg, r *role, e env) {
	var progs []arg
	for _, i := range s.opts {
		for _, v := range s.forms(args, i) {
			if v == "--in-place" || strings.HasPrefix(v, "--in-place=") || sedInPlace(v) {
				r.write = "all"
			}
		}
		for _, opt := range []string{"-e", "--expression"} {
			if p, _, ok := s.value(args, i, opt); ok {
				progs = append(progs, p)
			}
		}
		for _, opt := range []string{"-f", "--file"} {
			if p, _, ok := s.value(args, i, opt); ok {
				c.programFile("sed "+opt, p, e)
			}
		}
	}
	if r.skip == 1 && len(s.operands) > 0 {
		progs = append(progs, args[s.operands[0]])
	}
	for _, p := range progs {
		if !p.static {
			c.opaque("sed: program %s is not statically resolvable", p.text)
			continue
		}
		sc := scanSed(p.val)
		if sc.exec {
			c.opaque("sed: program runs commands (e)")
		}
		if !sc.ok {
			c.opaque("sed: program %s not understood, so what it runs or writes cannot be known", p.text)
		}
		for _, w := range sc.writes {
			c.write("sed w", arg{val: w, text: w, static: true}, wContent)
		}
		for _, rd := range sc.reads {
			c.read("sed r", arg{val: rd, text: rd, static: true})
		}
	}
}

// sedInPlace reports -i inside a short-option cluster like -ni or -i.bak,
// stopping at letters that take a value.
func sedInPlace(v string) bool {
	if strings.HasPrefix(v, "--") {
		return false
	}
	for _, ch := range v[1:] {
		switch ch {
		case 'i':
			return true
		case 'e', 'f', 'l':
			return false
		}
	}
	return false
}

// programFile classifies an awk or sed program read from a file: Medium,
// High when it comes from standard input fed by a pipe.
func (c *classifier) programFile(who string, a arg, e env) {
	if a.static && (a.val == "-" || isStdinPath(a)) {
		c.stdinCode(who, e, false)
		return
	}
	c.runs(who, a)
	c.read(who, a)
}

// containerMounts flags bind mounts of system paths into a container
// (docker run -v /:/host): the container can then change the host.
func (c *classifier) containerMounts(name string, s scanned, args []arg) {
	for _, i := range s.opts {
		for _, opt := range []string{"-v", "--volume", "--mount"} {
			v, _, ok := s.value(args, i, opt)
			if !ok || !v.static {
				continue
			}
			host, _, _ := strings.Cut(v.val, ":")
			if opt == "--mount" {
				host = ""
				for _, kv := range strings.Split(v.val, ",") {
					if k, val, _ := strings.Cut(kv, "="); k == "source" || k == "src" {
						host = val
					}
				}
			}
			if strings.HasPrefix(host, "/") && c.p.underSystem(path.Clean(host), false) {
				c.add(High, "%s %s %s: mounts a system path into a container", name, opt, v.text)
			}
		}
	}
}

// kubeSecret reports a kubectl resource operand naming secrets:
// secret/NAME, secrets.v1/NAME, or a list such as pods,secrets.
// kubeWorkloads are the kinds whose objects hold pod templates, and so
// their containers' literal environment values.
var kubeWorkloads = []string{"pod", "pods", "po", "deployment", "deployments", "deploy", "statefulset", "statefulsets",
	"sts", "daemonset", "daemonsets", "ds", "replicaset", "replicasets", "rs", "job", "jobs", "cronjob", "cronjobs", "cj",
	"replicationcontroller", "replicationcontrollers", "rc", "podtemplate", "podtemplates", "all"}

// kubeEnv rates high what prints workloads' environments (session 14,
// as docker inspect): `kubectl describe pod` shows each container's
// env values, `kubectl get deploy -o yaml` (json, a template, jsonpath,
// custom columns) the whole pod template. `get` in a table (-o wide,
// name) shows none.
func (c *classifier) kubeEnv(s scanned, args []arg) {
	workload := false
	for _, a := range args {
		if !a.static || isOption(a) {
			continue
		}
		kind, _, _ := strings.Cut(a.val, "/")
		for _, k := range strings.Split(kind, ",") {
			k, _, _ = strings.Cut(strings.ToLower(k), ".")
			workload = workload || slices.Contains(kubeWorkloads, k)
		}
	}
	if !workload {
		return
	}
	if slices.Contains(s.keys, "kubectl describe") {
		c.add(High, "kubectl describe: prints containers' environment values (their secrets)")
		return
	}
	for _, i := range s.opts {
		for _, opt := range []string{"-o", "--output"} {
			v, _, ok := s.value(args, i, opt)
			if !ok {
				continue
			}
			f, _, _ := strings.Cut(v.val, "=")
			if !v.static || !slices.Contains([]string{"wide", "name"}, f) {
				c.add(High, "kubectl get -o %s: prints containers' environment values (their secrets)", v.text)
				return
			}
		}
	}
}

func kubeSecret(v string) bool {
	kind, _, _ := strings.Cut(v, "/")
	for _, k := range strings.Split(kind, ",") {
		k, _, _ = strings.Cut(strings.ToLower(k), ".")
		if k == "secret" || k == "secrets" {
			return true
		}
	}
	return false
}

// containerExec classifies the command docker exec runs in a container
// like one run here (its paths are the container's, which only makes the
// check stricter): docker exec web sh -c 'rm -rf /data' is High.
func (c *classifier) containerExec(name string, s scanned, args []arg, e env) {
	if !slices.Contains(s.keys, name+" exec") && !slices.Contains(s.keys, name+" container exec") {
		return
	}
	if len(s.operands) == 0 {
		return
	}
	// The first operand is the container; the words after it are the
	// command and its own options.
	if inner := args[s.operands[0]+1:]; len(inner) > 0 {
		e.xargs = ""
		c.argv(inner, e.under(name+" exec runs it in a container, on another file system"))
	}
}

// kill: the signal is the first option word (-9, -KILL, -Kill, -sKILL,
// -s KILL, -n 9, --signal=KILL, any case, with or without SIG); KILL is
// High, as are process ids that name groups (-1 is every process of the
// user, -PGID a group). A signal word that cannot be read is High.
func (c *classifier) kill(args []arg) {
	i, sig := 0, ""
	if len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") && args[0].val != "--" {
		v := args[0].val
		switch {
		case v == "-l" || v == "-L" || v == "--list" || v == "--table" || strings.HasPrefix(v, "--list="):
			return
		case v == "-s" || v == "-n" || v == "--signal":
			if len(args) < 2 || !args[1].static {
				c.add(High, "kill %s: signal is not statically resolvable", v)
				return
			}
			sig, i = args[1].val, 2
		case strings.HasPrefix(v, "--signal="):
			sig, i = strings.TrimPrefix(v, "--signal="), 1
		case strings.HasPrefix(v, "-s") && len(v) > 2 && !isDigits(v[2:]) && !strings.HasPrefix(strings.ToUpper(v[1:]), "SIG"):
			sig, i = v[2:], 1
		case strings.HasPrefix(v, "-n") && len(v) > 2 && isDigits(v[2:]):
			sig, i = v[2:], 1
		default:
			sig, i = v[1:], 1
		}
	}
	norm := strings.TrimPrefix(strings.ToUpper(sig), "SIG")
	switch {
	case norm == "KILL" || norm == "9":
		c.add(High, "kill -%s: forced kill", sig)
	case sig != "" && !isDigits(norm) && !slices.Contains(signalNames, norm):
		c.add(High, "kill -%s: signal not known", sig)
	}
	for _, a := range args[i:] {
		switch {
		case !a.static:
			c.add(High, "kill %s: process is not statically resolvable", a.text)
		case a.val == "--":
		case strings.HasPrefix(a.val, "-") || a.val == "0":
			c.add(High, "kill %s: signals a process group (-1: every process of the user)", a.text)
		}
	}
}

var signalNames = []string{"HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "USR1", "SEGV",
	"USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU",
	"XFSZ", "VTALRM", "PROF", "WINCH", "IO", "POLL", "PWR", "SYS", "0"}

// ps: BSD-style operands are options ("ps aux"); e and -o environ show
// every process's environment, where secrets live.
func (c *classifier) ps(s scanned, args []arg, r *role) {
	r.noPath = true
	for _, i := range s.operands {
		a := args[i]
		switch {
		case !a.static:
			c.add(High, "ps %s: not statically resolvable", a.text)
		case isDigits(strings.ReplaceAll(a.val, ",", "")):
		case strings.Trim(a.val, "auxwfjlsvmrTHLcnhSqtgGrZ") != "":
			c.add(High, "ps %s: shows other processes' environment or is not known to be read-only", a.text)
		}
	}
	for _, i := range s.opts {
		for _, opt := range []string{"-o", "-O", "--format"} {
			if v, _, ok := s.value(args, i, opt); ok && (!v.static || strings.Contains(strings.ToLower(v.val), "env")) {
				c.add(High, "ps %s: shows other processes' environment", v.text)
			}
		}
	}
}

// chdirOptions are the options that change a command's working directory.
var chdirOptions = map[string][]string{"git": {"-C"}, "tar": {"-C", "--directory"}, "make": {"-C", "--directory"},
	"env": {"-C", "--chdir"}, "sudo": {"-D", "--chdir"}}

// linkOperands: ln, and cp -s/-l, make links; what they link to becomes
// writable through the link.
func (c *classifier) linkOperands(name string, s scanned, args []arg) {
	makes, dir := name == "ln", ""
	var dirArg arg
	var how linkHow
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			short := !strings.HasPrefix(f, "--") && strings.HasPrefix(f, "-")
			if name == "cp" && (f == "--symbolic-link" || f == "--link" || short && strings.ContainsAny(f[1:], "sl")) {
				makes = true
			}
			if f == "--symbolic" || f == "--symbolic-link" || short && strings.Contains(f[1:], "s") {
				how.symbolic = true
			}
			if name == "ln" && (f == "--relative" || short && strings.Contains(f[1:], "r")) {
				how.relative = true
			}
			if f == "--no-target-directory" || short && noTargetDirCluster(f[1:]) {
				how.noTargetDir = true
			}
		}
		for _, opt := range []string{"-t", "--target-directory"} {
			if v, _, ok := s.value(args, i, opt); ok {
				dir, dirArg = opt, v
			}
		}
	}
	if !makes {
		return
	}
	var ops []arg
	for _, i := range s.operands {
		ops = append(ops, args[i])
	}
	switch {
	case dir != "":
		c.link(name, ops, dirArg, true, how)
	case len(ops) == 1:
		c.link(name, ops, arg{val: ".", static: true}, true, how)
	case len(ops) > 1:
		last := ops[len(ops)-1]
		into := len(ops) > 2 || last.static && (strings.HasSuffix(last.val, "/") || last.val == "~" || last.val == "." || last.val == "..")
		c.link(name, ops[:len(ops)-1], last, into, how)
	}
}

// script records a session: without -c it runs an interactive shell
// (High); its operand and -O/-B/-I/-T files are written.
func (c *classifier) script(args []arg) {
	code := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			continue
		}
		v := a.val
		switch {
		case v == "-c" || v == "--command" || v == "-E" || v == "--echo" || v == "-o" || v == "--output-limit":
			code = code || v == "-c" || v == "--command"
			i++
		case strings.HasPrefix(v, "--command="):
			code = true
		case v == "-O" || v == "-B" || v == "-I" || v == "-T" || v == "--log-out" || v == "--log-io" ||
			v == "--log-in" || v == "--log-timing":
			if i+1 < len(args) {
				c.write("script "+v, args[i+1], wContent)
			}
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1:
			code = code || !strings.HasPrefix(v, "--") && strings.Contains(v, "c")
		default:
			c.write("script", a, wContent)
		}
	}
	if !code {
		c.add(High, "script: runs an interactive shell")
	}
}

// noTargetDirCluster reports whether a cluster of ln's or cp's short
// options holds -T, every letter before it a flag without a value (so
// the T is not part of an option's value, as in -S.T).
func noTargetDirCluster(cluster string) bool {
	i := strings.IndexByte(cluster, 'T')
	return i >= 0 && strings.Trim(cluster[:i], "abdFfHiLlnPprsuvx") == ""
}

// setidOption rates install's and mkdir's -m/--mode: a set-user-ID or
// set-group-ID mode is High, as chmod's is (the kernel denies it to a
// medium step too: confine's setidCalls); a mode not known statically
// may be one. It returns why the mode may let other users write
// (modeOpens), or "".
func (c *classifier) setidOption(name string, s scanned, args []arg) (opens string) {
	for _, i := range s.opts {
		for _, opt := range []string{"-m", "--mode"} {
			if v, _, ok := s.value(args, i, opt); ok {
				if !v.static || setuid(v.val) {
					c.add(High, "%s %s %s: sets the setuid/setgid bit", name, opt, v.text)
				}
				if o := c.modeOpens(name+" "+opt, v); o != "" {
					opens = o
				}
			}
		}
	}
	return opens
}
