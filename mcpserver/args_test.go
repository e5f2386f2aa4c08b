package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

func execSchema(t testing.TB) *tools.Schema {
	tl, ok := tools.Default(safety.DefaultPolicy()).Lookup(tools.ExecuteCommandName)
	if !ok {
		t.Fatal("no execute_command")
	}
	return tl.Schema()
}

func TestStepArgsBadInput(t *testing.T) {
	s := execSchema(t)
	for _, c := range []struct{ raw, want string }{
		{``, `missing required parameter "host"`},
		{`null`, `missing required parameter "host"`},
		{`[1,2]`, "must be a JSON object"},
		{`"host"`, "must be a JSON object"},
		{`{"host":"a"} {"host":"b"}`, "one JSON object"},
		{`{"host":`, "must be a JSON object"},
		{`{"host":""}`, `"host" must be a non-empty string`},
		{`{"host":"  "}`, `"host" must be a non-empty string`},
		{`{"host":null}`, `"host" must be a non-empty string, not null`},
		{`{"host":["a"]}`, "not an array"},
		{`{"host":"a","command":"x","save_output_as":"v"}`, `unknown parameter "save_output_as"`},
		{`{"host":"a","command":"x","zz":1,"aa":2}`, `unknown parameter "aa", "zz"; valid parameters: "command", "cwd", "timeout", "host"`},
		{`{"host":"a","command":"` + strings.Repeat("x", 300) + `"}`, "the limit is 256"},
		{`{"host":"a","command":"x","timeout":"3"}`, `"timeout" must be an integer, not a string`},
		{`{"host":"a","command":"x","timeout":1e12}`, `between 1 and 86400`},
		{`{"host":"a","command":"x","timeout":0}`, `between 1 and 86400`},
		{`{"host":"a","command":"x","timeout":-5}`, `between 1 and 86400`},
		{`{"host":"a","command":"x","timeout":2.5}`, `whole number`},
		{`{"host":"a","command":"x","timeout":1e30}`, `between 1 and 86400`},
		{`{"host":"a","command":"x","timeout":1e400}`, `whole number`},
		{`{"host":"a","command":"x","timeout":true}`, `must be an integer, not a boolean`},
		{`{"host":"a","command":"x","timeout":null}`, `must be an integer, not null`},
		{`{"host":"a","command":1}`, `"command" must be a string, not a number`},
	} {
		_, _, err := stepArgs(json.RawMessage(c.raw), 256, s)
		if !errors.Is(err, errArgs) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: %v, want %q", c.raw, err, c.want)
		}
	}
	host, params, err := stepArgs(json.RawMessage(` {"host":" web01 ","command":"ls","timeout":5} `), 1024, s)
	if err != nil || host != "web01" || params["command"] != "ls" || params["timeout"] != json.Number("5") || len(params) != 2 {
		t.Errorf("good arguments: %q %v %v", host, params, err)
	}
}

func TestDecodeOwnBadInput(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"plan":5,"hosts":"web"}`, "RunPlanParams.plan of type string"},
		{`{"plan":"x","hosts":"web","fork":3}`, `unknown field "fork"`},
		{`{"plan":"x","hosts":"web","forks":"3"}`, "forks of type int"},
		{`[]`, "must be a JSON object"},
	} {
		var p RunPlanParams
		if err := decodeOwn(json.RawMessage(c.raw), 1024, &p); !errors.Is(err, errArgs) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.raw, err, c.want)
		}
	}
}

// FuzzStepArgs: any bytes as a call's arguments give a clear error or a
// host and parameters of the tool's own that its decoding accepts or
// refuses with an error — never a panic.
func FuzzStepArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"host":"h","command":"ls"}`, `{"host":"h","command":"ls","timeout":"5"}`,
		`{"host":"h","command":["a"],"cwd":{"x":1}}`, `{"host":1e400}`, `{"host":"h","timeout":-1,"command":"x"}`, "{\"host\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	reg := tools.Default(safety.DefaultPolicy())
	s := execSchema(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		host, params, err := stepArgs(raw, 4096, s)
		if err != nil {
			if !errors.Is(err, errArgs) || err.Error() == "" {
				t.Fatalf("error %v does not wrap errArgs", err)
			}
			return
		}
		if strings.TrimSpace(host) == "" || host != strings.TrimSpace(host) {
			t.Fatalf("host %q", host)
		}
		for k := range params {
			if _, ok := s.Properties[k]; !ok {
				t.Fatalf("parameter %q passed through", k)
			}
		}
		if _, err := reg.Prepare(tools.ExecuteCommandName, params); err != nil && !errors.Is(err, tools.ErrInvalidParams) {
			t.Fatalf("Prepare: %v", err)
		}
	})
}

func TestStepArgsTimeoutInRange(t *testing.T) {
	for _, raw := range []string{`{"host":"a","command":"x","timeout":1}`, `{"host":"a","command":"x","timeout":86400}`, `{"host":"a","command":"x","timeout":3.0}`} {
		if _, _, err := stepArgs(json.RawMessage(raw), 1<<10, execSchema(t)); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestSSHDest(t *testing.T) {
	for in, want := range map[string]string{
		"web":                     "web",
		"u@web":                   "u@web",
		"web:2222":                "ssh://web:2222",
		"u@web:2222":              "ssh://u@web:2222",
		"u@10.0.0.1:22":           "ssh://u@10.0.0.1:22",
		"ssh://u@web:2222":        "ssh://u@web:2222",
		"::1":                     "::1",
		"[::1]:2222":              "ssh://[::1]:2222",
		"u@[fe80::1]:22":          "ssh://u@[fe80::1]:22",
		"u@web:":                  "u@web:",
		"u@:22":                   "u@:22",
		"deploy@host.example.com": "deploy@host.example.com",
	} {
		if got := sshDest(in); got != want {
			t.Errorf("sshDest(%q) = %q, want %q", in, got, want)
		}
	}
}
