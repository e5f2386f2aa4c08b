package safety

import (
	"slices"
	"strings"
)

// codeArg classifies a word that a program runs as shell code.
func (c *classifier) codeArg(who string, a arg, e env) {
	if !a.static {
		c.opaque("%s %s: code is not statically resolvable", who, a.text)
		return
	}
	e.code++
	e.xargs = ""
	c.code(a.val, e.under(who+" runs it as code, which may run it again or later"))
}

// wrapper classifies a command that runs the command in its arguments
// (sudo, env, nohup, timeout, xargs …) and then that command.
func (c *classifier) wrapper(name string, w Wrapper, args []arg, e env) {
	// What a wrapper runs may run again (watch, xargs, parallel), later
	// (nohup, setsid, timeout's retries …), as someone else or elsewhere
	// (sudo, chroot, nsenter): never lowered as journaled.
	e = e.under(name + " runs it, and may run it again, later or elsewhere")
	if r, ok := c.p.commandRule(name); ok && r.Level > Safe {
		c.add(r.Level, "%s: %s", name, r.Reason)
	}
	if slices.Contains(procAttrTools, name) && c.procAttr(name, args) {
		return // it changes or shows running processes: no command to run
	}
	known := c.p.wrapperOptions(name, w)
	forms := func(i int) []string {
		if alts := expandLong(args[i].val, known); alts != nil && args[i].static {
			return alts
		}
		return []string{args[i].val}
	}
	c.ownFlags(name, args, w.ValueOptions, false)
	if name == "script" {
		c.script(args)
	}
	for i := range args {
		if !isOption(args[i]) {
			continue
		}
		for _, opt := range chdirOptions[name] {
			for _, f := range forms(i) {
				if v, _, ok := optionValueAs(args, i, f, opt); ok {
					c.cd([]arg{v})
					break
				}
			}
		}
		for _, opt := range w.CodeOptions {
			for _, f := range forms(i) {
				if v, _, ok := optionValueAs(args, i, f, opt); ok {
					c.codeArg(name+" "+opt, v, e)
					break
				}
			}
		}
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			break
		}
		if a.val == "--" {
			i++
			break
		}
		if w.Assignments && isAssignment(a.val) {
			env, _, _ := strings.Cut(a.val, "=")
			switch c.p.envRisk(env) {
			case High:
				c.opaque("%s %s=…: changes how the command is found or run", name, env)
			case Medium:
				c.add(Medium, "%s %s=…: a command's environment variable whose effect is not known", name, env)
			}
			continue
		}
		if a.val != "-" && !isOption(a) {
			break
		}
		fs := forms(i)
		for _, opt := range c.p.WriteOptions[name] {
			for _, f := range fs {
				if v, _, ok := optionValueAs(args, i, f, opt); ok {
					c.writeOption(name, opt, v)
					break
				}
			}
		}
		for _, opt := range c.p.ReadOptions[name] {
			for _, f := range fs {
				if v, _, ok := optionValueAs(args, i, f, opt); ok {
					c.read(name+" "+opt, v)
					break
				}
			}
		}
		if slices.Contains(c.p.QueryFlags[name], a.val) {
			return // command -v NAME only looks the name up
		}
		if takesValue(fs, w.ValueOptions) || takesValue(fs, w.CodeOptions) {
			i++
		}
	}
	if w.NoCommand {
		return
	}
	i += w.Skip
	if i >= len(args) {
		return
	}
	inner := args[i:]
	switch {
	case w.JoinCode:
		if w.InputOperands {
			c.opaque("%s: runs commands on operands read from input", name)
		}
		var b strings.Builder
		for _, a := range inner {
			if !a.static {
				c.opaque("%s %s: code is not statically resolvable", name, a.text)
				return
			}
			b.WriteString(a.val + " ")
		}
		c.codeArg(name, arg{val: b.String(), static: true}, e)
	case w.InputOperands:
		e.xargs = name
		c.argv(inner, e)
	default:
		c.argv(inner, e)
	}
}

// wrapperOptions lists the long options the policy knows for a wrapper.
func (p *Policy) wrapperOptions(name string, w Wrapper) []string {
	var all []string
	for _, l := range [][]string{w.ValueOptions, w.CodeOptions, p.WriteOptions[name], p.QueryFlags[name]} {
		all = append(all, l...)
	}
	return longOnly(all)
}

// longOnly keeps the long options ("--name") of a list.
func longOnly(opts []string) []string {
	var out []string
	for _, o := range opts {
		if len(o) > 2 && strings.HasPrefix(o, "--") && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

func isAssignment(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return false
	}
	for i, ch := range name {
		if !(ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// onlyVersion reports a command line that only asks for version or help.
func onlyVersion(args []arg) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !a.static || !slices.Contains([]string{"--version", "-V", "--help", "-h", "-version"}, a.val) {
			return false
		}
	}
	return true
}

// stdinCode classifies a program that reads its code from standard input.
func (c *classifier) stdinCode(name string, e env, parse bool) {
	switch e.stdin.kind {
	case inPipe:
		c.opaque("%s: runs code piped from %s", name, e.stdin.text)
	case inText:
		if parse {
			text := e.stdin.text
			e.stdin = input{}
			c.codeArg(name, arg{val: text, static: true}, e)
			return
		}
		c.opaque("%s: runs inline code from a here-document", name)
	case inDynamic:
		c.opaque("%s: runs code from a %s with expansions", name, e.stdin.text)
	case inFile:
		c.runs(name, e.stdin.file)
	default:
		c.opaque("%s: reads code from standard input", name)
	}
}

// shell classifies sh/bash/…: -c code is parsed and classified, a script
// file is Medium, code from standard input is High unless literal.
func (c *classifier) shell(name string, args []arg, e env) {
	if onlyVersion(args) {
		return
	}
	codeMode, stdinMode := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			break
		}
		v := a.val
		if v == "--" || v == "-" {
			i++
			stdinMode = stdinMode || v == "-"
			break
		}
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") || len(v) < 2 {
			break
		}
		if slices.Contains([]string{"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}, v) {
			i++
			continue
		}
		if !strings.HasPrefix(v, "--") {
			codeMode = codeMode || strings.ContainsRune(v[1:], 'c')
			stdinMode = stdinMode || strings.ContainsRune(v[1:], 's')
		}
	}
	switch {
	case codeMode && i < len(args):
		c.codeArg(name+" -c", args[i], e)
	case codeMode:
		c.add(High, "%s -c: no code given", name)
	case stdinMode || i >= len(args) || isStdinPath(args[i]):
		c.stdinCode(name, e, true)
	default:
		c.runs(name, args[i])
	}
}

func isStdinPath(a arg) bool {
	return a.static && slices.Contains([]string{"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}, a.val)
}

// serverModules are Python modules that listen on a port and serve
// files, documentation or a shell to whoever connects (`python3 -m
// http.server` serves the working directory, ~ included): High, like
// `php -S` and `nc -l`, not the Medium of another module.
var serverModules = []string{"http.server", "SimpleHTTPServer", "CGIHTTPServer", "smtpd",
	"aiosmtpd", "xmlrpc.server", "SimpleXMLRPCServer", "wsgiref.simple_server", "uploadserver",
	"pyftpdlib", "updog", "twisted"}

// pydocServes reports whether pydoc's arguments start its web server
// (-p PORT, -b, -n HOST): `python3 -m pydoc os` only prints.
func pydocServes(args []arg) bool {
	for _, a := range args {
		if !a.static || strings.HasPrefix(a.val, "-p") || strings.HasPrefix(a.val, "-b") || strings.HasPrefix(a.val, "-n") {
			return true
		}
	}
	return false
}

// interpreter classifies python/perl/node/…: inline code is High (it is
// not analysed), a script file or module Medium.
func (c *classifier) interpreter(name string, inline []string, args []arg, e env) {
	if onlyVersion(args) {
		return
	}
	c.ownFlags(name, args, c.p.ValueOptions[name], true)
	skip := -1
	for i, a := range args {
		if i == skip {
			continue // the value of an option (gdb -p PID)
		}
		if !a.static {
			c.opaque("%s: argument %s is not statically resolvable", name, a.text)
			return
		}
		v := a.val
		if slices.Contains(c.p.ValueOptions[name], v) {
			skip = i + 1
			continue
		}
		if v == "-" || isStdinPath(a) {
			c.stdinCode(name, e, false)
			return
		}
		if !strings.HasPrefix(v, "-") {
			c.runs(name, a)
			c.read(name, a)
			return
		}
		if v == "-m" || strings.HasPrefix(v, "-m") && !strings.HasPrefix(v, "--") {
			mod := strings.TrimPrefix(v, "-m")
			if mod == "" && i+1 < len(args) {
				if !args[i+1].static {
					c.opaque("%s -m: module %s is not statically resolvable", name, args[i+1].text)
					return
				}
				mod = args[i+1].val
			}
			if slices.Contains(serverModules, mod) || mod == "pydoc" && pydocServes(args[i+1:]) {
				c.add(High, "%s -m %s: serves files or a shell on a port", name, mod)
				return
			}
			c.add(Medium, "%s -m: runs a module", name)
			return
		}
		fs := []string{v}
		if alts := expandLong(v, longOnly(inline)); alts != nil {
			fs = alts
		}
		for _, opt := range inline {
			for _, f := range fs {
				if _, _, ok := optionValueAs(args, i, f, opt); ok || f == opt {
					c.opaque("%s %s: runs inline code", name, opt)
					return
				}
			}
		}
	}
	c.stdinCode(name, e, false)
}

// ownFlags applies the policy's Flags for a wrapper's or interpreter's own
// options (strace -p, gdb -p): up to the wrapped command, or all of them.
func (c *classifier) ownFlags(name string, args []arg, values []string, all bool) {
	m := c.p.Flags[name]
	if m == nil {
		return
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !isOption(a) {
			if !all {
				return
			}
			continue
		}
		next := ""
		if i+1 < len(args) && args[i+1].static {
			next = args[i+1].val
		}
		if sh, r, ok := matchFlag(m, a.val, next); ok && r.Level > Safe {
			c.add(r.Level, "%s %s: %s", name, sh, r.Reason)
		}
		if slices.Contains(values, a.val) {
			i++
		}
	}
}
