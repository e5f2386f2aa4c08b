package execctx

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// TestRenderShell: a reference in a command line is one shell word with
// the variable's exact value, wherever it stands; |raw splices syntax.
func TestRenderShell(t *testing.T) {
	vars := map[string]any{"out": "x; touch PWNED $(touch PWNED2) `touch PWNED3` 'q' \"d\" \\ \n$HOME",
		"n": int64(3), "csv": "b,c", "name": "world", "empty": "", "cmd": "echo hi; echo there", "log": "~/app log", "nl": "a\nb\n\n", "home": "~", "tuser": "~root/x", "dict": map[string]any{"k": "v w"}, "assign": "LD_PRELOAD=/x.so", "job": "%1"}
	for _, tc := range []struct{ tmpl, want string }{
		{`echo {{out}}`, "echo 'x; touch PWNED $(touch PWNED2) `touch PWNED3` '\\''q'\\'' \"d\" \\ \n$HOME'"},
		{`echo "{{name}}"`, `echo "world"`},
		{`echo '{{name}}'`, `echo 'world'`},
		{`echo pre{{name}}post`, `echo preworldpost`},
		{`{{assign}} ls`, `'LD_PRELOAD=/x.so' ls`},
		{`fg {{job}}`, `fg '%1'`},
		{`echo {a,{{csv}}}`, `echo {a,'b,c'}`},
		{`echo {{csv}}`, `echo b,c`},
		{`echo {{empty}}`, `echo ''`},
		{`echo {{nl}} "{{nl}}" '{{nl}}'`, `echo 'a
b' "a
b" 'a
b'`},
		{`grep -F ERROR -- {{log}}`, `grep -F ERROR -- ~/'app log'`},
		{`cd {{home}}`, `cd ~`},
		{`echo {{tuser}}`, `echo '~root/x'`},
		{`echo $(( {{n}} + 1 ))`, `echo $(( 3 + 1 ))`},
		{`echo {{dict.k}}`, `echo 'v w'`},
		{`{{cmd|raw}}`, `echo hi; echo there`},
		{`{{ cmd | raw }} && echo {{name}}`, `echo hi; echo there && echo world`},
		{`{{cmd}}`, `echo hi; echo there`},
		{`  {{cmd}}  `, `  echo hi; echo there  `},
		{`docker ps --format '{{.Names}}'`, `docker ps --format '{{.Names}}'`},
		{"cat <<'EOF'\n{{name}}\nEOF", "cat <<'EOF'\nworld\nEOF"},
		{`echo {{name}} # {{name}}`, `echo world # world`},
	} {
		got, err := renderShell(tc.tmpl, vars)
		if err != nil || got != tc.want {
			t.Errorf("renderShell(%q) = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
}

// TestRenderShellRuns: the rendered line, run by /bin/sh (dash here) and
// by bash, prints the value exactly and runs nothing else, in every
// quoting context.
func TestRenderShellRuns(t *testing.T) {
	dir := t.TempDir()
	val := "x; touch PWNED $(touch PWNED2) `touch PWNED3` 'q' \"d\" \\ \\n $HOME !x * ? [a] {a,b} ~ EOF\n|& > PWNED4 #"
	vars := map[string]any{"v": val}
	for _, tmpl := range []string{
		`printf '%s' {{v}}`,
		`printf '%s' "{{v}}"`,
		`printf '%s' '{{v}}'`,
		"cat <<EOF\n{{v}}\nEOF",
		"cat <<'EOF'\n{{v}}\nEOF",
		`printf '%s' "$(printf '%s' {{v}})"`,
		`x={{v}}; printf '%s' "$x"`,
	} {
		line, err := renderShell(tmpl, vars)
		if err != nil {
			t.Errorf("%q: %v", tmpl, err)
			continue
		}
		want := val
		if strings.HasPrefix(tmpl, "cat") {
			want += "\n"
		}
		for _, sh := range []string{"/bin/sh", "bash"} {
			cmd := exec.Command(sh, "-c", line)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil || string(out) != want {
				t.Errorf("%s -c %q = %q, %v; want %q", sh, line, out, err, want)
			}
		}
	}
	if m, _ := filepathGlob(dir + "/PWNED*"); len(m) > 0 {
		t.Errorf("the value ran as code: %v", m)
	}
}

// TestRenderShellRefuses: where no quoting keeps the value one word, the
// reference is an error that says how to splice it on purpose.
func TestRenderShellRefuses(t *testing.T) {
	vars := map[string]any{"v": "a", "multi": "x\nEOF\nrm -rf ~", "s": "1+a[$(id)]"}
	for _, tmpl := range []string{
		`echo ${{v}}`, `echo ${x:-{{v}}}`, `echo $'{{v}}'`, "echo `echo {{v}}`", `echo \{{v}}`, `echo "\{{v}}"`,
		`{{v}}=1 ls`, `for {{v}} in a; do :; done`, `echo $(( {{s}} ))`, "cat <<EOF\n{{multi}}\nEOF",
		"cat <<{{v}}\nx\na\n", `echo "unterminated {{v}}`, `f() { :; }; function {{v}} { :; }`,
	} {
		_, err := renderShell(tmpl, vars)
		if !errors.Is(err, ErrTemplate) {
			t.Errorf("renderShell(%q) = %v, want ErrTemplate", tmpl, err)
		} else if !strings.Contains(err.Error(), "raw") && !strings.Contains(err.Error(), "does not parse") {
			t.Errorf("renderShell(%q): %v does not say how to splice it", tmpl, err)
		}
	}
	if _, err := renderShell(`echo {{nope}}`, vars); !errors.Is(err, ErrUnknownVariable) {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err := renderShell(`echo AgEnTtPl0Z {{v}}`, vars); !errors.Is(err, ErrTemplate) {
		t.Errorf("marker in the line: %v", err)
	}
}

func filepathGlob(p string) ([]string, error) { return filepath.Glob(p) }

// FuzzRenderShell: whatever the value, a rendered command line has the
// shape it has with a harmless value (the same statements, words and
// expansions, as bash and as POSIX sh parse it), and the word holding
// the value expands to exactly the value.
func FuzzRenderShell(f *testing.F) {
	for _, v := range []string{"x", "a b", "x; rm -rf ~", "$(id)", "`id`", "'", `"`, `\`, "a\nb", "EOF", "$HOME", "~/x", "*", "{a,b}"} {
		f.Add(v)
	}
	tmpls := []string{`printf %s {{v}}`, `printf %s "{{v}}"`, `printf %s '{{v}}'`, `printf %s a{{v}}b`,
		"cat <<EOF\n{{v}}\nEOF", "cat <<'EOF'\n{{v}}\nEOF", `printf %s "$(printf %s {{v}})"`}
	shape := func(line string, lang syntax.LangVariant) (string, error) {
		file, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(line), "")
		if err != nil {
			return "", err
		}
		var b strings.Builder
		syntax.Walk(file, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Stmt:
				b.WriteString("S")
			case *syntax.CallExpr:
				fmt.Fprintf(&b, "C%d", len(x.Args))
			case *syntax.CmdSubst, *syntax.ParamExp, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.Redirect,
				*syntax.BinaryCmd, *syntax.ExtGlob, *syntax.BraceExp:
				fmt.Fprintf(&b, "%T", x)
			}
			return true
		})
		return b.String(), nil
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsRune(v, 0) || strings.Contains(v, markerPrefix) || !utf8.ValidString(v) {
			return // shells take invalid UTF-8; the parser the check uses does not
		}
		for _, tmpl := range tmpls {
			got, err := renderShell(tmpl, map[string]any{"v": v})
			if err != nil {
				continue // refused (a here-document's delimiter in the value)
			}
			base, err := renderShell(tmpl, map[string]any{"v": "x"})
			if err != nil {
				t.Fatal(err)
			}
			for _, lang := range []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX} {
				want, err := shape(base, lang)
				if err != nil {
					t.Fatal(err)
				}
				have, err := shape(got, lang)
				if err != nil || have != want {
					t.Fatalf("%q with %q: %q has shape %q (%v), want %q", tmpl, v, got, have, err, want)
				}
			}
			if tmpl == `printf %s {{v}}` && !strings.HasPrefix(v, "~") {
				file, _ := syntax.NewParser().Parse(strings.NewReader(got), "")
				w := file.Stmts[0].Cmd.(*syntax.CallExpr).Args[2]
				if fs, err := expand.Fields(&expand.Config{}, w); err != nil || len(fs) != 1 || fs[0] != strings.TrimRight(v, "\n") {
					t.Fatalf("%q: the word is %q (%v), want %q", got, fs, err, v)
				}
			}
		}
	})
}
