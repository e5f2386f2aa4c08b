package safety

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call classifies a simple command: assignments, nested code in its words,
// then the command line itself.
func (c *classifier) call(x *syntax.CallExpr, e env) {
	decl := ""
	if len(x.Args) > 0 {
		decl = "prefix"
	}
	for _, as := range x.Assigns {
		c.assign(as, e, decl)
	}
	// Commands that take variable names evaluate subscripts in them.
	evaluates := len(x.Args) > 0 && slices.Contains([]string{"read", "unset", "printf", "mapfile", "readarray",
		"wait", "test", "[", "getopts", "let", "declare", "typeset", "local", "export", "readonly"}, x.Args[0].Lit())
	for _, w := range x.Args {
		c.nested(w, e)
		if evaluates {
			c.literalCode(w)
		}
	}
	if len(x.Args) > 0 {
		c.argv(words(x.Args, c.src, c.lang), e)
	}
}

// argv classifies a resolved command line: args[0] names the command.
func (c *classifier) argv(args []arg, e env) {
	if len(args) == 0 {
		return
	}
	if c.lang == syntax.LangPOSIX && args[0].static && args[0].val == "[[" {
		c.add(Medium, "[[ is not a command under /bin/sh (dash)")
		return
	}
	if why := nameProblem(args[0]); why != "" {
		c.opaque("command name %s %s", args[0].text, why)
		return
	}
	name, rest := args[0].val, args[1:]
	if strings.HasPrefix(name, "/proc/") {
		e = e.under("it names its program through /proc")
		// /proc/self/root/usr/bin/vim is /usr/bin/vim.
		if pl := c.procPlaces(place{p: path.Clean(name)}); len(pl) == 1 && !pl[0].rel && !pl[0].lost {
			name = pl[0].p
		}
	}
	byPath := false
	if strings.Contains(name, "/") {
		dir, base := path.Split(name)
		inBin := slices.Contains(c.p.BinDirs, path.Clean(dir))
		byPath = !inBin
		if !inBin {
			// A program file given by path is Medium; one named like a
			// command the policy knows (/opt/bin/kubectl) is that command too.
			c.runs(name, args[0])
			if !c.p.known(base) {
				c.fromInput(name, e)
				return
			}
		}
		name = base // a program in a system bin directory is that command, known or not
	}
	if code, ok := c.aliases[name]; ok {
		// bash -c does not expand aliases; dash and bash in POSIX mode do,
		// from the next line on: the command is classified both ways.
		for _, a := range rest {
			code += " " + a.source()
		}
		delete(c.aliases, name) // bash does not expand an alias inside itself
		c.codeArg("alias "+name, arg{val: code, static: true}, e)
		c.aliases[name] = code
	}
	if c.funcs[name] && !c.p.known(name) {
		return // a function defined in this code: its body is classified
	}
	if _, ok := c.aliases[name]; ok && !c.p.known(name) {
		return // an alias defined in this code, classified above
	}
	if !byPath {
		c.program(name)
	}
	if w, ok := c.p.Wrappers[name]; ok {
		c.wrapper(name, w, rest, e)
		return
	}
	if slices.Contains(c.p.Shells, name) {
		c.fromInput(name, e)
		c.shell(name, rest, e)
		return
	}
	if opts, ok := c.p.interpreter(name); ok {
		c.fromInput(name, e)
		c.interpreter(name, opts, rest, e)
		return
	}
	c.command(name, rest, e)
}

// fromInput flags a shell, interpreter or program file that xargs (or
// another InputOperands wrapper) runs: the operands it reads from input
// reach code that cannot be checked (xargs -I{} sh -c 'rm -f {}' runs
// whatever the input names, in a code string).
func (c *classifier) fromInput(name string, e env) {
	if e.xargs != "" {
		c.opaque("%s %s: operands read from input cannot be checked (they reach a shell, interpreter or program)",
			e.xargs, name)
	}
}

// scanned is a command line split into options, subcommands and operands.
type scanned struct {
	keys     []string // the command and each subcommand level: "git", "git reset", "git *"
	shown    string   // what reasons call it: "systemctl stop"
	rule     Rule
	opts     []int // indices of option words
	operands []int // indices of operand words
	// alts holds, for an abbreviated long option word ("--outp=x"), every
	// known option it may stand for ("--output=x"): getopt_long accepts any
	// unambiguous prefix, and the policy's lists are not complete, so the
	// word is taken as each of them.
	alts map[int][]string
}

// forms returns what option word i stands for: its expansions when it is
// an abbreviated long option, else the word itself.
func (s scanned) forms(args []arg, i int) []string {
	if f, ok := s.alts[i]; ok {
		return f
	}
	return []string{args[i].val}
}

// value is optionValue for option word i taken as each of its forms.
func (s scanned) value(args []arg, i int, opt string) (arg, int, bool) {
	for _, f := range s.forms(args, i) {
		if v, j, ok := optionValueAs(args, i, f, opt); ok {
			return v, j, true
		}
	}
	return arg{}, i, false
}

// longOptions lists the long options ("--name", without a value) that the
// policy knows for a command at the given keys.
func (p *Policy) longOptions(name string, keys []string) []string {
	var out []string
	add := func(opts ...string) {
		for _, o := range opts {
			o, _, _ = strings.Cut(o, " ")
			o, _, _ = strings.Cut(o, "=")
			if len(o) > 2 && strings.HasPrefix(o, "--") && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	for _, key := range keys {
		for k := range p.Flags[key] {
			add(k)
		}
		add(p.ValueOptions[key]...)
		add(p.WriteOptions[key]...)
		add(p.ReadOptions[key]...)
		add(p.QueryFlags[key]...)
	}
	add(p.RecursiveReaders[name]...)
	slices.Sort(out)
	return out
}

// expandLong returns the known long options that an abbreviated long
// option word may stand for, each with the word's "=value" ("--outp=x" →
// "--output=x"), or nil when the word is not a long option, is exactly a
// known one, or abbreviates none. Any prefix counts, however short, as it
// does for getopt_long when it is unambiguous among the program's options.
func expandLong(v string, known []string) []string {
	if len(v) < 3 || !strings.HasPrefix(v, "--") {
		return nil
	}
	name, val, hasVal := strings.Cut(v, "=")
	if len(name) < 3 || slices.Contains(known, name) {
		return nil
	}
	var out []string
	for _, k := range known {
		if strings.HasPrefix(k, name) {
			if hasVal {
				k += "=" + val
			}
			out = append(out, k)
		}
	}
	return out
}

// takesValue reports whether an option word, taken as any of its forms,
// takes the next word as its value.
func takesValue(forms []string, values []string) bool {
	for _, f := range forms {
		if slices.Contains(values, f) {
			return true
		}
	}
	return false
}

func isOption(a arg) bool { return a.static && len(a.val) > 1 && a.val[0] == '-' }

// scan walks a command line, resolving subcommands as it finds them.
func (c *classifier) scan(name string, args []arg, base Rule) scanned {
	s := scanned{keys: []string{name}, shown: name, rule: base}
	key, subs, ended := name, true, false
	values := slices.Concat(c.p.ValueOptions[name], parseSpec(c.p.ReadOnly[name]).valueOptions())
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !ended && a.static && a.val == "--" {
			ended = true
			continue
		}
		if !ended && isOption(a) {
			s.opts = append(s.opts, i)
			forms := []string{a.val}
			if alts := expandLong(a.val, c.p.longOptions(name, s.keys)); alts != nil {
				if s.alts == nil {
					s.alts = map[int][]string{}
				}
				s.alts[i], forms = alts, alts
			}
			if takesValue(forms, values) || c.clusterTakesNext(s.keys, a.val) {
				i++
			}
			continue
		}
		if subs {
			if m, ok := c.p.Subcommands[key]; ok {
				if !a.static {
					s.rule = Rule{Level: High, Reason: "subcommand is not statically resolvable"}
					subs = false
					s.operands = append(s.operands, i)
					continue
				}
				r, hit := m[a.val]
				next := key + " " + a.val
				if !hit {
					r, hit = m["*"]
					next = key + " *"
				}
				if hit {
					if r.Level >= s.rule.Level {
						s.rule = r
					}
					key = next
					s.shown += " " + a.val
					s.keys = append(s.keys, s.shown)
					if key != s.shown {
						s.keys = append(s.keys, key)
					}
					values = slices.Concat(values, c.p.ValueOptions[s.shown], parseSpec(c.p.ReadOnly[s.shown]).valueOptions(),
						parseSpec(c.p.ReadOnly[key]).valueOptions())
					continue
				}
			}
			subs = false
		}
		s.operands = append(s.operands, i)
	}
	if subs {
		if r, ok := c.p.Subcommands[key][""]; ok && r.Level >= s.rule.Level {
			s.rule = r
		}
	}
	return s
}

// matchFlag finds the rule for an option word: exact, with its value
// ("-s KILL"), without "=value", or one letter of a short-option cluster.
func matchFlag(m map[string]Rule, v, next string) (string, Rule, bool) {
	if r, ok := m[v]; ok {
		return v, r, true
	}
	if r, ok := m[v+" "+next]; ok && next != "" {
		return v + " " + next, r, true
	}
	if strings.HasPrefix(v, "--") {
		k, _, _ := strings.Cut(v, "=")
		r, ok := m[k]
		return k, r, ok
	}
	found, best, shown := false, Rule{}, ""
	for _, ch := range v[1:] {
		if r, ok := m["-"+string(ch)]; ok && (!found || r.Level > best.Level) {
			found, best, shown = true, r, "-"+string(ch)
		}
	}
	return shown, best, found
}

// command classifies a command that is neither a wrapper, a shell nor an
// interpreter, from the policy's lists and a few commands' own rules.
func (c *classifier) command(name string, args []arg, e env) {
	c.connects(name, args, e)
	if why := opaqueWrite(name, args); why != "" && len(c.unjournaled) < maxTouched {
		c.unjournaled = append(c.unjournaled, why)
	}
	base, known := c.p.commandRule(name)
	if !known {
		// What a program the policy does not know does cannot be known
		// statically (kubectl delete, terraform destroy, mysql -e); the
		// policy file's commands: can give it a level.
		base = Rule{Level: High, Reason: "unknown program (its effect cannot be known; the policy can set its level)"}
	}
	s := c.scan(name, args, base)
	rule := s.rule
	if c.query(s, args) {
		rule = Rule{}
	}
	if rule.Level > Safe {
		c.add(rule.Level, "%s: %s", s.shown, rule.Reason)
	}
	c.flags(s, args, e)
	c.writeOptions(s, args)
	c.readOptions(s, args)
	c.codeFileOptions(s, args)
	c.containerSecrets(name, s, args)
	if slices.Contains(metadataWriters, name) {
		c.metadata = true
	}
	role := c.special(name, s, args, e)
	role.quiet = rule.Level >= Medium
	if rule.Level == Safe {
		c.readOnlyOptions(name, s, args, &role)
	}
	c.operands(name, s, args, e, role)
}

func (c *classifier) query(s scanned, args []arg) bool {
	for _, key := range s.keys {
		q := c.p.QueryFlags[key]
		for _, i := range s.opts {
			v := args[i].val
			if slices.Contains(q, v) {
				return true
			}
			if !strings.HasPrefix(v, "--") {
				// A cluster holds a query flag only when the allow-list
				// splits all of it (iptables -nL; not kill -Kill).
				spec, _ := c.p.spec(s.keys)
				uses, all, hit := spec.split(args, i), true, false
				for _, u := range uses {
					all = all && u.ok
					hit = hit || slices.Contains(q, u.name)
				}
				if all && hit && len(uses) > 0 {
					return true
				}
			}
		}
	}
	return false
}

func (c *classifier) flags(s scanned, args []arg, e env) {
	for _, i := range s.opts {
		next := ""
		if i+1 < len(args) && args[i+1].static {
			next = args[i+1].val
		}
		for _, key := range s.keys {
			m := c.p.Flags[key]
			if m == nil {
				continue
			}
			best, shown := Rule{}, ""
			for _, f := range s.forms(args, i) { // the riskiest of an ambiguous abbreviation's options
				if sh, r, ok := matchFlag(m, f, next); ok && r.Level > best.Level {
					best, shown = r, sh
					if f != args[i].val {
						shown = args[i].val + " (as " + sh + ")"
					}
				}
			}
			if best.Undoable && best.Level > Medium {
				if why := c.notOnce(e); why != "" {
					best.Reason += " (undo cannot take it back: " + why + ")"
				} else {
					c.undoable = true
					if c.p.undoView {
						best.Level = Medium
					}
				}
			}
			if best.Level > Safe {
				c.add(best.Level, "%s %s: %s", key, shown, best.Reason)
			}
		}
	}
}

// optionValue returns the value of option opt if word i is that option,
// written "-o FILE", "-oFILE", "-xoFILE" or "--output=FILE", and the index
// of the word holding the value.
func optionValue(args []arg, i int, opt string) (arg, int, bool) {
	return optionValueAs(args, i, args[i].val, opt)
}

// optionValueAs is optionValue with word i read as v (an expansion of an
// abbreviated long option).
func optionValueAs(args []arg, i int, v, opt string) (arg, int, bool) {
	a := args[i]
	switch {
	case !a.static:
	case v == opt:
		if i+1 < len(args) {
			return args[i+1], i + 1, true
		}
	case strings.HasPrefix(opt, "--"):
		if rest, ok := strings.CutPrefix(v, opt+"="); ok {
			return arg{val: rest, text: a.text, static: true, glob: a.glob}, i, true
		}
	case len(opt) == 2 && len(v) > 2 && v[0] == '-' && v[1] != '-':
		if j := strings.IndexByte(v[1:], opt[1]); j >= 0 {
			if rest := v[j+2:]; rest != "" {
				return arg{val: rest, text: a.text, static: true, glob: a.glob}, i, true
			}
			if i+1 < len(args) {
				return args[i+1], i + 1, true
			}
		}
	}
	return arg{}, i, false
}

func (c *classifier) writeOptions(s scanned, args []arg) {
	for _, i := range s.opts {
		for _, key := range s.keys {
			for _, opt := range c.p.WriteOptions[key] {
				if v, _, ok := s.value(args, i, opt); ok {
					c.writeOption(key, opt, v)
				}
			}
		}
	}
}

// writeOption rates the file an output option (WriteOptions) writes, or
// the command it names: strace's -o '|CMD' and -o '!CMD' run CMD with
// the trace on its input (a value not known statically may be one).
func (c *classifier) writeOption(key, opt string, v arg) {
	if key == "strace" && (!v.static || strings.HasPrefix(v.val, "|") || strings.HasPrefix(v.val, "!")) {
		c.add(High, "%s %s %s: pipes its output to a command", key, opt, v.text)
		return
	}
	c.write(key+" "+opt, v, wContent)
}

// codeFiles are options whose value is a file of code the program runs:
// an nginx configuration can load a module (load_module), even under -t.
var codeFiles = map[string][]string{"nginx": {"-c"}}

// codeFileOptions rates the files codeFiles name as programs run: Medium,
// High when the same command wrote one.
func (c *classifier) codeFileOptions(s scanned, args []arg) {
	for _, i := range s.opts {
		for _, key := range s.keys {
			for _, opt := range codeFiles[key] {
				if v, _, ok := s.value(args, i, opt); ok {
					c.runs(key+" "+opt, v)
				}
			}
		}
	}
}

func (c *classifier) readOptions(s scanned, args []arg) {
	for _, i := range s.opts {
		for _, key := range s.keys {
			for _, opt := range c.p.ReadOptions[key] {
				if v, _, ok := s.value(args, i, opt); ok {
					c.read(key+" "+opt, v)
				}
			}
		}
	}
}

// recursive reports whether a command reads whole directory trees.
func (c *classifier) recursive(name string, s scanned, args []arg) bool {
	flags, ok := c.p.RecursiveReaders[name]
	if !ok {
		return false
	}
	if len(flags) == 0 {
		return true
	}
	m := map[string]Rule{}
	for _, f := range flags {
		m[f] = Rule{}
	}
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			if _, _, ok := matchFlag(m, f, ""); ok {
				return true
			}
		}
	}
	return false
}

// role says how a command's operands are to be read.
type role struct {
	skip   int    // leading operands that are patterns or programs
	values []int  // words that are option values, not operands
	write  string // "all", "last", "second" or "" (see Policy.WriteOperands)
	noPath bool   // operands are not file names
	quiet  bool   // the command's rule already gives a Medium reason
	// backup is the suffix of the backups the command makes of the
	// operands it writes ("" for none); backupAll: of each one (sed -i),
	// else of the last (cp, mv, install, ln).
	backup    string
	backupAll bool
	// opens says why the mode or owner the command sets may let other
	// users write its operands (modeOpens); "" when it does not.
	opens string
}

func (c *classifier) operands(name string, s scanned, args []arg, e env, r role) {
	c.opens = r.opens
	defer func() { c.opens = "" }()
	dataOnly := c.p.dataOnly(name)
	metadata := slices.Contains(c.p.MetadataOnly, name)
	tree := c.recursive(name, s, args)
	if !dataOnly {
		// curl -d @FILE, -F f=@FILE: the file is read and sent.
		for _, a := range args {
			if at := strings.LastIndex(a.val, "@"); a.static && at >= 0 && at+1 < len(a.val) {
				c.read(s.shown, arg{val: a.val[at+1:], text: a.text, static: true, tilde: a.val[at+1] == '~'})
			}
		}
	}
	var ops []int // operands that are not option values
	for _, i := range s.operands {
		if !slices.Contains(r.values, i) {
			ops = append(ops, i)
		}
	}
	for k, i := range ops {
		a := args[i]
		if !a.static {
			if !dataOnly {
				c.opaque("%s: operand %s is not statically resolvable", s.shown, a.text)
			}
			continue
		}
		if dataOnly || r.noPath || k < r.skip {
			continue
		}
		switch {
		case r.write == "all", r.write == "last" && k == len(ops)-1, r.write == "second" && k == 1:
			how := 0
			if r.quiet {
				how = wQuiet
			}
			if r.write != "all" || slices.Contains([]string{"tee", "mv", "patch", "sed", "awk", "gawk"}, name) {
				how |= wContent
			}
			if c.recursiveWrite(name, s, args) {
				how |= wTree
			}
			if name == "install" && k == len(ops)-1 && installParents(s, args) {
				// install -D makes the destination's missing
				// directories: journaled as mkdir -p's are, before
				// the file (undo removes the file first).
				d := arg{val: path.Dir(a.val), text: a.text + " (its directories)", static: true, tilde: a.tilde}
				m := len(c.touched)
				c.write(s.shown, d, wQuiet)
				for j := m; j < len(c.touched); j++ {
					c.touched[j].Dir, c.touched[j].Parents = true, true
				}
			}
			n := len(c.touched)
			c.write(s.shown, a, how)
			if r.backup != "" && (r.backupAll || k == len(ops)-1) {
				b := arg{val: backupName(a.val, r.backup), text: a.text + " (its backup)", static: true, tilde: a.tilde}
				c.write(s.shown, b, how&^wTree|wContent)
			}
			if name == "mkdir" {
				for j := n; j < len(c.touched); j++ {
					c.touched[j].Dir, c.touched[j].Parents = true, mkdirParents(s, args)
				}
			}
		case !metadata:
			c.read(s.shown, a)
			if tree {
				c.readTree(s.shown, a)
			}
		}
	}
	if e.xargs != "" && !dataOnly {
		c.opaque("%s %s: operands read from input cannot be checked", e.xargs, name)
	}
}

// installParents reports whether install's options include -D (alone or
// in a short-option cluster before an option that takes a value).
func installParents(s scanned, args []arg) bool {
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			if f == "-D" || inCluster(f, 'D', "gmoStT") {
				return true
			}
		}
	}
	return false
}

// mkdirParents reports whether mkdir's options include -p (--parents, or
// p in a short-option cluster before -m's value).
func mkdirParents(s scanned, args []arg) bool {
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			if f == "--parents" {
				return true
			}
			if len(f) < 2 || f[0] != '-' || f[1] == '-' {
				continue
			}
			for _, ch := range f[1:] {
				if ch == 'm' {
					break // the rest is the mode
				}
				if ch == 'p' {
					return true
				}
			}
		}
	}
	return false
}

// clusterTakesNext reports whether a short-option cluster ends with an
// option the allow-list says takes a value, given as the next word
// ("ps -eo pid,comm").
func (c *classifier) clusterTakesNext(keys []string, v string) bool {
	if len(v) < 3 || v[0] != '-' || v[1] == '-' {
		return false
	}
	spec, ok := c.p.spec(keys)
	if !ok {
		return false
	}
	for j := 1; j < len(v); j++ {
		kind, known := spec.opts["-"+string(v[j])]
		switch {
		case !known:
			return false
		case kind != 0 && kind != '?':
			return j == len(v)-1
		}
	}
	return false
}

// notOnce says why a command classified in e may not run exactly once,
// directly, where the classifier took its operands to be: what an undo
// journal saved before the step would then not be what it changes. ""
// when it runs once, directly.
func (c *classifier) notOnce(e env) string {
	switch {
	case e.indirect != "":
		return e.indirect
	case c.cwdLost:
		return "it runs after a cd to a directory that cannot be known"
	case c.cdUnsure != "":
		return c.cdUnsure
	}
	return ""
}
