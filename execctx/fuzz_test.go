package execctx

import (
	"errors"
	"strings"
	"testing"
)

var fuzzConditionSeeds = []string{
	"script_output.strip() == '1'", "condition_result == True", "new_output.strip() == '2'",
	"not s == 'abc'", "'b' not in s", "s is not None", "1 < n < 5 == 5", "last.stdout.split()[0:2] == ['x']",
	"int(s) + 1", "'True and .strip()' == 'x'", "d.get('k', None) is None or len(items) > 2",
	"(not (a == b)) == c", "x[::2]", "f(", "'\\u00e9' == unicode[1]", "2 ** 100 > 1", "-9 % 0",
	"s.replace('', s) == s", "json.loads(config).debug == False", "float('nan') != float('nan')", "[1, [2, {'a': None}]] == [1, [2, {'a': None}]]",
}

func FuzzEval(f *testing.F) {
	for _, s := range fuzzConditionSeeds {
		f.Add(s)
	}
	vars := condVars()
	vars["a"], vars["b"], vars["c"] = true, false, true
	f.Fuzz(func(t *testing.T, cond string) {
		got, err := Evaluate(cond, vars)
		again, err2 := Evaluate(cond, vars)
		if got != again || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v %v / %v %v", got, err, again, err2)
		}
		fresh := compileUncached(cond)
		cached := compileCondition(cond)
		if (fresh.err == nil) != (cached.err == nil) || fresh.err != nil && fresh.err.Error() != cached.err.Error() {
			t.Fatalf("compile not deterministic: %v / %v", fresh.err, cached.err)
		}
		if err != nil {
			if got {
				t.Fatal("true with an error")
			}
			if !errors.Is(err, ErrCondition) {
				t.Fatalf("error does not wrap ErrCondition: %v", err)
			}
			return
		}
		names, verr := ConditionVars(cond)
		if verr != nil {
			t.Fatalf("evaluated but ConditionVars failed: %v", verr)
		}
		for _, n := range names {
			if _, ok := vars[n]; !ok {
				t.Fatalf("evaluated with unknown variable %q", n)
			}
		}
	})
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"{{x}}", "{{ last.stdout }}", "{{", "{{}}", "{{{x}}}", "}}{{", "{{ m.a.b }}", "{{.Names}}", "{{ x.strip() }}",
		"日本 {{ uni }}", "{{a {{x}}", "{{ m.s.c }}", "{{end}}", "{{ missing }}", "{{x}}}}{{{{",
	} {
		f.Add(s)
	}
	c := New()
	for name, v := range map[string]any{"x": "X{{x}}", "uni": "日本", "m": map[string]any{"a": map[string]any{"b": "{{"}, "s": "s"}} {
		if err := c.Set(name, v); err != nil {
			f.Fatal(err)
		}
	}
	_ = c.Record(StepRecord{Status: StatusOK, Stdout: "out"})
	f.Fuzz(func(t *testing.T, s string) {
		got, err := c.Render(s)
		again, err2 := c.Render(s)
		if got != again || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %q %v / %q %v", got, err, again, err2)
		}
		names, verr := TemplateVars(s)
		if err != nil {
			if !errors.Is(err, ErrTemplate) && !errors.Is(err, ErrUnknownVariable) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if got != "" {
				t.Fatal("output with an error")
			}
			return
		}
		if verr != nil {
			t.Fatalf("rendered but TemplateVars failed: %v", verr)
		}
		for _, n := range names {
			if _, ok := c.Get(n); !ok {
				t.Fatalf("rendered with unknown variable %q", n)
			}
		}
		if !strings.Contains(s, "{{") && got != s {
			t.Fatalf("text without {{ changed: %q -> %q", s, got)
		}
		if len(names) == 0 && got != s {
			t.Fatalf("text without references changed: %q -> %q", s, got)
		}
		p, perr := c.ResolveParams(map[string]any{"k": s, "l": []any{s}})
		if perr != nil || p["k"] != got || p["l"].([]any)[0] != got {
			t.Fatalf("ResolveParams disagrees: %v %v", p, perr)
		}
	})
}
