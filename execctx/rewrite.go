package execctx

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
)

// Names of the functions the rewritten tree calls. User names starting with
// "__" are refused, so these cannot collide with variables.
const (
	fnCmp    = "__cmp"    // (op, a, b): == != < <= > >=
	fnIn     = "__in"     // (a, b): a in b
	fnTruth  = "__truth"  // (v): Python truthiness, for and/or/not operands
	fnItem   = "__item"   // (obj, key): obj[key], obj.key
	fnSlice  = "__slice"  // (obj, from, to): obj[from:to]
	fnMethod = "__method" // (name, recv, args...): recv.name(args...)
	fnArith  = "__arith"  // (op, a, b): / % **
	fnJSON   = "__json"   // (s): json.loads(s)
)

// rewriter turns a tree parsed from Python-style source into one that
// expr evaluates with Python's semantics. It runs as two expr.Patch
// visitors: structurePass fixes where Python's grammar differs from expr's
// (precedence of `not`, chained ==), translatePass maps operators, names,
// members and calls onto the functions in pyfuncs.go.
type rewriter struct {
	brackets []bracket         // brackets outside string literals, by rune offset
	callees  map[ast.Node]bool // callee nodes of calls (functions and methods)
	vars     []string          // variables referenced, first appearance first
	seen     map[string]bool
	err      *ConditionError // the first problem found
}

func newRewriter(brackets []bracket) *rewriter {
	return &rewriter{brackets: brackets, callees: map[ast.Node]bool{}, seen: map[string]bool{}}
}

func (r *rewriter) fail(loc file.Location, format string, args ...any) {
	if r.err == nil {
		r.err = &ConditionError{Column: loc.From + 1, Err: fmt.Errorf(format, args...)}
	}
}

// closedBetween reports whether a bracket opened before rune offset from is
// closed before offset to: then the operand that starts at from is
// parenthesized and Python's grammar needs no fix.
func (r *rewriter) closedBetween(from, to int) bool {
	depth := 0
	for _, b := range r.brackets {
		if b.pos < from {
			continue
		}
		if b.pos >= to {
			break
		}
		depth += b.delta
		if depth < 0 {
			return true
		}
	}
	return false
}

type structurePass struct{ *rewriter }

func (p structurePass) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.CallNode:
		p.callees[n.Callee] = true
		if module, _ := jsonLoads(n); module != nil {
			p.callees[module] = true
		}
	case *ast.BinaryNode:
		if fixed := p.fixCompare(n); fixed != ast.Node(n) {
			*node = fixed
		}
	}
}

func isCompareOp(op string) bool {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "in":
		return true
	}
	return false
}

// negatedOp reports whether u is the `not` of `a not in b` (expr puts it at
// the operator's location) rather than a prefix `not`.
func negatedOp(u *ast.UnaryNode) (*ast.BinaryNode, bool) {
	b, ok := u.Node.(*ast.BinaryNode)
	return b, ok && u.Operator == "not" && b.Operator == "in" && u.Location().From == b.Location().From
}

// fixCompare gives comparisons Python's grammar:
//   - `not a == b` is `not (a == b)` (expr binds not tighter);
//   - `a == b == c` and `a < b == c` are chained: `a == b and b == c`.
func (p structurePass) fixCompare(b *ast.BinaryNode) ast.Node {
	if !isCompareOp(b.Operator) {
		return b
	}
	opAt := b.Location().From
	if u, ok := b.Left.(*ast.UnaryNode); ok && u.Operator == "not" {
		if _, neg := negatedOp(u); !neg && !p.closedBetween(u.Location().From, opAt) {
			inner := &ast.BinaryNode{Operator: b.Operator, Left: u.Node, Right: b.Right}
			inner.SetLocation(b.Location())
			out := &ast.UnaryNode{Operator: "not", Node: p.fixCompare(inner)}
			out.SetLocation(u.Location())
			return out
		}
	}
	if prev, at, ok := lastComparand(b.Left); ok && !p.closedBetween(at, opAt) {
		next := &ast.BinaryNode{Operator: b.Operator, Left: prev, Right: b.Right}
		next.SetLocation(b.Location())
		out := &ast.BinaryNode{Operator: "&&", Left: b.Left, Right: next}
		out.SetLocation(b.Location())
		return out
	}
	return b
}

// lastComparand returns the right operand of a comparison (or of a chain of
// them) and the offset of its operator.
func lastComparand(n ast.Node) (ast.Node, int, bool) {
	switch x := n.(type) {
	case *ast.BinaryNode:
		if isCompareOp(x.Operator) {
			return x.Right, x.Location().From, true
		}
		// expr builds `a < b < c` as `a < b && b < c`, the && at the second
		// operator; a written && is at its own token.
		if x.Operator == "&&" && x.Right != nil && x.Right.Location() == x.Location() {
			return lastComparand(x.Right)
		}
	case *ast.UnaryNode:
		if b, ok := negatedOp(x); ok {
			return b.Right, b.Location().From, true
		}
	}
	return nil, 0, false
}

type translatePass struct{ *rewriter }

func call(loc file.Location, name string, args ...ast.Node) ast.Node {
	callee := &ast.IdentifierNode{Value: name}
	callee.SetLocation(loc)
	n := &ast.CallNode{Callee: callee, Arguments: args}
	n.SetLocation(loc)
	return n
}

func str(loc file.Location, s string) ast.Node {
	n := &ast.StringNode{Value: s}
	n.SetLocation(loc)
	return n
}

func orNil(n ast.Node, loc file.Location) ast.Node {
	if n != nil {
		return n
	}
	out := &ast.NilNode{}
	out.SetLocation(loc)
	return out
}

func (p translatePass) Visit(node *ast.Node) {
	if p.err != nil {
		return
	}
	loc := (*node).Location()
	set := func(n ast.Node) {
		n.SetLocation(loc)
		*node = n
	}
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if p.callees[n] || strings.HasPrefix(n.Value, "__") {
			return
		}
		switch n.Value {
		case "True", "False":
			set(&ast.BoolNode{Value: n.Value == "True"})
		case "None":
			set(&ast.NilNode{})
		default:
			if !isIdent(n.Value) {
				p.fail(loc, "%q is not a variable name", n.Value)
				return
			}
			if !p.seen[n.Value] {
				p.seen[n.Value] = true
				p.vars = append(p.vars, n.Value)
			}
		}
	case *ast.MemberNode:
		if n.Optional {
			p.fail(loc, "?. is not supported")
		} else if !p.callees[n] {
			set(call(loc, fnItem, n.Node, n.Property))
		}
	case *ast.SliceNode:
		set(call(loc, fnSlice, n.Node, orNil(n.From, loc), orNil(n.To, loc)))
	case *ast.CallNode:
		p.translateCall(n, set)
	case *ast.BinaryNode:
		switch op := n.Operator; op {
		case "==", "!=", "<", "<=", ">", ">=":
			set(call(loc, fnCmp, str(loc, op), n.Left, n.Right))
		case "in":
			set(call(loc, fnIn, n.Left, n.Right))
		case "and", "or", "&&", "||":
			set(&ast.BinaryNode{Operator: op, Left: call(loc, fnTruth, n.Left), Right: call(loc, fnTruth, n.Right)})
		case "/", "%", "**":
			set(call(loc, fnArith, str(loc, op), n.Left, n.Right))
		case "^":
			p.fail(loc, "^ is not supported (in Python it is xor; use ** for powers)")
		case "..", "??":
			p.fail(loc, "%s is not supported", op)
		}
	case *ast.UnaryNode:
		if n.Operator == "not" || n.Operator == "!" {
			set(&ast.UnaryNode{Operator: "not", Node: call(loc, fnTruth, n.Node)})
		}
	case *ast.ConditionalNode:
		set(&ast.ConditionalNode{Ternary: n.Ternary, Cond: call(loc, fnTruth, n.Cond), Exp1: n.Exp1, Exp2: n.Exp2})
	case *ast.BuiltinNode:
		p.fail(loc, "%s() is not supported", n.Name)
	case *ast.PredicateNode, *ast.PointerNode:
		p.fail(loc, "# predicates are not supported")
	case *ast.VariableDeclaratorNode:
		p.fail(loc, "let is not supported")
	case *ast.SequenceNode:
		p.fail(loc, "; is not supported: write one expression")
	case *ast.ChainNode:
		p.fail(loc, "?. is not supported")
	case *ast.BytesNode:
		p.fail(loc, "bytes literals are not supported")
	}
}

// jsonLoads recognizes json.loads(...), returning the `json` node.
func jsonLoads(n *ast.CallNode) (*ast.IdentifierNode, bool) {
	m, ok := n.Callee.(*ast.MemberNode)
	if !ok {
		return nil, false
	}
	id, ok := m.Node.(*ast.IdentifierNode)
	prop, ok2 := m.Property.(*ast.StringNode)
	if !ok || !ok2 || id.Value != "json" || prop.Value != "loads" {
		return nil, false
	}
	return id, true
}

func (p translatePass) translateCall(n *ast.CallNode, set func(ast.Node)) {
	loc := n.Location()
	if _, ok := jsonLoads(n); ok {
		set(call(loc, fnJSON, n.Arguments...))
		return
	}
	switch c := n.Callee.(type) {
	case *ast.IdentifierNode:
		if _, ok := pyFuncs[c.Value]; ok || strings.HasPrefix(c.Value, "__") {
			return
		}
		p.fail(loc, "unknown function %s()", c.Value)
	case *ast.MemberNode:
		name, ok := c.Property.(*ast.StringNode)
		if !ok || c.Optional {
			p.fail(loc, "only functions and methods can be called")
			return
		}
		if !knownMethod(name.Value) {
			p.fail(loc, "unknown method .%s()", name.Value)
			return
		}
		args := append([]ast.Node{str(loc, name.Value), c.Node}, n.Arguments...)
		set(call(loc, fnMethod, args...))
	default:
		p.fail(loc, "only functions and methods can be called")
	}
}

// internalFuncs implement the rewritten operators.
var internalFuncs = map[string]func(a []any) (any, error){
	fnCmp: func(a []any) (any, error) {
		op, _ := a[0].(string)
		switch op {
		case "==":
			return pyEqual(a[1], a[2]), nil
		case "!=":
			return !pyEqual(a[1], a[2]), nil
		}
		return pyCompare(op, a[1], a[2])
	},
	fnIn:    func(a []any) (any, error) { return pyIn(a[0], a[1]) },
	fnTruth: func(a []any) (any, error) { return Truthy(a[0]), nil },
	fnItem:  func(a []any) (any, error) { return pyItem(a[0], a[1]) },
	fnSlice: func(a []any) (any, error) { return pySlice(a[0], a[1], a[2]) },
	fnMethod: func(a []any) (any, error) {
		name, _ := a[0].(string)
		return callMethod(name, a[1], a[2:])
	},
	fnArith: func(a []any) (any, error) {
		op, _ := a[0].(string)
		return arith(op, a[1], a[2])
	},
	fnJSON: func(a []any) (any, error) {
		if err := arity("json.loads", a, 1, 1); err != nil {
			return nil, err
		}
		return jsonLoadsValue(a[0])
	},
}

// internalArity is each internal function's minimum number of arguments.
var internalArity = map[string]int{fnCmp: 3, fnIn: 2, fnTruth: 1, fnItem: 2, fnSlice: 3, fnMethod: 2, fnArith: 3, fnJSON: 0}
