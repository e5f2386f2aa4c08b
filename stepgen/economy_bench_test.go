package stepgen

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
)

// The economy measures of bench/llmbench (issue 4) rest on these
// behaviours of the adaptive loop; the figures themselves are benchmarks.

// A phase's step requests offer the core tools and list the others by
// name; ReAct offers every tool.
func TestAdaptiveOffersCoreTools(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(scriptFix(f)...)
	f.write("a.sh", "#!/bin/sh\necho 1\n")
	if _, err := f.run(ModeAdaptive, 0, "run a.sh; if it prints 1, change it to print 2", 0); err != nil {
		t.Fatal(err)
	}
	core := slices.Sorted(slices.Values(CoreTools))
	for i, r := range f.srv.Requests()[1:] {
		if got := stepTools(t, r); !slices.Equal(got, core) {
			t.Errorf("step request %d offers %v, want %v", i+1, got, core)
		}
		sys := r.Request.Messages[0].Text()
		if !strings.Contains(sys, "Other tools (described when offered): ") || !strings.Contains(sys, "sys_monitor") {
			t.Errorf("step request %d does not list the other tools:\n%s", i+1, sys)
		}
	}

	g := newFixture(t, testenv.Calls(testenv.Call("execute_command", `{"command":"true"}`)), testenv.Text("done"))
	if _, err := g.run(ModeReAct, 0, "t", 0); err != nil {
		t.Fatal(err)
	}
	if got := g.srv.Requests()[0].Request.ToolNames(); len(got) != allTools() {
		t.Errorf("react offers %v, want all %d tools", got, allTools())
	}
}

// Words of the task bring the tools they call for, to every request of
// the task; a phase's words bring none (a request offering more tools
// than the one before shares no cached prefix with it).
func TestAdaptiveHintedTools(t *testing.T) {
	for _, tc := range []struct {
		task, goal string
		want, not  []string
	}{
		{"how full is the disk?", "report disk usage", []string{"sys_monitor"}, []string{"ps", "find"}},
		{"which process listens on port 8080", "find the listener", []string{"ps", "ss", "lsof"}, []string{"sys_monitor", "find"}},
		{"download https://example.com/x.tgz", "fetch it", []string{"wget", "download_file"}, []string{"grep"}},
		{"find the ERROR lines in app.log", "find them", nil, []string{"find", "grep", "ps", "ss"}},
		{"locate nginx.conf and search it for listen", "g", []string{"find", "grep", "ss"}, nil},
		{"steps to success", "g", nil, []string{"ps", "ss"}}, // tool names inside words are no hints
		{"查看8080端口被哪个进程占用", "检查磁盘使用率", []string{"ss", "lsof", "ps"}, []string{"wget", "sys_monitor"}},
		{"check the service", "report disk usage and load", nil, []string{"sys_monitor"}},
		{"执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2", "执行脚本", nil, []string{"find", "grep", "ps", "ss", "lsof", "sys_monitor", "wget", "upload_file", "download_file"}},
	} {
		f := newFixture(t,
			testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"`+tc.goal+`"}]}`)),
			testenv.Text("nothing to do"))
		if _, err := f.run(ModeAdaptive, 0, tc.task, 0); err != nil {
			t.Fatal(err)
		}
		got := f.srv.Requests()[1].Request.ToolNames()
		if plan := f.srv.Requests()[0].Request.ToolNames(); !slices.Equal(got, plan) {
			t.Errorf("%q: the step request offers %v, the planning request %v", tc.task, got, plan)
		}
		for _, w := range append(tc.want, CoreTools...) {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %s not offered (%v)", tc.task, w, got)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: %s offered (%v)", tc.task, w, got)
			}
		}
	}
}

// A registered tool the task did not offer runs when the model calls it,
// and is offered from then on; a tool that does not exist is
// still refused (naming every tool there is), and so is a fourth call.
func TestAdaptiveUnofferedToolRuns(t *testing.T) {
	f := newFixture(t)
	f.write("app.log", "INFO a\nERROR b\n")
	f.srv.Push(
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"show the bad lines"}]}`)),
		testenv.Calls(
			testenv.Call("grep", f.q(`{"pattern":"ERROR","file":"DIR/app.log"}`)),
			testenv.Call("run_shell", `{"command":"true"}`),
			testenv.Call("execute_command", `{"command":"true"}`),
			testenv.Call("ps", `{}`)),
		testenv.Text("ERROR b"))
	res, err := f.run(ModeAdaptive, 0, "show the bad lines of app.log", 0)
	if err != nil || res.Steps != 2 {
		t.Fatalf("Run: %v, %+v", err, res.Summary)
	}
	got := f.toolReplies(2)
	if len(got) != 4 || got[0] != "ERROR b\n" || !strings.Contains(got[1], `no tool named "run_shell"`) ||
		!strings.Contains(got[1], "sys_monitor") || got[2] != "(empty)" || !strings.Contains(got[3], "At most 3") {
		t.Errorf("tool replies %q", got)
	}
	reqs := f.srv.Requests()
	if n := len(stepTools(t, reqs[1])); n != len(CoreTools) {
		t.Errorf("first step request offers %d tools", n)
	}
	// from then on grep is offered beside the task's tools, and no other
	// tool: ps was refused (a fourth call), run_shell does not exist
	if got, want := stepTools(t, reqs[2]), append(slices.Sorted(slices.Values(CoreTools)), "grep"); !slices.Equal(got, want) {
		t.Errorf("after grep, %v offered, want %v", got, want)
	}
}

// Within a phase, the last round's outputs are sent once: in the tool
// replies, not again in the history of the system prompt. The next phase
// sees them in its history.
func TestAdaptiveOutputSentOnce(t *testing.T) {
	f := newFixture(t,
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"a"},{"phase":2,"goal":"b"}]}`)),
		testenv.Calls(testenv.Call("execute_command", `{"command":"echo marker-7f3a","save_output_as":"m"}`)),
		testenv.Text("a done"),
		testenv.Text("b done"))
	if _, err := f.run(ModeAdaptive, 0, "t", 0); err != nil {
		t.Fatal(err)
	}
	count := func(i int) int { return strings.Count(string(f.srv.Requests()[i].Body), "marker-7f3a") }
	// request 2 closes phase 1: the command in the assistant's call, its
	// output in the tool reply, nothing in the system prompt
	if sys := f.srv.Requests()[2].Request.Messages[0].Text(); strings.Contains(sys, "marker-7f3a") {
		t.Errorf("phase 1's closing request repeats the output in its system prompt:\n%s", sys)
	}
	if n := count(2); n != 2 {
		t.Errorf("marker sent %d times in the closing request, want 2 (call and reply)", n)
	}
	if sys := f.srv.Requests()[3].Request.Messages[0].Text(); !strings.Contains(sys, "marker-7f3a") || !strings.Contains(sys, "saved as: m\n") {
		t.Errorf("phase 2's history lacks phase 1's step and variable:\n%s", sys)
	}
}

// stepTools returns the step tools a step request offers: its tools but
// the control tools, which every step request must offer right after the
// core tools.
func stepTools(t *testing.T, r testenv.RecordedRequest) []string {
	t.Helper()
	names := r.Request.ToolNames()
	core := 0
	for core < len(names) && slices.Contains(CoreTools, names[core]) {
		core++
	}
	if len(names) < core+len(controlTools) || !slices.Equal(names[core:core+len(controlTools)], controlTools) {
		t.Errorf("step request tools %v do not have %v after the core tools", names, controlTools)
		return names
	}
	return append(names[:core:core], names[core+len(controlTools):]...)
}

// containsWord takes any text (the task is the operator's, the phase the
// model's): never a panic, and a hit is always a real occurrence.
func FuzzContainsWord(f *testing.F) {
	for _, s := range [][2]string{{"which process listens", "process"}, {"8080端口", "端口"}, {"", ""}, {"report", "port"}, {"\xff\xfe", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, w string) {
		if containsWord(text, w) && !strings.Contains(text, w) {
			t.Fatalf("containsWord(%q, %q) without an occurrence", text, w)
		}
	})
}

// allTools is how many tools the step requests may offer.
func allTools() int { return len(tools.Default(safety.DefaultPolicy()).Names()) }

// The line naming the other tools names every one of them, those sharing
// a prefix written once ("container_list/logs"), so that a model can
// call each by its name.
func TestMoreToolsLine(t *testing.T) {
	if got := groupNames([]string{"find", "container_list", "upload_file", "container_logs", "ps", "container_stop"}); !slices.Equal(got,
		[]string{"find", "container_list/logs/stop", "upload_file", "ps"}) {
		t.Errorf("groupNames = %q", got)
	}
	r := &runner{}
	for _, name := range tools.Default(safety.DefaultPolicy()).Names() {
		r.tools = append(r.tools, llm.Tool{Name: name})
	}
	line := strings.TrimSuffix(r.moreTools(), ".\n")
	_, list, _ := strings.Cut(line, ": ")
	var named []string
	for _, e := range strings.Split(list, ", ") {
		first, more, _ := strings.Cut(e, "/")
		named = append(named, first)
		prefix, _, _ := strings.Cut(first, "_")
		for _, end := range strings.Split(more, "/") {
			if end != "" {
				named = append(named, prefix+"_"+end)
			}
		}
	}
	for _, tl := range r.tools {
		if slices.Contains(CoreTools, tl.Name) == slices.Contains(named, tl.Name) {
			t.Errorf("%s: core %v, named %v in %q", tl.Name, slices.Contains(CoreTools, tl.Name), slices.Contains(named, tl.Name), line)
		}
	}
	if strings.Count(line, "container_") != 1 {
		t.Errorf("container tools not written once: %q", line)
	}
}

// The adaptive rules name only the step key the schemas lack
// (ignore_errors): every tool's schema must describe the others.
func TestToolSchemasHaveStepKeys(t *testing.T) {
	for _, s := range tools.Default(safety.DefaultPolicy()).Schemas() {
		raw, err := json.Marshal(s.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"description", "save_output_as", "condition"} {
			if _, ok := schema.Properties[key]; !ok {
				t.Errorf("%s: schema lacks %q", s.Name, key)
			}
		}
	}
	if !strings.Contains(stepRules, " ignore_errors ") || !strings.Contains(stepRules, " condition ") {
		t.Error("the rules do not name ignore_errors and condition")
	}
	// how to close a phase is said once: in phase_done's schema
	pd := phaseDoneTool()
	text := pd.Description + string(pd.Parameters)
	for _, want := range []string{"success criteria", "REPLAN: why", "submit_plan", "FAILED: why"} {
		if !strings.Contains(text, want) || strings.Contains(stepRules, want) {
			t.Errorf("%q is not said once, in phase_done: %s\nrules: %s", want, text, stepRules)
		}
	}
}
