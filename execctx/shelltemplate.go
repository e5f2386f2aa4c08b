package execctx

import (
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Templates in a shell command line. A value spliced into a command line
// as text becomes syntax: a variable holding "x; dig … $(cat ~/.npmrc)"
// turned `echo {{out}}` into three commands. In a parameter that is a
// command line, `{{ name }}` is therefore one shell word whatever it
// holds, quoted for where it stands in the line:
//
//   - outside quotes: 'value' (each ' written '\''), a leading ~ or ~/
//     left unquoted so that it still expands to the home directory;
//   - inside "…": the value with \ " $ ` escaped by a backslash;
//   - inside '…': the value with each ' written '\'' (closing and
//     reopening the quotes);
//   - trailing newlines are dropped in these three, as $(…) drops them
//     (a saved command output ends in one);
//   - in a here-document's body: with \ $ ` escaped when its delimiter is
//     unquoted, as it is when quoted; a value holding the delimiter as a
//     line is an error (it would end the document early);
//   - in arithmetic ($((…)), ((…)), let): only an integer;
//   - anywhere else (${…}, $'…', `…`, right after a $ or a backslash, a
//     name being assigned or declared): an error, since no quoting there
//     is sure to keep the value one word.
//
// `{{ name | raw }}` splices the value as shell syntax, on purpose; the
// final line is rated like any other. A line that is nothing but one
// reference (`command: "{{restart_command}}"`) is spliced the same way:
// the whole command comes from the variable, as the plan's author wrote.

// shellCtx is where a reference stands in a command line.
type shellCtx int

const (
	ctxUnknown shellCtx = iota
	ctxUnquoted
	ctxDouble
	ctxSingle
	ctxHeredoc       // unquoted delimiter: $, ` and \ are special
	ctxHeredocQuoted // quoted delimiter: nothing is
	ctxArith
	ctxRefused
)

// markerPrefix stands for a reference while the line is parsed: letters
// and digits only, so it never joins or splits a shell token.
const markerPrefix = "AgEnTtPl"

type shellRef struct {
	seg    segment
	val    string
	marker string
	ctx    shellCtx
	why    string // ctxRefused: where it stands
	delim  string // here-document delimiter
	strip  bool   // <<-: leading tabs of the body's lines are removed
}

// renderShell renders a shell command line's references (see above).
func renderShell(s string, vars map[string]any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if strings.Contains(s, markerPrefix) {
		return "", fmt.Errorf("%w: the command contains %q, which templates use internally", ErrTemplate, markerPrefix)
	}
	var refs []*shellRef
	var b strings.Builder // the line with raw values spliced and markers for the others
	last := 0
	err := scanTemplate(s, func(seg segment) error {
		if seg.path == nil {
			if name := leadingIdent(seg.inner); name != "" {
				if _, ok := vars[name]; ok {
					return fmt.Errorf("%w: {{ %s }}: only names and dotted paths like {{ %s.key }} can be used", ErrTemplate, clipRunes(seg.inner, 40), name)
				}
			}
			return nil
		}
		v, err := lookup(vars, seg.path)
		if err != nil {
			return err
		}
		val := formatValue(v)
		b.WriteString(s[last:seg.start])
		last = seg.end
		if strings.Contains(val, markerPrefix) {
			return fmt.Errorf("%w: {{ %s }}: its value contains %q, which templates use internally", ErrTemplate, seg.inner, markerPrefix)
		}
		if seg.raw || strings.TrimSpace(s) == s[seg.start:seg.end] {
			b.WriteString(val)
			return nil
		}
		r := &shellRef{seg: seg, val: val, marker: markerPrefix + strconv.Itoa(len(refs)) + "Z"}
		refs = append(refs, r)
		b.WriteString(r.marker)
		return nil
	})
	if err != nil {
		return "", err
	}
	b.WriteString(s[last:])
	line := b.String()
	if len(refs) == 0 {
		return line, nil
	}
	if err := placeRefs(line, refs); err != nil {
		return "", err
	}
	for _, r := range refs {
		q, err := r.quote(line)
		if err != nil {
			return "", err
		}
		line = strings.Replace(line, r.marker, q, 1)
	}
	return line, nil
}

// placeRefs parses the line (markers in place of the references) and
// finds where each reference stands.
func placeRefs(line string, refs []*shellRef) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(line), "")
	if err != nil {
		return fmt.Errorf("%w: the command line does not parse as shell, so where its {{ }} references stand is not known: %v", ErrTemplate, err)
	}
	set := func(text string, ctx shellCtx, why string, delim string, strip bool) {
		for _, r := range refs {
			if r.ctx == ctxUnknown && strings.Contains(text, r.marker) {
				r.ctx, r.why, r.delim, r.strip = ctx, why, delim, strip
			}
		}
	}
	// refuse marks every reference under n.
	refuse := func(n syntax.Node, why string) {
		syntax.Walk(n, func(m syntax.Node) bool {
			switch x := m.(type) {
			case *syntax.Lit:
				set(x.Value, ctxRefused, why, "", false)
			case *syntax.SglQuoted:
				set(x.Value, ctxRefused, why, "", false)
			}
			return true
		})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Comment:
			set(x.Text, ctxUnquoted, "", "", false)
		case *syntax.Redirect:
			if x.Hdoc != nil {
				delim := ""
				quoted := false
				if x.Word != nil {
					for _, p := range x.Word.Parts {
						switch y := p.(type) {
						case *syntax.Lit:
							delim += y.Value
							quoted = quoted || strings.Contains(y.Value, `\`)
						case *syntax.SglQuoted:
							delim += y.Value
							quoted = true
						case *syntax.DblQuoted:
							quoted = true
							for _, q := range y.Parts {
								if l, ok := q.(*syntax.Lit); ok {
									delim += l.Value
								}
							}
						}
					}
				}
				delim = strings.ReplaceAll(delim, `\`, "")
				ctx := ctxHeredoc
				if quoted {
					ctx = ctxHeredocQuoted
				}
				for _, p := range x.Hdoc.Parts {
					if l, ok := p.(*syntax.Lit); ok {
						set(l.Value, ctx, "", delim, x.Op == syntax.DashHdoc)
					}
				}
				if x.Word != nil {
					refuse(x.Word, "in a here-document's delimiter")
				}
			}
		case *syntax.Word:
			for _, p := range x.Parts {
				switch y := p.(type) {
				case *syntax.Lit:
					set(y.Value, ctxUnquoted, "", "", false)
				case *syntax.SglQuoted:
					if y.Dollar {
						set(y.Value, ctxRefused, "inside $'…'", "", false)
					} else {
						set(y.Value, ctxSingle, "", "", false)
					}
				case *syntax.DblQuoted:
					for _, q := range y.Parts {
						if l, ok := q.(*syntax.Lit); ok {
							set(l.Value, ctxDouble, "", "", false)
						}
					}
				}
			}
		case *syntax.ParamExp:
			refuse(x, "inside a parameter expansion ${…} or right after a $")
			return false
		case *syntax.CmdSubst:
			if x.Backquotes {
				refuse(x, "inside backquotes `…`")
				return false
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
			syntax.Walk(x, func(m syntax.Node) bool {
				switch y := m.(type) {
				case *syntax.CmdSubst, *syntax.ParamExp:
					refuse(y, "inside arithmetic")
					return false
				case *syntax.Lit:
					set(y.Value, ctxArith, "", "", false)
				case *syntax.SglQuoted:
					set(y.Value, ctxRefused, "inside arithmetic", "", false)
				}
				return true
			})
			return false
		}
		return true
	})
	return nil
}

// quote is the reference's value written for where it stands in line.
func (r *shellRef) quote(line string) (string, error) {
	name := strings.Join(r.seg.path, ".")
	fail := func(why string) error {
		return fmt.Errorf("%w: {{ %s }} is %s, where its value cannot be kept one shell word; move it, or write {{ %s | raw }} to splice it as shell syntax", ErrTemplate, name, why, name)
	}
	at := strings.Index(line, r.marker)
	if at < 0 {
		return "", fail("in a place that was not found")
	}
	escaped := false
	for i := at - 1; i >= 0 && line[i] == '\\'; i-- {
		escaped = !escaped
	}
	if escaped && r.ctx != ctxSingle && r.ctx != ctxHeredocQuoted {
		return "", fail("right after a backslash")
	}
	v := r.val
	if r.ctx == ctxUnquoted || r.ctx == ctxDouble || r.ctx == ctxSingle {
		// A command's saved output ends in a newline; spliced as text it
		// only separated words. Dropped, as $(…) drops it.
		v = strings.TrimRight(v, "\n")
	}
	switch r.ctx {
	case ctxUnquoted:
		// A leading ~ or ~/ stays unquoted, so that it expands as it did
		// when values were spliced as text (plans' paths: ~/app.log).
		tilde := ""
		switch {
		case v == "~":
			return v, nil
		case strings.HasPrefix(v, "~/"):
			tilde, v = v[:2], v[2:]
		}
		// A comma is plain only outside brace expansion: {a,{{x}}} with
		// x = "b,c" would make three words of it.
		if bareWord(v) && !(strings.Contains(v, ",") && strings.Contains(line, "{")) {
			return tilde + v, nil
		}
		return tilde + "'" + strings.ReplaceAll(v, "'", `'\''`) + "'", nil
	case ctxSingle:
		return strings.ReplaceAll(v, "'", `'\''`), nil
	case ctxDouble:
		return dqEscape.Replace(v), nil
	case ctxHeredoc, ctxHeredocQuoted:
		for _, l := range strings.Split(v, "\n") {
			if r.strip {
				l = strings.TrimLeft(l, "\t")
			}
			if l == r.delim {
				return "", fail(fmt.Sprintf("in a here-document ending at %q, a line its value holds", r.delim))
			}
		}
		if r.ctx == ctxHeredoc {
			return hdEscape.Replace(v), nil
		}
		return v, nil
	case ctxArith:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return "", fail(fmt.Sprintf("in arithmetic and its value %q is not an integer", clipRunes(v, 30)))
		}
		return strings.TrimSpace(v), nil
	case ctxRefused:
		return "", fail(r.why)
	}
	return "", fail("in a name, keyword or other place that is not a word's text")
}

// bareWord: v is one word the shell reads as itself wherever it stands
// unquoted (Python's shlex.quote leaves the same set bare, less "=" and
// "%", which make an assignment or a job spec of a leading word), so it
// needs no quotes and a plan's command reads as it was written.
func bareWord(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range []byte(v) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_@+:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

var (
	dqEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	hdEscape = strings.NewReplacer(`\`, `\\`, "$", `\$`, "`", "\\`")
)
