package execctx

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func condVars() map[string]any {
	return map[string]any{
		"script_output":    "1\n",
		"condition_result": true,
		"new_output":       "2\n",
		"log":              "INFO start\nERROR disk full\nINFO done\n",
		"config":           `{"debug": false}`,
		"n":                3,
		"f":                1.5,
		"s":                "abc",
		"empty":            "",
		"none":             nil,
		"items":            []any{"a", "b", 2},
		"d":                map[string]any{"k": "v", "n": 1},
		"last":             map[string]any{"stdout": "x\n", "stderr": "", "exit_code": 0, "success": true},
		"failed":           map[string]any{"stdout": "", "stderr": "boom", "exit_code": 2, "success": false},
		"flag":             false,
		"unicode":          "héllo wörld",
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		cond string
		want bool
	}{
		// The adaptive-execution spec's examples, as written.
		{"script_output.strip() == '1'", true},
		{"condition_result == True", true},
		{"new_output.strip() == '2'", true},
		{"new_output.strip() == '1'", false},
		// Python literals and operators.
		{"True", true},
		{"False", false},
		{"not False", true},
		{"none == None", true},
		{"none is None", true},
		{"s is not None", true},
		{"not s is None", true},
		{"flag == False and not flag", true},
		{"'b' in s", true},
		{"'z' not in s", true},
		{"not 'z' in s", true},
		{"'ERROR' in log", true},
		{"'ERROR' in log and 'FATAL' not in log", true},
		{"'a' in items", true},
		{"2 in items", true},
		{"'k' in d", true},
		{"'v' in d", false},
		{"len(s) == 3", true},
		{"len(items) == 3 and len(d) == 2", true},
		{"len(unicode) == 11", true},
		{"int(script_output) == 1", true},
		{"int(' 42 ') + 1 == 43", true},
		{"float('2.5') * 2 == 5", true},
		{"str(n) == '3'", true},
		{"str(True) == 'True'", true},
		{"str(f) == '1.5'", true},
		{"bool(s) and not bool(empty)", true},
		{"n > 2 and n <= 3", true},
		{"1 < n < 5", true},
		{"1 < n < 2", false},
		{"0 < n < 4 < 5 and 1 == 1 == True", true},
		{"n < (n < (n < (n < (n + 1) < 1) < 1) < 1) < 1", false},
		{"n == 3 == 3", true},
		{"(n == 3) == True", true},
		{"not n == 4", true},
		{"(not condition_result) == False", true},
		{"s.upper() == 'ABC' and s.upper().lower() == s", true},
		{"s.startswith('ab') and s.endswith('bc')", true},
		{"s.startswith(['x', 'a'])", true},
		{"s.contains('bc')", true},
		{"log.count('INFO') == 2", true},
		{"log.find('ERROR') == 11", true},
		{"len(log.splitlines()) == 3", true},
		{"log.split('\\n')[1] == 'ERROR disk full'", true},
		{"'a b  c'.split() == ['a', 'b', 'c']", true},
		{"'a b  c'.split(None, 1) == ['a', 'b  c']", true},
		{"'x'.join(['a', 'b']) == 'axb'", true},
		{"s.replace('b', 'B') == 'aBc'", true},
		{"'  pad '.lstrip() == 'pad '", true},
		{"'xxhixx'.strip('x') == 'hi'", true},
		{"'123'.isdigit() and not '12a'.isdigit()", true},
		{"s[0] == 'a' and s[-1] == 'c' and s[1:] == 'bc' and s[:-1] == 'ab'", true},
		{"unicode[1] == 'é'", true},
		{"items[-1] == 2", true},
		{"d.k == 'v' and d['n'] == 1", true},
		{"d.get('missing') is None and d.get('missing', 5) == 5", true},
		{"d.keys() == ['k', 'n']", true},
		{"last.exit_code == 0 and last.success", true},
		{"last.stdout.strip() == 'x'", true},
		{"failed.exit_code != 0 and not failed.success", true},
		{"'debug' in config and '\"debug\": false' in config", true},
		// Python's ==: no conversion between strings and numbers.
		{"'1' == 1", false},
		{"'1' != 1", true},
		{"1 == 1.0", true},
		{"True == 1", true},
		{"[1, 'a'] == [1, 'a']", true},
		{"{'a': 1} == {'a': 1}", true},
		// Python arithmetic.
		{"7 / 2 == 3.5", true},
		{"-7 % 3 == 2", true},
		{"2 ** 10 == 1024", true},
		{"abs(-3) == 3 and min(3, 1, 2) == 1 and max([1, 5]) == 5", true},
		{"sum([1, 2, 3]) == 6", true},
		{"any([False, s]) and not all([s, empty])", true},
		// Operands of and/or/not use Python truthiness.
		{"empty and 'E' in empty", false},
		{"not empty", true},
		{"s and n", true},
		// String literals stay literal: nothing inside them is rewritten.
		{"'True' == 'True'", true},
		{"'x is None' == 'x is None'", true},
		{"'a and b' != 'a or b'", true},
		{"\"s.strip()\" == 's.strip()'", true},
		{"'not in' in 'is not in here'", true},
		{"'// not a comment' != ''", true},
		{"'# hash' == \"# hash\"", true},
		{"'{{x}}' == '{' + '{x}}'", true},
		{"'it\\'s' == \"it's\"", true},
		// Multi-line conditions.
		{"s == 'abc'\n and n == 3", true},
	}
	vars := condVars()
	for _, tt := range tests {
		got, err := Evaluate(tt.cond, vars)
		if err != nil {
			t.Errorf("Evaluate(%q): %v", tt.cond, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Evaluate(%q) = %v, want %v", tt.cond, got, tt.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	tests := []struct {
		cond string
		is   error  // errors.Is target besides ErrCondition, or nil
		sub  string // in the message
	}{
		{"undefined == 1", ErrUnknownVariable, `unknown variable "undefined"`},
		{"undefined_is_checked_even_if_unreached or True", ErrUnknownVariable, "undefined_is_checked"},
		{"d.missing == 1", ErrUnknownVariable, "'missing'"},
		{"d['missing'] == 1", ErrUnknownVariable, "'missing'"},
		{"int('abc') == 1", nil, "invalid literal for int() with base 10: 'abc'"},
		{"int('1.5') == 1", nil, "invalid literal for int()"},
		{"float('x') > 1", nil, "could not convert string to float"},
		{"s", nil, "evaluates to str 'abc', not True or False"},
		{"n + 1", nil, "evaluates to int 4"},
		{"none", nil, "evaluates to NoneType None"},
		{"s.strip()", nil, "evaluates to str"},
		{"", nil, "empty condition"},
		{"   ", nil, "empty condition"},
		{"s ==", nil, "unexpected"},
		{"s == 'abc", nil, "literal not terminated"},
		{"(s == 'abc'", nil, ""},
		{"s.nosuch()", nil, "unknown method .nosuch()"},
		{"nosuch(s)", nil, "unknown function nosuch()"},
		{"n.strip() == '3'", nil, "'int' object has no attribute 'strip'"},
		{"s < 1", nil, "'<' not supported between instances of 'str' and 'int'"},
		{"1 in s", nil, "requires string as left operand"},
		{"'a' in n", nil, "argument of type 'int' is not iterable"},
		{"len(n) == 1", nil, "object of type 'int' has no len()"},
		{"len(s, s) == 1", nil, "len() takes 1 argument(s) (2 given)"},
		{"items[9] == 1", nil, "list index out of range"},
		{"1 / 0 == 1", nil, "division by zero"},
		{"n // 2 == 1", nil, "// is not supported"},
		{"n == 3 /* c */", nil, "/* is not supported"},
		{"n == 3 # comment", nil, "# comments are not supported"},
		{"n | 1 == 3", nil, "| is not supported"},
		{"n ^ 2 == 9", nil, "^ is not supported"},
		{"1..3 == 1", nil, ".. is not supported"},
		{"let x = 1; x == 1", nil, "let is not supported"},
		{"n == 3; n == 4", nil, "; is not supported"},
		{"filter(items, # == 'a')", nil, "not supported"},
		{"map(items, 1) == 1", nil, "not supported"},
		{"__cmp('==', 1, 1)", nil, "names starting with __ are reserved"},
		{"$env == 1", nil, "not a variable name"},
		{"d?.k == 'v'", nil, "?. is not supported"},
		{"s.strip == 1", nil, "no attribute 'strip'"},
		{"x if n else y", nil, ""},
		{"'x' * 1000000000 == ''", nil, ""},
		{strings.Repeat("s.replace('', ", 12) + "s" + strings.Repeat(")", 12) + " == ''", nil, "replace(): result longer than"},
		{strings.Repeat("(", 3000) + "1" + strings.Repeat(")", 3000), nil, ""},
		{strings.Repeat("n+", 1200) + "n == 1", nil, "maximum allowed nodes"},
		{strings.Repeat("x", MaxConditionLength+1), nil, "longer than"},
		{"\xff == 1", nil, "UTF-8"},
		// Nested chains would take exponential time (found by FuzzEval).
		{strings.Repeat("n < (", 30) + "n" + strings.Repeat(") < n", 30), nil, "more than 4 chained comparisons"},
		{"a == b == c == d == e == f == g", nil, "chained comparisons"},
	}
	vars := condVars()
	for _, tt := range tests {
		got, err := Evaluate(tt.cond, vars)
		if err == nil {
			t.Errorf("Evaluate(%.60q) = %v, want an error", tt.cond, got)
			continue
		}
		if got {
			t.Errorf("Evaluate(%.60q) returned true with an error", tt.cond)
		}
		if !errors.Is(err, ErrCondition) {
			t.Errorf("Evaluate(%.60q): %v does not wrap ErrCondition", tt.cond, err)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("Evaluate(%.60q): %v does not wrap %v", tt.cond, err, tt.is)
		}
		if !strings.Contains(err.Error(), tt.sub) {
			t.Errorf("Evaluate(%.60q): %v, want it to contain %q", tt.cond, err, tt.sub)
		}
		if len(tt.cond) < 200 && !strings.Contains(err.Error(), tt.cond) && !strings.Contains(err.Error(), `\`) {
			t.Errorf("Evaluate(%.60q): %v does not quote the condition", tt.cond, err)
		}
	}
}

func TestConditionVars(t *testing.T) {
	tests := []struct {
		cond string
		want []string
	}{
		{"script_output.strip() == '1'", []string{"script_output"}},
		{"condition_result == True", []string{"condition_result"}},
		{"last.stdout == x and len(y) > 0 and x != z", []string{"last", "x", "y", "z"}},
		{"'a and b' == 'c' and d[k] == 1", []string{"d", "k"}},
		{"len(s) > 0 and s.strip().startswith('a')", []string{"s"}},
		{"True or None is None", nil},
		{"1 < a < b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		got, err := ConditionVars(tt.cond)
		if err != nil {
			t.Errorf("ConditionVars(%q): %v", tt.cond, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ConditionVars(%q) = %q, want %q", tt.cond, got, tt.want)
		}
	}
	if _, err := ConditionVars("a =="); err == nil {
		t.Error("ConditionVars of a bad condition: no error")
	}
}

func TestCheckCondition(t *testing.T) {
	for _, ok := range []string{"script_output.strip() == '1'", "x is None", "not_set_yet == 1"} {
		if err := CheckCondition(ok); err != nil {
			t.Errorf("CheckCondition(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"x ==", "x.nope()", "a // b", "f(x)"} {
		err := CheckCondition(bad)
		var ce *ConditionError
		if !errors.As(err, &ce) || ce.Condition != bad {
			t.Errorf("CheckCondition(%q) = %v, want a ConditionError naming it", bad, err)
		}
	}
}

func TestEvaluateDoesNotMutate(t *testing.T) {
	vars := condVars()
	before := jsonText(vars)
	for _, c := range []string{"items[0:2] == ['a', 'b']", "d.keys() == ['k', 'n']", "s.split('b') == ['a', 'c']"} {
		if _, err := Evaluate(c, vars); err != nil {
			t.Fatal(err)
		}
	}
	if after := jsonText(vars); after != before {
		t.Errorf("vars changed:\n%s\n%s", before, after)
	}
}

// TestSpecScenarios runs conditions an LLM would write for the three
// scenarios of the adaptive-execution spec, over the variables their steps
// save.
func TestSpecScenarios(t *testing.T) {
	vars := map[string]any{
		// 1: run ~/test/a.sh; if it prints 1, make it print 2.
		"script_output": "1\n", "condition_result": true, "new_output": "2\n",
		// 2: errors in /var/log/app.log go to errors.txt.
		"log_content": "2024-01-01 INFO up\n2024-01-01 ERROR disk full\n",
		"error_lines": "2024-01-01 ERROR disk full\n", "error_count": "1\n",
		// 3: in config.json, flip debug from false to true, restart.
		"config_content": "{\n  \"debug\": false,\n  \"port\": 8080\n}\n", "debug_value": "false\n",
	}
	for _, cond := range []string{
		"script_output.strip() == '1'",
		"condition_result == True",
		"new_output.strip() == '2'",
		"'ERROR' in log_content",
		"len(error_lines.strip()) > 0",
		"int(error_count) > 0",
		"error_count.strip() != '0'",
		"len(log_content.splitlines()) == 2 and log_content.count('ERROR') == 1",
		"json.loads(config_content)['debug'] == False",
		"json.loads(config_content).get('debug') is False and json.loads(config_content).port == 8080",
		"'\"debug\": false' in config_content",
		"debug_value.strip().lower() == 'false'",
	} {
		if got, err := Evaluate(cond, vars); err != nil || !got {
			t.Errorf("Evaluate(%q) = %v, %v; want true", cond, got, err)
		}
	}
	if _, err := Evaluate("json.loads(script_output + '{') == 1", vars); err == nil || !strings.Contains(err.Error(), "json.loads()") {
		t.Errorf("json.loads of bad JSON: %v", err)
	}
}
