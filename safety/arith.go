package safety

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates a variable's value met in arithmetic as an expression of
// its own, and the text a command substitution gives there too, and
// expands an array subscript in it: with y read from a file holding
// a[$(cmd)], `echo $((y))`, `(( y > 1 ))`, `[[ $y -eq 1 ]]`,
// `${x:y}`, `declare -i z=y` and `$(( $(cat f) ))` run cmd. /bin/sh is
// bash on Red Hat's family (and bash in POSIX mode does the same), so a
// plan's "safe" arithmetic over what a step reads at run time is code
// from the host. arithRuntime finds arithmetic over such a value.

// numericPrograms print numbers only (as a command substitution's last
// program): their output in arithmetic is no code.
var numericPrograms = []string{"nproc", "wc", "date", "stat", "id", "getconf", "expr"}

// arithRuntime names the first arithmetic in f over a value the command
// gets when it runs — a variable set from input, a command's output, a
// loop over either, a name the code does not set when it is nested code
// (its environment is the outer code's) — or returns "".
func arithRuntime(f *syntax.File, nested bool) string {
	set := map[string]bool{}      // names set in f
	runtime := map[string]bool{}  // of which: to a value known only when it runs
	symbolic := map[string]bool{} // of which: to a static value that may name another
	integer := map[string]bool{}  // names with the integer attribute (declare -i)
	named := false                // a nameref (declare -n) or indirect names
	taint := func(n string) { set[n], runtime[n] = true, true }
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name == nil {
				return true
			}
			set[x.Name.Value] = true
			if x.Value != nil && !numericWord(x.Value) || x.Array != nil && !staticArray(x.Array) {
				runtime[x.Name.Value] = true
			}
			if x.Value != nil && namesAWord(x.Value) || x.Array != nil {
				symbolic[x.Name.Value] = true
			}
		case *syntax.DeclClause:
			for _, as := range x.Args {
				if as.Name == nil && as.Value != nil {
					flag := as.Value.Lit()
					if strings.HasPrefix(flag, "-") && strings.Contains(flag, "n") {
						named = true
					}
					if strings.HasPrefix(flag, "-") && strings.Contains(flag, "i") {
						for _, o := range x.Args {
							if o.Name != nil {
								integer[o.Name.Value] = true
							}
						}
					}
				}
			}
		case *syntax.ForClause:
			if w, ok := x.Loop.(*syntax.WordIter); ok {
				set[w.Name.Value] = true
				for _, it := range w.Items {
					if lit := it.Lit(); lit == "" || strings.ContainsAny(lit, "*?[") {
						runtime[w.Name.Value] = true
					} else if len(arithNames(lit)) > 0 {
						symbolic[w.Name.Value] = true
					}
				}
				if x.Select || len(w.Items) == 0 && !w.InPos.IsValid() {
					runtime[w.Name.Value] = true // select reads input; no list: the positional parameters
				}
			}
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				return true
			}
			args := make([]string, len(x.Args))
			for i, a := range x.Args {
				args[i] = a.Lit()
			}
			switch args[0] {
			case "read", "mapfile", "readarray", "getopts":
				// Every word that may be a name: over-approximated.
				for _, a := range args[1:] {
					if a != "" && !strings.HasPrefix(a, "-") {
						taint(a)
					}
				}
				for _, v := range []string{"REPLY", "MAPFILE", "OPTARG"} {
					taint(v)
				}
			case "printf":
				for i, a := range args[:len(args)-1] {
					if a == "-v" {
						taint(args[i+1])
					}
				}
			case "set", "shift":
				for _, v := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*"} {
					taint(v)
				}
			}
		case *syntax.ParamExp:
			if x.Excl {
				named = true
			}
		}
		return true
	})
	// A name is run time when it was set so, or not set here at all in
	// nested code, or when any name is and its static value may name
	// another.
	anyRuntime := len(runtime) > 0
	isRuntime := func(name string) bool {
		switch name {
		case "#", "?", "$", "!", "-", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS":
			return false
		}
		if named || runtime[name] {
			return true
		}
		if !set[name] {
			return nested
		}
		return symbolic[name] && anyRuntime
	}
	why := ""
	check := func(x syntax.Node, what string) {
		if why != "" || x == nil {
			return
		}
		syntax.Walk(x, func(n syntax.Node) bool {
			if why != "" {
				return false
			}
			switch y := n.(type) {
			case *syntax.CmdSubst:
				if !numericSubst(y) {
					why = what + ": a command's output"
				}
				return false
			case *syntax.ProcSubst:
				why = what + ": a process substitution"
				return false
			case *syntax.ParamExp:
				if y.Param != nil && isRuntime(y.Param.Value) {
					why = what + ": $" + y.Param.Value
				}
			case *syntax.Lit:
				for _, name := range arithNames(y.Value) {
					if isRuntime(name) {
						why = what + ": " + name
						break
					}
				}
			case *syntax.SglQuoted, *syntax.DblQuoted:
				// "1+x" in (( )) is evaluated too.
				if lit := strings.Trim(wordText(y), `"'`); lit != "" {
					for _, name := range arithNames(lit) {
						if isRuntime(name) {
							why = what + ": " + name
						}
					}
				}
			}
			return true
		})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.ArithmExp:
			check(x.X, "$((…))")
		case *syntax.ArithmCmd:
			check(x.X, "((…))")
		case *syntax.LetClause:
			for _, e := range x.Exprs {
				check(e, "let")
			}
		case *syntax.CStyleLoop:
			check(x.Init, "for ((…))")
			check(x.Cond, "for ((…))")
			check(x.Post, "for ((…))")
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				check(x.X, "[[ -eq ]]")
				check(x.Y, "[[ -eq ]]")
			}
		case *syntax.ParamExp:
			if x.Slice != nil {
				check(x.Slice.Offset, "${x:offset}")
				check(x.Slice.Length, "${x:offset:length}")
			}
			if x.Index != nil {
				check(x.Index, "${a[index]}")
			}
		case *syntax.Assign:
			if x.Index != nil {
				check(x.Index, "a[index]=")
			}
			if x.Name != nil && integer[x.Name.Value] && x.Value != nil {
				check(x.Value, "an integer variable's value")
			}
		}
		return true
	})
	return why
}

// arithNames are the names in arithmetic text ("y", "a", "x" in
// "y + a[x]").
func arithNames(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if i == 0 || s[i-1] < '0' || s[i-1] > '9' { // not a base's digits: 16#ff
				out = append(out, s[i:j])
			}
			i = j
			continue
		}
		i++
	}
	return out
}

// numericWord: a value without expansions but a numeric command's
// output (n=$(nproc)), or no expansion at all.
func numericWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.ArithmExp:
			// a number: what it evaluates is checked as arithmetic
		case *syntax.CmdSubst:
			if !numericSubst(x) {
				return false
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if cs, ok := q.(*syntax.CmdSubst); ok && numericSubst(cs) {
					continue
				}
				if _, ok := q.(*syntax.ArithmExp); ok {
					continue
				}
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// namesAWord: w's text may name a variable (y, a[x]) where arithmetic
// meets it; an arithmetic expansion in it is a number.
func namesAWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.ArithmExp:
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.ArithmExp); !ok && len(arithNames(wordText(q))) > 0 {
					return true
				}
			}
		default:
			if len(arithNames(wordText(p))) > 0 {
				return true
			}
		}
	}
	return false
}

func staticArray(a *syntax.ArrayExpr) bool {
	for _, e := range a.Elems {
		if e.Value != nil && !numericWord(e.Value) {
			return false
		}
	}
	return true
}

// numericSubst: a command substitution of one command (or pipeline)
// whose last program prints numbers only, with static arguments.
func numericSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	cmd := cs.Stmts[0].Cmd
	for {
		b, ok := cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		cmd = b.Y.Cmd
	}
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Assigns) > 0 {
		return false
	}
	for _, a := range call.Args {
		lit := a.Lit()
		if lit == "" && len(a.Parts) > 0 {
			if _, ok := a.Parts[0].(*syntax.SglQuoted); !ok || len(a.Parts) != 1 {
				return false
			}
		}
		if strings.ContainsAny(lit, "*?[{~") { // a glob: names from the host (wc -l *)
			return false
		}
		// A format's own text is printed: stat -c 'a[$(cmd)]' prints an
		// array subscript that arithmetic runs.
		if strings.ContainsAny(wordText(a), "[]$`") {
			return false
		}
	}
	name := call.Args[0].Lit()
	for _, p := range numericPrograms {
		if name == p {
			// wc prints a file's name after its count; date and stat
			// print their format's text: their formats are static
			// here, and a file name is the command line's own.
			return true
		}
	}
	return false
}

// wordText is a quoted node's text as written.
func wordText(n syntax.Node) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, n)
	return b.String()
}
