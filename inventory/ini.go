package inventory

import (
	"fmt"
	"regexp"
	"strings"
)

// Ansible's INI section and child-group grammar (plugins/inventory/ini.py).
var (
	reSection   = regexp.MustCompile(`^\[([^:\]\s]+)(?::([\p{L}\p{N}_]+))?\]\s*(?:#.*)?$`)
	reGroupName = regexp.MustCompile(`^([^:\]\s]+)\s*(?:#.*)?$`)
)

// pending is Ansible's pending_declarations entry: a [g:vars] section for
// a group not declared (yet), or a child group named before it exists.
type pending struct {
	line    int
	state   string
	parents []string
}

// ParseINI parses an inventory in Ansible's INI format. It follows
// Ansible's INI plugin: lines before any section are hosts of ungrouped;
// [g] lists hosts (with key=value variables, ranges, host:port), [g:vars]
// key = value variables, [g:children] child groups; values are typed like
// Python literals; a group named in children or vars but never declared
// is an error. Errors name file:line.
func ParseINI(file string, data []byte) (*Inventory, error) {
	inv := newInventory(file)
	inv.addSource(file)
	if err := inv.parseINI(file, data); err != nil {
		return nil, err
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	return inv, nil
}

// parseINI parses one INI file into inv; the caller calls finish.
func (inv *Inventory) parseINI(file string, data []byte) error {
	fail := func(line int, format string, a ...any) error {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	pend := map[string]*pending{}
	var pendOrder []string
	addPending := func(name string, p *pending) {
		pend[name] = p
		pendOrder = append(pendOrder, name)
	}
	var addPendingChildren func(group string) error
	addPendingChildren = func(group string) error {
		p := pend[group]
		delete(pend, group) // first, so that a loop of pending groups ends
		for _, parent := range p.parents {
			if err := inv.addChild(inv.groupIdx[parent], inv.groupIdx[group], p.line); err != nil {
				return fail(p.line, "%v", err)
			}
			if pp, ok := pend[parent]; ok && pp.state == "children" {
				if err := addPendingChildren(parent); err != nil {
					return err
				}
			}
		}
		return nil
	}

	group, state := "ungrouped", "hosts"
	lines := strings.Split(string(data), "\n")
	for i, raw := range lines {
		lineno := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if m := reSection.FindStringSubmatch(line); m != nil {
			group, state = m[1], m[2]
			if state == "" {
				state = "hosts"
			}
			if state != "hosts" && state != "children" && state != "vars" {
				return fail(lineno, "section [%s:%s] has unknown type: %s", m[1], m[2], m[2])
			}
			if inv.groupIdx[group] == nil {
				if _, ok := pend[group]; state == "vars" && !ok {
					addPending(group, &pending{line: lineno, state: "vars"})
				}
				inv.addGroup(group)
			}
			if p, ok := pend[group]; ok && state != "vars" {
				switch p.state {
				case "children":
					if err := addPendingChildren(group); err != nil {
						return err
					}
				case "vars":
					delete(pend, group)
				}
			}
			continue
		}
		if line[0] == '[' && !strings.Contains(line, "]") {
			return fail(lineno, "unclosed section header: %s", line)
		}
		if line[0] == '[' && line[len(line)-1] == ']' {
			return fail(lineno, "invalid section entry: %q; make sure there are no spaces or other invalid characters in the section entry", line)
		}
		switch state {
		case "hosts":
			if err := parseHostLine(inv, group, line, lineno); err != nil {
				return fail(lineno, "%v", err)
			}
		case "vars":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return fail(lineno, "expected key=value, got: %s", line)
			}
			inv.setGroupVar(inv.groupIdx[group], strings.TrimSpace(k), iniValue(strings.TrimSpace(v)), lineno)
		case "children":
			m := reGroupName.FindStringSubmatch(line)
			if m == nil {
				return fail(lineno, "expected group name, got: %s", line)
			}
			child := m[1]
			if cg := inv.groupIdx[child]; cg != nil {
				if err := inv.addChild(inv.groupIdx[group], cg, lineno); err != nil {
					return fail(lineno, "%v", err)
				}
			} else if p, ok := pend[child]; ok {
				p.parents = append(p.parents, group)
			} else {
				addPending(child, &pending{line: lineno, state: "children", parents: []string{group}})
			}
		}
	}
	for _, name := range pendOrder {
		p, ok := pend[name]
		if !ok {
			continue
		}
		if p.state == "vars" {
			return fail(p.line, "section [%s:vars] is for a group that is never declared: %s", name, name)
		}
		return fail(p.line, "section [%s:children] includes a group that is never declared: %s", p.parents[len(p.parents)-1], name)
	}
	return nil
}

// setGroupVar sets a group variable; ansible_group_priority sets the
// group's priority instead, as in Ansible.
func (inv *Inventory) setGroupVar(g *Group, k string, v any, line int) {
	if k == "ansible_group_priority" {
		switch n := v.(type) {
		case int:
			g.Priority = n
			return
		case string:
			if p, err := pyInt(n); err == nil {
				g.Priority = p
				return
			}
		case float64:
			g.Priority = int(n)
			return
		}
	}
	g.Vars[k] = v
	g.lines[k] = inv.at(line)
}

// parseHostLine handles "name[:port] [k=v]…" in a hosts section.
func parseHostLine(inv *Inventory, group, line string, lineno int) error {
	tokens, err := shlexSplit(line)
	if err != nil {
		return fmt.Errorf("error parsing host definition %q: %v", line, err)
	}
	if len(tokens) == 0 {
		return nil // only a comment after all
	}
	names, port, err := iniHostPattern(inv, tokens[0])
	if err != nil {
		return err
	}
	index := map[string]int{}
	var keys []string
	var vals []any
	var lines []int
	for _, t := range tokens[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("expected key=value host variable assignment, got: %s", t)
		}
		if i, dup := index[k]; dup {
			vals[i] = iniValue(v)
			continue
		}
		index[k] = len(keys)
		keys = append(keys, k)
		vals = append(vals, iniValue(v))
		lines = append(lines, lineno)
	}
	return inv.addHosts(names, inv.groupIdx[group], port, keys, vals, lines, lineno)
}

// iniHostPattern is the INI plugin's _expand_hostpattern with its checks.
func iniHostPattern(inv *Inventory, pattern string) ([]string, int, error) {
	names, port, err := inv.expand(pattern)
	if err != nil {
		return nil, 0, fmt.Errorf("host %q: %v", pattern, err)
	}
	if strings.HasSuffix(strings.TrimSpace(pattern), ":") && port == 0 {
		return nil, 0, fmt.Errorf("invalid host %q: ending in ':' is not allowed, this character is reserved to provide a port", pattern)
	}
	for _, n := range names {
		if strings.TrimSpace(n) == "---" {
			return nil, 0, fmt.Errorf("invalid host %q: '---' is normally a sign this is a YAML file", pattern)
		}
	}
	return names, port, nil
}

// shlexSplit is Python's shlex.split(line, comments=True): POSIX quoting,
// backslash escapes, and "#" outside quotes ending the line (even inside
// a word).
func shlexSplit(s string) ([]string, error) { return splitWords(s, true) }

// SplitArgs is Python's shlex.split(s) (POSIX, no comments): how Ansible
// splits ansible_ssh_common_args and its kin into ssh arguments.
func SplitArgs(s string) ([]string, error) { return splitWords(s, false) }

func splitWords(s string, comments bool) ([]string, error) {
	var out []string
	var tok strings.Builder
	inTok := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inTok {
				out = append(out, tok.String())
				tok.Reset()
				inTok = false
			}
		case c == '#' && comments:
			i = len(s)
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("no escaped character")
			}
			i++
			tok.WriteByte(s[i])
			inTok = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("no closing quotation")
			}
			tok.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inTok = true
		case c == '"':
			i++
			for ; ; i++ {
				if i >= len(s) {
					return nil, fmt.Errorf("no closing quotation")
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				tok.WriteByte(s[i])
			}
			inTok = true
		default:
			tok.WriteByte(c)
			inTok = true
		}
	}
	if inTok {
		out = append(out, tok.String())
	}
	return out, nil
}
