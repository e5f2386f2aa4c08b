package safety

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"
)

// awkScan is what an awk program does beyond reading its input and
// printing to standard output, found by parsing it (goawk's parser) and
// walking the syntax tree: string literals cannot hide a pipe.
type awkScan struct {
	// execs are the commands it runs: system(cmd), print | cmd,
	// cmd | getline.
	execs []awkTarget
	// writes are the files print > FILE and print >> FILE write.
	writes []awkTarget
	// reads are the files getline < FILE reads.
	reads []awkTarget
	// argv: it changes ARGV (or passes ARGV to a function, which may):
	// the files it reads as input are computed when it runs.
	argv bool
	// environ: it changes ENVIRON, which gawk passes to the commands
	// it runs.
	environ bool
	// err: the program does not parse (gawk-only syntax such as |&,
	// @load, @include or BEGINFILE, or not awk at all).
	err error
}

// awkTarget is a command or file name in an awk program: its value when
// it is a constant string (or a concatenation of constants), else the
// expression's text.
type awkTarget struct {
	how    string // "system", "print |", "| getline", ">", ">>", "getline <"
	val    string
	static bool
	text   string
}

// gawkFuncs are gawk's built-in functions that goawk does not have,
// declared to the parser so that programs using them parse: none of them
// runs a command or touches a file (gawk's I/O is print, printf, getline,
// close, fflush and system, all walked here). Functions that take arrays
// (asort, asorti, patsplit, isarray) are not here: the parser types their
// arguments as scalars, so programs using them do not parse.
var gawkFuncs = func() map[string]any {
	m := map[string]any{}
	for _, n := range []string{"gensub", "strftime", "systime", "mktime", "strtonum", "and", "or", "xor",
		"lshift", "rshift", "compl", "typeof", "bindtextdomain", "dcgettext", "dcngettext"} {
		m[n] = func(...string) string { return "" }
	}
	return m
}()

// scanAwk parses an awk program and finds what it runs, writes and reads.
func scanAwk(src string) (sc awkScan) {
	defer func() {
		// The parser signals its own errors by panics it recovers; any
		// other is a program it cannot read.
		if r := recover(); r != nil {
			sc = awkScan{err: fmt.Errorf("parser failed: %v", r)}
		}
	}()
	prog, err := parseAwk(src)
	if err != nil {
		return awkScan{err: err}
	}
	w := awkWalker{sc: &sc}
	for _, part := range []any{prog.Begin, prog.Actions, prog.End, prog.Functions} {
		w.walk(reflect.ValueOf(part), 0)
	}
	return sc
}

// parseAwk parses an awk program with gawk's pure built-ins declared.
func parseAwk(src string) (*parser.Program, error) {
	return parser.ParseProgram([]byte(src), &parser.ParserConfig{Funcs: gawkFuncs})
}

// maxAwkDepth bounds the syntax tree's depth the walk follows; deeper is
// not understood.
const maxAwkDepth = 2000

// awkWalker walks goawk's syntax tree by reflection: its node types live
// in an internal package, so they are told apart by their type names
// (pinned with the goawk version in go.mod; TestScanAwk fails when a
// name changes).
type awkWalker struct{ sc *awkScan }

var positionType = reflect.TypeOf(lexer.Position{})

func (w awkWalker) walk(v reflect.Value, depth int) {
	if depth > maxAwkDepth {
		if w.sc.err == nil {
			w.sc.err = fmt.Errorf("program nested more than %d levels deep", maxAwkDepth)
		}
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			w.walk(v.Elem(), depth+1)
		}
		return
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), depth+1)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if v.Type() == positionType {
		return
	}
	w.node(v)
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() {
			w.walk(v.Field(i), depth+1)
		}
	}
}

// node records what one node of the tree does.
func (w awkWalker) node(v reflect.Value) {
	switch v.Type().Name() {
	case "PrintStmt", "PrintfStmt":
		tok, _ := v.FieldByName("Redirect").Interface().(lexer.Token)
		dest := v.FieldByName("Dest")
		kw := strings.ToLower(strings.TrimSuffix(v.Type().Name(), "Stmt"))
		switch tok {
		case lexer.PIPE:
			w.sc.execs = append(w.sc.execs, awkConst(kw+" |", dest))
		case lexer.GREATER:
			w.sc.writes = append(w.sc.writes, awkConst(">", dest))
		case lexer.APPEND:
			w.sc.writes = append(w.sc.writes, awkConst(">>", dest))
		}
	case "CallExpr":
		tok, _ := v.FieldByName("Func").Interface().(lexer.Token)
		if args := v.FieldByName("Args"); tok == lexer.F_SYSTEM && args.Len() > 0 {
			w.sc.execs = append(w.sc.execs, awkConst("system", args.Index(0)))
		}
		if tok == lexer.F_SUB || tok == lexer.F_GSUB {
			if args := v.FieldByName("Args"); args.Len() > 2 {
				w.lvalue(args.Index(2))
			}
		}
		if args := v.FieldByName("Args"); tok == lexer.F_SPLIT && args.Len() > 1 {
			w.lvalue(args.Index(1))
		}
	case "GetlineExpr":
		if cmd := v.FieldByName("Command"); !cmd.IsNil() {
			w.sc.execs = append(w.sc.execs, awkConst("| getline", cmd))
		}
		if f := v.FieldByName("File"); !f.IsNil() {
			w.sc.reads = append(w.sc.reads, awkConst("getline <", f))
		}
		if t := v.FieldByName("Target"); !t.IsNil() {
			w.lvalue(t)
		}
	case "AssignExpr", "AugAssignExpr":
		w.lvalue(v.FieldByName("Left"))
	case "IncrExpr":
		w.lvalue(v.FieldByName("Expr"))
	case "BinaryExpr":
		// getline < "a" "b": goawk, gawk and mawk read "a", busybox
		// "ab". The file name is then not known.
		tok, _ := v.FieldByName("Op").Interface().(lexer.Token)
		if l := awkUnwrap(v.FieldByName("Left")); tok == lexer.CONCAT && l.IsValid() && l.Type().Name() == "GetlineExpr" &&
			!l.FieldByName("File").IsNil() {
			w.sc.reads = append(w.sc.reads, awkTarget{how: "getline <", text: "(ambiguous: concatenated after the file name)"})
		}
	case "NamedFieldExpr":
		// goawk reads @expr as a CSV field; gawk as @load, @include,
		// @namespace, a regex constant or an indirect function call.
		if w.sc.err == nil {
			w.sc.err = fmt.Errorf("@%s: gawk's @ syntax (@load, @include, indirect calls) is not analysed", shorten(fmt.Sprint(v.FieldByName("Field").Interface())))
		}
	case "VarExpr":
		// A bare array name is an argument to a function, which may
		// change the array through it.
		switch v.FieldByName("Name").String() {
		case "ARGV":
			w.sc.argv = true
		case "ENVIRON":
			w.sc.environ = true
		}
	}
}

// lvalue records an assignment to ARGV, ARGC or ENVIRON.
func (w awkWalker) lvalue(e reflect.Value) {
	for e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
		if e.IsNil() {
			return
		}
		e = e.Elem()
	}
	if e.Kind() != reflect.Struct {
		return
	}
	name := ""
	switch e.Type().Name() {
	case "IndexExpr":
		name = e.FieldByName("Array").String()
	case "VarExpr":
		name = e.FieldByName("Name").String()
	}
	switch name {
	case "ARGV", "ARGC":
		w.sc.argv = true
	case "ENVIRON":
		w.sc.environ = true
	}
}

// awkConst is the value of an expression when it is a string constant,
// a parenthesized one or a concatenation of them.
func awkConst(how string, e reflect.Value) awkTarget {
	t := awkTarget{how: how, text: "?"}
	if e.IsValid() && e.CanInterface() {
		if s, ok := e.Interface().(fmt.Stringer); ok && !(e.Kind() == reflect.Interface && e.IsNil()) {
			t.text = shorten(s.String())
		}
	}
	// An unparenthesized concatenation is read differently by the
	// awks: mawk and onetrue awk run "a" "b" | getline as "a" ("b" |
	// getline), goawk and busybox as ("a" "b") | getline. Only a single
	// string or a parenthesized expression is taken as a constant.
	if top := awkUnwrap(e); top.IsValid() && top.Type().Name() == "BinaryExpr" {
		return t
	}
	t.val, t.static = awkFold(e, 0)
	return t
}

// awkUnwrap is the struct an expression value holds.
func awkUnwrap(e reflect.Value) reflect.Value {
	for e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
		if e.IsNil() {
			return reflect.Value{}
		}
		e = e.Elem()
	}
	if e.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return e
}

func awkFold(e reflect.Value, depth int) (string, bool) {
	for e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
		if e.IsNil() {
			return "", false
		}
		e = e.Elem()
	}
	if e.Kind() != reflect.Struct || depth > 64 {
		return "", false
	}
	switch e.Type().Name() {
	case "StrExpr":
		if e.FieldByName("Regex").Bool() {
			return "", false // a regex constant's value is $0 ~ /re/
		}
		return e.FieldByName("Value").String(), true
	case "GroupingExpr":
		return awkFold(e.FieldByName("Expr"), depth+1)
	case "BinaryExpr":
		if tok, _ := e.FieldByName("Op").Interface().(lexer.Token); tok != lexer.CONCAT {
			return "", false
		}
		l, ok1 := awkFold(e.FieldByName("Left"), depth+1)
		r, ok2 := awkFold(e.FieldByName("Right"), depth+1)
		return l + r, ok1 && ok2
	}
	return "", false
}

// awkNetwork reports gawk's network special files (/inet/tcp/…,
// /inet4/udp/…): reading or writing one connects to another host.
func awkNetwork(name string) bool {
	for _, p := range []string{"/inet/", "/inet4/", "/inet6/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
