package inventory

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// iniValue types an INI value the way Ansible's INI plugin does: Python's
// ast.literal_eval, and the text itself when that fails. So 8080 is an
// int, 1.5 a float, True a bool, None null, [1, 2] a list, {'a': 1} a
// mapping, 'x' the string x, and yes, 010 or hello stay strings.
func iniValue(s string) any {
	v, err := pyLiteral(s)
	if err != nil {
		return s
	}
	if b, ok := v.(pyBytes); ok { // to_text decodes top-level bytes
		return string(b)
	}
	if !jsonable(v) {
		return s
	}
	return v
}

// pyBytes is a b'…' literal; only allowed at the top level.
type pyBytes string

// jsonable reports whether v holds only JSON-able values (no bytes
// inside containers).
func jsonable(v any) bool {
	switch x := v.(type) {
	case pyBytes:
		return false
	case []any:
		for _, e := range x {
			if !jsonable(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !jsonable(e) {
				return false
			}
		}
	}
	return true
}

// pyLiteral evaluates a Python literal expression (Python 3.11's
// ast.literal_eval of a string, which first strips leading spaces and
// tabs): numbers, strings (concatenated when adjacent), True, False,
// None, lists, tuples (as lists) and dicts. Sets, complex numbers and
// f-strings are refused.
func pyLiteral(s string) (any, error) {
	p := &pyParser{s: strings.TrimLeft(s, " \t")}
	p.next()
	v, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tOp && p.tok.text == "," { // a bare tuple: 1, 2
		items := []any{v}
		for p.tok.kind == tOp && p.tok.text == "," {
			p.next()
			if p.tok.kind == tEOF {
				break
			}
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			items = append(items, e)
		}
		v = items
	}
	if p.tok.kind != tEOF {
		return nil, fmt.Errorf("unexpected %q", p.tok.text)
	}
	return v, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tName
	tOp
	tErr
)

type pyTok struct {
	kind tokKind
	text string
	val  any // tNum: int/float64/json.Number; tStr: string or pyBytes
}

type pyParser struct {
	s   string
	pos int
	tok pyTok
}

var (
	reDecInt  = regexp.MustCompile(`^(?:[1-9](?:_?[0-9])*|0(?:_?0)*)$`)
	reHexInt  = regexp.MustCompile(`^0[xX](?:_?[0-9a-fA-F])+$`)
	reOctInt  = regexp.MustCompile(`^0[oO](?:_?[0-7])+$`)
	reBinInt  = regexp.MustCompile(`^0[bB](?:_?[01])+$`)
	reFloat   = regexp.MustCompile(`^(?:(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*\.)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$|^[0-9](?:_?[0-9])*[eE][+-]?[0-9](?:_?[0-9])*$`)
	reStrPref = regexp.MustCompile(`^(?i:r|u|b|br|rb|f|fr|rf)?$`)
)

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// next scans one token, skipping spaces, tabs and # comments.
func (p *pyParser) next() {
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == ' ' || c == '\t' || c == '\f' {
			p.pos++
			continue
		}
		if c == '#' {
			p.pos = len(p.s)
			continue
		}
		break
	}
	if p.pos >= len(p.s) {
		p.tok = pyTok{kind: tEOF}
		return
	}
	start := p.pos
	c := p.s[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.' && p.pos+1 < len(p.s) && p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9':
		for p.pos < len(p.s) {
			d := p.s[p.pos]
			if isIdent(d) || d == '.' {
				p.pos++
				continue
			}
			if (d == '+' || d == '-') && p.pos > start && (p.s[p.pos-1] == 'e' || p.s[p.pos-1] == 'E') &&
				!strings.HasPrefix(strings.ToLower(p.s[start:]), "0x") {
				p.pos++
				continue
			}
			break
		}
		text := p.s[start:p.pos]
		v, err := pyNumber(text)
		if err != nil {
			p.tok = pyTok{kind: tErr, text: err.Error()}
			return
		}
		p.tok = pyTok{kind: tNum, text: text, val: v}
	case isIdent(c):
		for p.pos < len(p.s) && isIdent(p.s[p.pos]) {
			p.pos++
		}
		name := p.s[start:p.pos]
		if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"') && reStrPref.MatchString(name) {
			p.str(name)
			return
		}
		p.tok = pyTok{kind: tName, text: name}
	case c == '\'' || c == '"':
		p.str("")
	default:
		p.pos++
		p.tok = pyTok{kind: tOp, text: string(c)}
	}
}

// str scans a string literal whose prefix has been read.
func (p *pyParser) str(prefix string) {
	pre := strings.ToLower(prefix)
	if strings.Contains(pre, "f") {
		p.tok = pyTok{kind: tErr, text: "f-strings are not literals"}
		return
	}
	raw, isBytes := strings.Contains(pre, "r"), strings.Contains(pre, "b")
	q := p.s[p.pos : p.pos+1]
	if strings.HasPrefix(p.s[p.pos:], q+q+q) {
		q = q + q + q
	}
	p.pos += len(q)
	start := p.pos
	for {
		if p.pos >= len(p.s) {
			p.tok = pyTok{kind: tErr, text: "unterminated string literal"}
			return
		}
		if p.s[p.pos] == '\\' {
			p.pos += 2
			continue
		}
		if strings.HasPrefix(p.s[p.pos:], q) {
			break
		}
		p.pos++
	}
	body := p.s[start:p.pos]
	p.pos += len(q)
	if isBytes {
		for i := 0; i < len(body); i++ {
			if body[i] >= 0x80 {
				p.tok = pyTok{kind: tErr, text: "bytes can only contain ASCII"}
				return
			}
		}
	}
	val := body
	if !raw {
		v, err := pyUnescape(body, isBytes)
		if err != nil {
			p.tok = pyTok{kind: tErr, text: err.Error()}
			return
		}
		val = v
	}
	if isBytes {
		p.tok = pyTok{kind: tStr, text: body, val: pyBytes(val)}
	} else {
		p.tok = pyTok{kind: tStr, text: body, val: val}
	}
}

func pyUnescape(s string, isBytes bool) (string, error) {
	if !strings.Contains(s, "\\") {
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("invalid UTF-8")
		}
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		e := s[i]
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			if isBytes {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if isBytes && e != 'x' {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if i+1+n > len(s) {
				return "", fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", fmt.Errorf("bad \\%c escape", e)
			}
			if isBytes {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += n
		case 'N':
			return "", fmt.Errorf("\\N{…} escapes are not supported")
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

func pyNumber(text string) (any, error) {
	clean := strings.ReplaceAll(text, "_", "")
	switch {
	case reDecInt.MatchString(text):
		return pyIntValue(clean, 10)
	case reHexInt.MatchString(text):
		return pyIntValue(clean[2:], 16)
	case reOctInt.MatchString(text):
		return pyIntValue(clean[2:], 8)
	case reBinInt.MatchString(text):
		return pyIntValue(clean[2:], 2)
	case reFloat.MatchString(text):
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, err
		}
		if math.IsInf(f, 0) {
			return nil, fmt.Errorf("float %s out of range", text)
		}
		return f, nil
	}
	return nil, fmt.Errorf("invalid number %q", text)
}

func pyIntValue(digits string, base int) (any, error) {
	if n, err := strconv.ParseInt(digits, base, 64); err == nil {
		return int(n), nil
	}
	var z big.Int
	if _, ok := z.SetString(digits, base); !ok || len(digits) > 4300 {
		return nil, fmt.Errorf("invalid integer")
	}
	return json.Number(z.String()), nil
}

// expr parses one literal; depth bounds nesting.
func (p *pyParser) expr(depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("nested too deeply")
	}
	t := p.tok
	switch t.kind {
	case tErr:
		return nil, fmt.Errorf("%s", t.text)
	case tNum:
		p.next()
		return p.noBinary(t.val)
	case tStr:
		v := t.val
		p.next()
		for p.tok.kind == tStr {
			_, b1 := v.(pyBytes)
			_, b2 := p.tok.val.(pyBytes)
			if b1 != b2 {
				return nil, fmt.Errorf("cannot mix bytes and nonbytes literals")
			}
			if b1 {
				v = v.(pyBytes) + p.tok.val.(pyBytes)
			} else {
				v = v.(string) + p.tok.val.(string)
			}
			p.next()
		}
		return v, nil
	case tName:
		p.next()
		switch t.text {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		}
		return nil, fmt.Errorf("name %q is not a literal", t.text)
	case tOp:
		switch t.text {
		case "-", "+":
			p.next()
			v, err := p.atomNumber(depth + 1)
			if err != nil {
				return nil, err
			}
			if t.text == "-" {
				switch n := v.(type) {
				case int:
					if n == math.MinInt {
						return nil, fmt.Errorf("integer out of range")
					}
					v = -n
				case float64:
					v = -n
				case json.Number:
					v = json.Number("-" + string(n))
				}
			}
			return p.noBinary(v)
		case "(":
			p.next()
			if p.tok.kind == tOp && p.tok.text == ")" {
				p.next()
				return []any{}, nil
			}
			first, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.tok.kind == tOp && p.tok.text == ")" {
				p.next()
				return first, nil
			}
			items := []any{first}
			for p.tok.kind == tOp && p.tok.text == "," {
				p.next()
				if p.tok.kind == tOp && p.tok.text == ")" {
					break
				}
				v, err := p.expr(depth + 1)
				if err != nil {
					return nil, err
				}
				items = append(items, v)
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return items, nil
		case "[":
			p.next()
			items := []any{}
			for !(p.tok.kind == tOp && p.tok.text == "]") {
				v, err := p.expr(depth + 1)
				if err != nil {
					return nil, err
				}
				items = append(items, v)
				if p.tok.kind == tOp && p.tok.text == "," {
					p.next()
					continue
				}
				break
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			return items, nil
		case "{":
			p.next()
			m := map[string]any{}
			keyOf := map[string]string{} // Python's key equality: True == 1 == 1.0
			for !(p.tok.kind == tOp && p.tok.text == "}") {
				k, err := p.expr(depth + 1)
				if err != nil {
					return nil, err
				}
				if err := p.expect(":"); err != nil {
					return nil, err // a set, or garbage
				}
				v, err := p.expr(depth + 1)
				if err != nil {
					return nil, err
				}
				ks, err := pyKey(k)
				if err != nil {
					return nil, err
				}
				id := pyKeyIdentity(k, ks)
				if first, ok := keyOf[id]; ok {
					ks = first // the first key object stays, its value is replaced
				} else {
					keyOf[id] = ks
				}
				m[ks] = v
				if p.tok.kind == tOp && p.tok.text == "," {
					p.next()
					continue
				}
				break
			}
			if err := p.expect("}"); err != nil {
				return nil, err
			}
			return m, nil
		}
	case tEOF:
		return nil, fmt.Errorf("unexpected end of value")
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

// atomNumber parses the operand of a unary sign: a number, possibly in
// parentheses.
func (p *pyParser) atomNumber(depth int) (any, error) {
	if p.tok.kind == tOp && p.tok.text == "(" {
		p.next()
		v, err := p.atomNumber(depth + 1)
		if err != nil {
			return nil, err
		}
		return v, p.expect(")")
	}
	if p.tok.kind != tNum {
		return nil, fmt.Errorf("malformed node or string")
	}
	v := p.tok.val
	p.next()
	return v, nil
}

// noBinary refuses "1+2j"-style binary operations (only complex numbers
// may be built that way, and they are refused).
func (p *pyParser) noBinary(v any) (any, error) {
	if p.tok.kind == tOp && (p.tok.text == "+" || p.tok.text == "-") {
		return nil, fmt.Errorf("binary operations are not literals")
	}
	return v, nil
}

func (p *pyParser) expect(op string) error {
	if p.tok.kind == tOp && p.tok.text == op {
		p.next()
		return nil
	}
	if p.tok.kind == tErr {
		return fmt.Errorf("%s", p.tok.text)
	}
	return fmt.Errorf("expected %q", op)
}

// pyKey is the JSON object key Python's json module writes for a dict key.
func pyKey(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "null", nil
	case int:
		return strconv.Itoa(x), nil
	case json.Number:
		return string(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("unhashable dict key")
}

// pyKeyIdentity groups dict keys Python considers equal: True, 1 and 1.0
// are one key, so are False, 0 and 0.0.
func pyKeyIdentity(k any, ks string) string {
	switch x := k.(type) {
	case bool:
		if x {
			return "n:1"
		}
		return "n:0"
	case int:
		return "n:" + strconv.Itoa(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return "n:" + strconv.Itoa(int(x))
		}
		return "n:" + ks
	case json.Number:
		return "n:" + string(x)
	case string:
		return "s:" + x
	}
	return "o:" + ks
}
