package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

func TestSchemasValid(t *testing.T) {
	reg := Default(safety.DefaultPolicy())
	fns := reg.Schemas()
	want := []string{"check_condition", "container_inspect", "container_list", "container_logs", "container_restart",
		"container_start", "container_stop", "download_file", "edit_file", "execute_command", "find", "grep", "lsof", "ps",
		"read_file", "semantic_search", "session_files", "ss", "sys_monitor", "upload_file", "wget", "write_file"}
	if len(fns) != len(want) {
		t.Fatalf("%d tools, want %d", len(fns), len(want))
	}
	for i, f := range fns {
		if f.Name != want[i] || f.Description == "" {
			t.Errorf("tool %d: %q", i, f.Name)
		}
		b, err := json.Marshal(f.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		props, _ := m["properties"].(map[string]any)
		req, ok := m["required"].([]any)
		if m["type"] != "object" || props == nil || !ok {
			t.Fatalf("%s: bad schema %s", f.Name, b)
		}
		if _, ok := m["additionalProperties"]; ok {
			t.Errorf("%s: additionalProperties set", f.Name)
		}
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				t.Errorf("%s: required %v not in properties", f.Name, r)
			}
		}
		for name, p := range props {
			pm := p.(map[string]any)
			switch pm["type"] {
			case "string", "integer", "boolean", "number", "object":
			case "array":
				if pm["items"] == nil {
					t.Errorf("%s.%s: array without items", f.Name, name)
				}
			default:
				t.Errorf("%s.%s: type %v", f.Name, name, pm["type"])
			}
			if pm["description"] == "" || pm["description"] == nil {
				t.Errorf("%s.%s: no description", f.Name, name)
			}
		}
		for _, k := range []string{"description", "save_output_as", "condition"} {
			if _, ok := props[k]; !ok {
				t.Errorf("%s: step key %s missing", f.Name, k)
			}
		}
	}
	// The first product spec's parameter names.
	spec := map[string]string{"find": "name,path,type,maxdepth", "grep": "pattern,file,recursive,ignore_case,count_only",
		"wget": "url,output_file", "ps": "user,name,pid,options", "ss": "options,port,protocol", "lsof": "path,port,user,options"}
	for tool, names := range spec {
		tl, _ := reg.Lookup(tool)
		for _, n := range strings.Split(names, ",") {
			if tl.Schema().Properties[n] == nil {
				t.Errorf("%s lacks %s", tool, n)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	reg := Default(safety.DefaultPolicy())
	cases := []struct {
		tool   string
		params map[string]any
		errSub string
	}{
		{"execute_command", map[string]any{"command": "ls", "timeout": "30", "description": "d", "save_output_as": "x"}, ""},
		{"execute_command", map[string]any{"command": "ls", "timeout": 1.5}, "want an integer"},
		{"execute_command", map[string]any{}, `missing required parameter "command"`},
		{"execute_command", map[string]any{"command": 3}, ""}, // coerced to "3"
		{"nope", map[string]any{}, "unknown tool"},
		{"edit_file", map[string]any{"file_path": "a", "search_pattern": "x", "replacement": "y", "regex": "yes"}, "want a boolean"},
		{"grep", map[string]any{"pattern": "x", "file": "f", "ignore_case": "true"}, ""},
		{"find", map[string]any{"name": "x", "type": "l"}, `must be one of "f", "d"`},
		{"ps", map[string]any{"pid": "1; rm"}, "must be a number"},
		{"ss", map[string]any{"options": []any{"state"}}, "must start with -"},
		{"ss", map[string]any{"options": []any{"-tK"}}, "not allowed"},
		{"ss", map[string]any{"port": 70000}, "not between"},
		{"wget", map[string]any{"url": "file:///etc/passwd"}, "only http"},
		{"lsof", map[string]any{}, "give path, port, user or options"},
		{"check_condition", map[string]any{"condition": "x == 1", "context": map[string]any{"x": 1}}, ""},
		{"read_file", map[string]any{"file_path": "x", "extra": 1}, `unknown parameter "extra"`},
		{"sys_monitor", map[string]any{"metric": "gpu"}, "must be one of"},
	}
	for _, c := range cases {
		err := reg.Validate(c.tool, c.params)
		if c.errSub == "" {
			if err != nil {
				t.Errorf("%s %v: %v", c.tool, c.params, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errSub) {
			t.Errorf("%s %v: got %v, want %q", c.tool, c.params, err, c.errSub)
		}
		if c.tool != "nope" && !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%s: %v does not wrap ErrInvalidParams", c.tool, err)
		}
	}
}

func TestObserve(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	cases := []struct {
		stdout, stderr string
		code           int
		want           string
	}{
		{"", "", 0, ""},
		{"1\n", "", 0, "1\n"},
		{"out", "", 0, "out"},
		{"", "boom\n", 0, "[ERROR]: boom\n"},
		{"out\n", "err", 0, "[ERROR]: err\nout\n"},
		{"", "", 2, "[exit code 2]"},
		{"out", "err\n", 1, "[ERROR]: err\nout\n[exit code 1]"},
		{"", "e", 127, "[ERROR]: e\n[exit code 127]"},
	}
	for _, c := range cases {
		if got := Observe(c.stdout, c.stderr, c.code); got != c.want {
			t.Errorf("Observe(%q, %q, %d) = %q, want %q", c.stdout, c.stderr, c.code, got, c.want)
		}
	}
	got := Observe(big, "", 0)
	if len(got) > 70<<10 || !strings.Contains(got, "... [output truncated: ") {
		t.Errorf("big output not bounded: %d bytes", len(got))
	}
	if got := ErrorOutput("file_path is required"); got.Observation != "[ERROR]: file_path is required" || !got.IsError {
		t.Errorf("%+v", got)
	}
}

func TestCheckCondition(t *testing.T) {
	tool := NewCheckCondition(func(c string) (bool, error) {
		if c == "bad(" {
			return false, errors.New("syntax error")
		}
		return c == "x == 1", nil
	})
	for cond, want := range map[string]string{"x == 1": "true", "x == 2": "false", "bad(": "[ERROR]: check_condition: syntax error"} {
		out, err := tool.Run(t.Context(), nil, raw(t, map[string]any{"condition": cond}))
		if err != nil || out.Observation != want {
			t.Errorf("%q: %+v %v", cond, out, err)
		}
		if want == "true" && out.Value != true {
			t.Errorf("value %v", out.Value)
		}
	}
	out, _ := NewCheckCondition(nil).Run(t.Context(), nil, raw(t, map[string]any{"condition": "x"}))
	if !out.IsError || !strings.Contains(out.Observation, "runner") {
		t.Errorf("%+v", out)
	}
}
