package execctx

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func templateContext(t *testing.T) *Context {
	t.Helper()
	c := New()
	for name, v := range map[string]any{
		"x":      "X",
		"script": "~/test/a.sh",
		"out":    "1\n",
		"ok":     true,
		"n":      42,
		"f":      2.5,
		"none":   nil,
		"list":   []any{"a", 1},
		"m":      map[string]any{"a": map[string]any{"b": "deep"}, "s": "str"},
		"uni":    "日本語 ✓",
	} {
		if err := c.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Record(StepRecord{Tool: "execute_command", Status: StatusOK, Stdout: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRender(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"no braces", "no braces"},
		{"{{x}}", "X"},
		{"{{ x }}", "X"},
		{"{{\tx\n}}", "X"},
		{"bash {{script}}", "bash ~/test/a.sh"},
		{"{{x}}{{x}}-{{ x }}", "XX-X"},
		{"echo {{out}}", "echo 1\n"},
		{"{{ last.stdout }}", "hello\n"},
		{"{{last.exit_code}} {{last.success}} {{ last.stderr }}.", "0 true ."},
		{"{{ok}} {{n}} {{f}}", "true 42 2.5"},
		{"[{{none}}]", "[]"},
		{"{{list}}", `["a",1]`},
		{"{{ m.a.b }}", "deep"},
		{"{{m.a}}", `{"b":"deep"}`},
		{"{{uni}}!", "日本語 ✓!"},
		{"日本 {{ x }} 語", "日本 X 語"},
		{"{{{x}}}", "{X}"},
		{"{ {x} }", "{ {x} }"},
		{"}}{{x}}", "}}X"},
		{"{{}}", "{{}}"},
		{"{{ }}", "{{ }}"},
		{"docker ps --format '{{.Names}}'", "docker ps --format '{{.Names}}'"},
		{"docker inspect -f '{{json .Config}}' {{x}}", "docker inspect -f '{{json .Config}}' X"},
		{"{{range .Items}}{{.Name}}{{end}}", "{{range .Items}}{{.Name}}{{end}}"},
		{"awk '{{print $1}}'", "awk '{{print $1}}'"},
		{"{{ 1x }}", "{{ 1x }}"},
		{"{{a {{x}}", "{{a X"},
		{"{{x}}}}", "X}}"},
	}
	c := templateContext(t)
	for _, tt := range tests {
		got, err := c.Render(tt.in)
		if err != nil {
			t.Errorf("Render(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		in  string
		is  error
		sub string
	}{
		{"{{missing}}", ErrUnknownVariable, `unknown variable "missing"`},
		{"echo {{ missing }} done", ErrUnknownVariable, `"missing"`},
		{"{{x}} {{y}}", ErrUnknownVariable, `"y"`},
		{"{{ m.a.c }}", ErrUnknownVariable, `m.a has no key "c"`},
		{"{{ m.nope.c }}", ErrUnknownVariable, `m has no key "nope"`},
		{"{{ m.s.c }}", ErrUnknownVariable, "m.s is a str, not a dict"},
		{"{{ x.y }}", ErrUnknownVariable, "x is a str"},
		{"{{ last.nope }}", ErrUnknownVariable, "last has no key"},
		{"{{", ErrTemplate, "unterminated {{"},
		{"echo {{x", ErrTemplate, "unterminated {{ at byte 5"},
		{"{{x}} and {{ y", ErrTemplate, "unterminated"},
		{"{{ last['stdout'] }}", ErrTemplate, "only names and dotted paths"},
		{"{{ x.strip() }}", ErrTemplate, "{{ x.key }}"},
		{"{{ x | upper }}", ErrTemplate, "only names"},
	}
	c := templateContext(t)
	for _, tt := range tests {
		got, err := c.Render(tt.in)
		if err == nil {
			t.Errorf("Render(%q) = %q, want an error", tt.in, got)
			continue
		}
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.sub) {
			t.Errorf("Render(%q): %v, want %v containing %q", tt.in, err, tt.is, tt.sub)
		}
	}
}

func TestTemplateVars(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"plain", nil},
		{"{{a}} {{ b.c }} {{a}} {{ last.stdout }}", []string{"a", "b", "last"}},
		{"{{.Names}} {{end}} {{}} {{x y}}", nil},
		{"{{{z}}}", []string{"z"}},
	}
	for _, tt := range tests {
		got, err := TemplateVars(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("TemplateVars(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := TemplateVars("{{ open"); !errors.Is(err, ErrTemplate) {
		t.Errorf("TemplateVars(unterminated) = %v", err)
	}
}

func TestResolveParams(t *testing.T) {
	c := templateContext(t)
	in := map[string]any{
		"command": "cat {{script}}",
		"timeout": 30,
		"regex":   false,
		"env":     map[string]any{"A": "{{x}}", "B": []any{"{{n}}", 7, map[string]any{"deep": "{{ last.stdout }}"}}},
		"args":    []string{"{{x}}", "lit"},
		"none":    nil,
	}
	orig := jsonText(in)
	got, err := c.ResolveParams(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"command": "cat ~/test/a.sh",
		"timeout": 30,
		"regex":   false,
		"env":     map[string]any{"A": "X", "B": []any{"42", 7, map[string]any{"deep": "hello\n"}}},
		"args":    []string{"X", "lit"},
		"none":    nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ResolveParams = %#v\nwant %#v", got, want)
	}
	if jsonText(in) != orig {
		t.Errorf("ResolveParams mutated its input: %s", jsonText(in))
	}
	got["env"].(map[string]any)["A"] = "changed"
	if in["env"].(map[string]any)["A"] != "{{x}}" {
		t.Error("result shares a map with the input")
	}

	_, err = c.ResolveParams(map[string]any{"a": "ok", "env": map[string]any{"list": []any{"x", "{{nope}}"}}})
	if !errors.Is(err, ErrUnknownVariable) || !strings.Contains(err.Error(), "parameter env.list[1]") {
		t.Errorf("ResolveParams error = %v, want it to name env.list[1]", err)
	}
	if m, err := c.ResolveParams(nil); err != nil || m == nil || len(m) != 0 {
		t.Errorf("ResolveParams(nil) = %v, %v", m, err)
	}

	vars, err := ParamVars(in)
	if err != nil || !slices.Equal(vars, []string{"x", "script", "n", "last"}) {
		t.Errorf("ParamVars = %q, %v", vars, err)
	}
}
