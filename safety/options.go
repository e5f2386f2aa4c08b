package safety

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// optSpec is a parsed Policy.ReadOnly entry: the options of one command
// (or subcommand) known to be read-only, from its manual.
//
// Spec syntax, space-separated tokens:
//
//	-a --all        an option without a value
//	-n= --lines=    an option whose value is data (a count, a format)
//	-f=r --file=r   its value names a file the command reads
//	-o=w            its value names a file the command writes (at least Medium)
//	-x=l            its value names a file listing files to read (High: they
//	                cannot be checked)
//	--color=?       a long option whose value is optional (only "--color=x")
//	-#              "-NUM" (head -5)
//	+               operands starting with "+" (date +%s, tail +5)
//	ops=N           at most N operands are read; one more is not read-only
type optSpec struct {
	opts   map[string]byte // option → 0 (no value), 'v', 'r', 'w', 'l', '?'
	digits bool
	plus   bool
	maxOps int // -1: any number
}

// specCache holds parsed specs by their text: policies share them.
var specCache sync.Map // string → optSpec

func parseSpec(specs ...string) optSpec {
	key := strings.Join(specs, "\x00")
	if v, ok := specCache.Load(key); ok {
		return v.(optSpec)
	}
	s := parseSpecs(specs)
	specCache.Store(key, s)
	return s
}

func parseSpecs(specs []string) optSpec {
	s := optSpec{opts: map[string]byte{}, maxOps: -1}
	for _, spec := range specs {
		for _, tok := range strings.Fields(spec) {
			switch {
			case tok == "-#":
				s.digits = true
			case tok == "+":
				s.plus = true
			case strings.HasPrefix(tok, "ops="):
				if n, err := strconv.Atoi(tok[4:]); err == nil {
					s.maxOps = n
				}
			default:
				name, kind, ok := strings.Cut(tok, "=")
				switch {
				case !ok:
					s.opts[name] = 0
				case kind == "":
					s.opts[name] = 'v'
				default:
					s.opts[name] = kind[0]
				}
			}
		}
	}
	return s
}

// spec returns the read-only options known for a scanned command (its
// own and its subcommands'), and whether any are known.
func (p *Policy) spec(keys []string) (optSpec, bool) {
	var specs []string
	for _, k := range keys {
		if v, ok := p.ReadOnly[k]; ok {
			specs = append(specs, v)
		}
	}
	return parseSpec(specs...), len(specs) > 0
}

// valueOptions lists the spec's options that take the next word.
func (s optSpec) valueOptions() []string {
	var out []string
	for o, k := range s.opts {
		if k != 0 && k != '?' {
			out = append(out, o)
		}
	}
	return out
}

// optionUse is one option found in a word, with its value when it has one.
type optionUse struct {
	name  string
	kind  byte
	value arg
	ok    bool // known to the spec
}

// split reads option word i as the spec knows it: a long option (with
// "=value" or the next word as value), "-NUM", or a cluster of short
// options of which only the last may take a value (attached or the next
// word). It returns the options found; one the spec does not know ends the
// list with ok false (a cluster it cannot split is not read-only).
func (s optSpec) split(args []arg, i int) []optionUse {
	v := args[i].val
	next := func() arg {
		if i+1 < len(args) {
			return args[i+1]
		}
		return arg{}
	}
	if strings.HasPrefix(v, "--") {
		name, val, hasVal := strings.Cut(v, "=")
		kind, ok := s.opts[name]
		switch {
		case !ok:
			return []optionUse{{name: name}}
		case kind == 0 && hasVal:
			return []optionUse{{name: v}}
		case kind == '?' || kind == 0:
			return []optionUse{{name: name, kind: kind, ok: true, value: arg{val: val, text: val, static: true}}}
		case hasVal:
			return []optionUse{{name: name, kind: kind, ok: true, value: arg{val: val, text: args[i].text,
				static: true, tilde: strings.HasPrefix(val, "~")}}}
		}
		return []optionUse{{name: name, kind: kind, ok: true, value: next()}}
	}
	if kind, ok := s.opts[v]; ok { // a whole word: -name (find-style), -l
		if kind == 0 || kind == '?' {
			return []optionUse{{name: v, ok: true}}
		}
		return []optionUse{{name: v, kind: kind, ok: true, value: next()}}
	}
	if s.digits && isDigits(v[1:]) {
		return []optionUse{{name: v, ok: true}}
	}
	var out []optionUse
	for j := 1; j < len(v); j++ {
		o := "-" + string(v[j])
		kind, ok := s.opts[o]
		if !ok {
			return append(out, optionUse{name: o})
		}
		if kind == 0 || kind == '?' {
			out = append(out, optionUse{name: o, ok: true})
			continue
		}
		u := optionUse{name: o, kind: kind, ok: true, value: next()}
		if rest := v[j+1:]; rest != "" {
			u.value = arg{val: rest, text: args[i].text, static: true, tilde: strings.HasPrefix(rest, "~")}
		}
		return append(out, u)
	}
	return out
}

// readOnlyOptions holds a command rated Safe to its allow-list: an option
// the policy does not know to be read-only, a cluster it cannot split or
// one operand too many is at least Medium; option values that name files
// are checked as reads or writes.
func (c *classifier) readOnlyOptions(name string, s scanned, args []arg, r *role) {
	if slices.Contains(c.p.AnyOptions, name) || onlyVersion(args) {
		return
	}
	spec, known := c.p.spec(s.keys)
	for _, i := range s.opts {
		a := args[i]
		if !a.static || c.rated(s, args, i) {
			continue // a non-static operand, checked as such; or an option the policy rates
		}
		for _, u := range spec.split(args, i) {
			if !u.ok {
				// Like an unknown program, an option whose effect is not
				// known is High: --upload-pack=CMD, -writerand FILE.
				if known {
					c.add(High, "%s %s: option %s is not known to be read-only", s.shown, a.text, u.name)
				} else {
					c.add(High, "%s %s: no option of %s is known to be read-only", s.shown, a.text, s.shown)
				}
				break
			}
			who := s.shown + " " + u.name
			switch u.kind {
			case 'r':
				c.read(who, u.value)
			case 'w':
				c.write(who, u.value, wContent)
			case 'l':
				c.add(High, "%s: reads the files a list names, which cannot be checked", who)
			}
		}
	}
	if spec.maxOps >= 0 {
		n := 0
		for _, i := range s.operands {
			if !slices.Contains(r.values, i) {
				n++
			}
		}
		if n > spec.maxOps {
			c.add(High, "%s: more than %d operand(s): the extra one is not known to be read-only", s.shown, spec.maxOps)
		}
	}
	if !spec.plus {
		for _, i := range s.operands {
			if a := args[i]; a.static && strings.HasPrefix(a.val, "+") && !slices.Contains(r.values, i) &&
				!slices.Contains(c.p.PatternCommands, name) {
				c.add(High, "%s %s: a \"+\" operand is not known to be read-only", s.shown, a.text)
			}
		}
	}
}

// rated reports whether option word i is one the policy already rates
// (Flags, WriteOptions, ReadOptions): its level is given, not unknown.
func (c *classifier) rated(s scanned, args []arg, i int) bool {
	for _, key := range s.keys {
		for _, f := range s.forms(args, i) {
			name, _, _ := strings.Cut(f, "=")
			if !strings.HasPrefix(f, "--") && len(f) > 2 {
				name = f[:2] // a cluster: its first letter, with what follows
			}
			if _, ok := c.p.Flags[key][name]; ok {
				return true
			}
			if slices.Contains(c.p.WriteOptions[key], name) || slices.Contains(c.p.ReadOptions[key], name) {
				return true
			}
		}
	}
	return false
}
