// Package scenarios holds the LLM economy benchmark of issue 4: the
// adaptive-execution spec's three scenarios (conditional script fix, log
// errors to errors.txt, config flag flip and restart), each scripted for
// the scripted OpenAI-compatible model twice — once as a ReAct model would
// answer (one growing conversation, one tool call per turn) and once as an
// adaptive model would (a submit_plan call, then per-phase requests with
// 1–3 steps) — doing the same work: the same commands and file changes,
// and the same end state, checked on the host.
//
// Each run goes through the real stepgen loop, planner executor, safety
// layer, tools and a real transport (local, or the in-process SSH server),
// and measures what the model was sent: calls and prompt tokens as the
// scripted server counts them (request body bytes / 4, the same for both
// modes), the bytes of each part of the requests, and the agent's own time
// per step with the time spent inside model calls taken out.
package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// Scenario is one task, its host files, a script per mode and the end
// state it must leave.
type Scenario struct {
	Name string
	// Task is the operator's task; DIR stands for the scenario directory.
	Task string
	// Setup writes the files the task works on under dir (a reset: it may
	// run again on the same dir).
	Setup func(dir string) error
	// Script is what the model answers in mode, with paths under dir.
	Script func(mode stepgen.Mode, dir string) []testenv.Reply
	// Check verifies the end state under dir.
	Check func(dir string) error
	// Errors and AdaptiveErrors are how many steps fail as scripted in
	// ReAct and adaptive mode: a failure the task starts from, or a
	// model's mistake it corrects.
	Errors, AdaptiveErrors int
	// Vars, when set, are variables set before the run (a host's own, as
	// an inventory's are).
	Vars func(dir string) map[string]any
	// PlanOnce names host directories under the scenario directory: the
	// task is done on each, by ReAct in one conversation per host and by
	// adaptive on the first with the model and replayed on the others
	// without it (agent run --plan-once; see planOnce).
	PlanOnce []string
}

// All returns the spec's three scenarios in its order, then issue 31's:
// a five-phase diagnosis, a condition the model gets wrong once, and a
// task on three hosts with plan-once.
func All() []Scenario {
	return []Scenario{FixScript(), LogErrors(), FlipFlag(), Diagnose(), Replan(), ThreeHosts()}
}

// call builds a scripted tool call: args is JSON text with DIR standing
// for dir.
func call(dir, name, args string) testenv.ToolCall {
	return testenv.Call(name, strings.ReplaceAll(args, "DIR", dir))
}

func calls(dir string, cs ...[2]string) testenv.Reply {
	var out []testenv.ToolCall
	for _, c := range cs {
		out = append(out, call(dir, c[0], c[1]))
	}
	return testenv.Calls(out...)
}

// planAnd is the planning reply: submit_plan with phases, then the first
// phase's steps and its phase_done (issue 17: one request per phase).
func planAnd(dir, phases string, steps ...[2]string) testenv.Reply {
	r := calls(dir, steps...)
	r.ToolCalls = append([]testenv.ToolCall{testenv.Call(planner.SubmitPlanName, phases)}, r.ToolCalls...)
	return r
}

// done is the phase_done call closing a phase after its last steps.
func done(summary string) [2]string {
	b, _ := json.Marshal(map[string]string{"summary": summary})
	return [2]string{stepgen.PhaseDoneName, string(b)}
}

// FixScript is the spec's first scenario: run the script; if it prints 1,
// change it to print 2, and check.
func FixScript() Scenario {
	return Scenario{
		Name: "fix-script",
		Task: "run DIR/test/a.sh; if it prints 1, change it to print 2",
		Setup: func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "test"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "test", "a.sh"), []byte("#!/bin/sh\necho 1\n"), 0o755)
		},
		Script: func(mode stepgen.Mode, dir string) []testenv.Reply {
			run := `{"command":"sh DIR/test/a.sh"}`
			read := `{"file_path":"DIR/test/a.sh"}`
			edit := `{"file_path":"DIR/test/a.sh","search_pattern":"echo 1","replacement":"echo 2"}`
			if mode == stepgen.ModeReAct {
				return []testenv.Reply{ // run and read at once: neither needs the other
					calls(dir, [2]string{"execute_command", run}, [2]string{"read_file", read}),
					calls(dir, [2]string{"edit_file", edit}),
					calls(dir, [2]string{"execute_command", run}),
					testenv.Text("a.sh printed 1, so I changed `echo 1` to `echo 2`; it now prints 2."),
				}
			}
			return []testenv.Reply{
				planAnd(dir, `{"task_type":"file_edit","complexity":"simple","phases":[`+
					`{"phase":1,"goal":"Run the script and record its output","success_criteria":"the output is known"},`+
					`{"phase":2,"goal":"If it printed 1, change it to print 2 and check","success_criteria":"the script prints 2, or it did not print 1 and is unchanged"}]}`,
					[2]string{"execute_command", `{"command":"sh DIR/test/a.sh","save_output_as":"script_output","description":"run the script"}`},
					done("Ran the script; its output is in script_output.")),
				calls(dir,
					[2]string{"read_file", `{"file_path":"DIR/test/a.sh","save_output_as":"script_content","condition":"script_output.strip() == '1'"}`},
					[2]string{"edit_file", `{"file_path":"DIR/test/a.sh","search_pattern":"echo 1","replacement":"echo 2","condition":"script_output.strip() == '1'"}`},
					[2]string{"execute_command", `{"command":"sh DIR/test/a.sh","save_output_as":"new_output","description":"run it again"}`},
					done("If a.sh printed 1, `echo 1` became `echo 2`; the run after it is in new_output.")),
			}
		},
		Check: func(dir string) error {
			out, err := exec.Command("sh", filepath.Join(dir, "test", "a.sh")).Output()
			if err != nil {
				return fmt.Errorf("run a.sh: %w", err)
			}
			if got := strings.TrimSpace(string(out)); got != "2" {
				return fmt.Errorf("a.sh prints %q, want 2", got)
			}
			return nil
		},
	}
}

const logText = "2024-01-01 10:00:00 INFO start\n2024-01-01 10:00:01 ERROR disk full\n" +
	"2024-01-01 10:00:02 INFO retry\n2024-01-01 10:00:03 ERROR disk still full\n"

const errorLines = "2024-01-01 10:00:01 ERROR disk full\n2024-01-01 10:00:03 ERROR disk still full\n"

// LogErrors is the spec's second scenario: if the log has ERROR lines,
// write them to errors.txt.
func LogErrors() Scenario {
	return Scenario{
		Name: "log-errors",
		Task: "if DIR/app.log has ERROR lines, write them to DIR/errors.txt",
		Setup: func(dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "errors.txt")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "app.log"), []byte(logText), 0o644)
		},
		Script: func(mode stepgen.Mode, dir string) []testenv.Reply {
			read := `{"file_path":"DIR/app.log"}`
			grep := `{"command":"grep -F ERROR DIR/app.log"}`
			if mode == stepgen.ModeReAct {
				lines, _ := json.Marshal(errorLines)
				return []testenv.Reply{
					calls(dir, [2]string{"read_file", read}, [2]string{"execute_command", grep}),
					calls(dir, [2]string{"write_file", `{"file_path":"DIR/errors.txt","content":` + string(lines) + `}`}),
					testenv.Text("The log had 2 ERROR lines; they are in errors.txt now."),
				}
			}
			return []testenv.Reply{
				planAnd(dir, `{"task_type":"log_analysis","complexity":"simple","phases":[`+
					`{"phase":1,"goal":"Find the ERROR lines in the log","success_criteria":"the ERROR lines are known"},`+
					`{"phase":2,"goal":"Write them to errors.txt","success_criteria":"errors.txt holds exactly the ERROR lines"}]}`,
					[2]string{"read_file", `{"file_path":"DIR/app.log","save_output_as":"log_content","description":"read the log"}`},
					[2]string{"execute_command", `{"command":"grep -F ERROR DIR/app.log","save_output_as":"error_lines","condition":"'ERROR' in log_content"}`},
					done("The ERROR lines are in error_lines.")),
				calls(dir, [2]string{"write_file", `{"file_path":"DIR/errors.txt","content":"{{error_lines}}","condition":"len(error_lines.strip()) > 0"}`},
					done("The log's ERROR lines are in errors.txt now.")),
			}
		},
		Check: func(dir string) error {
			b, err := os.ReadFile(filepath.Join(dir, "errors.txt"))
			if err != nil {
				return err
			}
			if string(b) != errorLines {
				return fmt.Errorf("errors.txt = %q, want %q", b, errorLines)
			}
			return nil
		},
	}
}

const configText = "name: app\ndebug: false\nport: 8080\n"

// FlipFlag is the spec's third scenario: if the config says debug: false,
// make it debug: true and restart the service.
func FlipFlag() Scenario {
	return Scenario{
		Name: "flip-flag",
		Task: "if DIR/app/config.yaml has debug: false, set it to true and restart the app with sh DIR/app/restart.sh",
		Setup: func(dir string) error {
			app := filepath.Join(dir, "app")
			if err := os.MkdirAll(app, 0o755); err != nil {
				return err
			}
			os.Remove(filepath.Join(app, "restarted"))
			if err := os.WriteFile(filepath.Join(app, "config.yaml"), []byte(configText), 0o644); err != nil {
				return err
			}
			restart := "#!/bin/sh\ndate +%s > \"$(dirname \"$0\")/restarted\"\necho \"app restarted\"\n"
			return os.WriteFile(filepath.Join(app, "restart.sh"), []byte(restart), 0o755)
		},
		Script: func(mode stepgen.Mode, dir string) []testenv.Reply {
			read := `{"file_path":"DIR/app/config.yaml"}`
			edit := `{"file_path":"DIR/app/config.yaml","search_pattern":"debug: false","replacement":"debug: true"}`
			restart := `{"command":"sh DIR/app/restart.sh"}`
			if mode == stepgen.ModeReAct {
				return []testenv.Reply{
					calls(dir, [2]string{"read_file", read}),
					calls(dir, [2]string{"edit_file", edit}),
					calls(dir, [2]string{"execute_command", restart}, [2]string{"read_file", read}), // restart, then check
					testenv.Text("debug was false; it is true now and the app was restarted."),
				}
			}
			return []testenv.Reply{
				planAnd(dir, `{"task_type":"config_change","complexity":"simple","phases":[`+
					`{"phase":1,"goal":"Turn debug on if it is off","success_criteria":"the config says debug: true"},`+
					`{"phase":2,"goal":"Restart the app and check the config","success_criteria":"the restart succeeded and debug is true"}]}`,
					[2]string{"read_file", `{"file_path":"DIR/app/config.yaml","save_output_as":"config","description":"read the config"}`},
					[2]string{"edit_file", `{"file_path":"DIR/app/config.yaml","search_pattern":"debug: false","replacement":"debug: true","condition":"'debug: false' in config.splitlines()"}`},
					done("debug is true in the config.")),
				calls(dir,
					[2]string{"execute_command", `{"command":"sh DIR/app/restart.sh","save_output_as":"restart_output","description":"restart the app"}`},
					[2]string{"read_file", `{"file_path":"DIR/app/config.yaml","save_output_as":"new_config"}`},
					done("The app was restarted with debug: true.")),
			}
		},
		Check: func(dir string) error {
			b, err := os.ReadFile(filepath.Join(dir, "app", "config.yaml"))
			if err != nil {
				return err
			}
			if want := strings.Replace(configText, "debug: false", "debug: true", 1); string(b) != want {
				return fmt.Errorf("config.yaml = %q, want %q", b, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "app", "restarted")); err != nil {
				return fmt.Errorf("the app was not restarted: %w", err)
			}
			return nil
		},
	}
}

// Measure is one scenario run in one mode.
type Measure struct {
	Scenario string
	Mode     stepgen.Mode
	// Variant names the run: adaptive; react (offered the tools adaptive
	// offered in the same scenario); react-all (offered every tool).
	Variant   string
	Transport string
	// Offered are the step tools the requests offered (the planning and
	// phase_done tools left out).
	Offered []string
	// Calls and PromptTokens are what the client counted from the server's
	// usage (the scripted server estimates prompt tokens as request body
	// bytes / 4).
	Calls, PromptTokens, CompletionTokens int
	// O200k is the o200k_base tokens of all request bodies (the real
	// tokenizer of gpt-4o): what issue 17's token target is counted in.
	O200k int
	// Bytes of all request bodies, split: tool definitions, system
	// messages, every other message, and the rest (keys, model name).
	BodyBytes, ToolBytes, SystemBytes, MessageBytes int
	// Steps run; Total is stepgen.Run's wall time and InModel the part of
	// it spent inside model calls (client and scripted server).
	// OnHost is the part spent inside the transport: the commands and
	// file transfers themselves, and Probe, the environment probe (one
	// command before the first request).
	Steps                         int
	Total, InModel, OnHost, Probe time.Duration
	// Bodies are the request bodies sent, in order.
	Bodies [][]byte
	// Work is every step that ran (status ok), in order, as the tool and
	// its resolved parameters: the same in both modes.
	Work []string
	// ran is what stepgen ran, for a replay (PlanOnce).
	ran []stepgen.RanStep
}

// Overhead is the agent's time per step without the model calls: what
// issue 4 bounds (≤ 5 ms). It includes the work on the host.
func (m Measure) Overhead() time.Duration {
	if m.Steps == 0 {
		return 0
	}
	return (m.Total - m.InModel) / time.Duration(m.Steps)
}

// ProbePerStep is the environment probe's share of Overhead.
func (m Measure) ProbePerStep() time.Duration {
	if m.Steps == 0 {
		return 0
	}
	return m.Probe / time.Duration(m.Steps)
}

// Machinery is Overhead without the time inside the transport: the
// agent's own work per step (loop, parsing, templating, safety, tools,
// context, events).
func (m Measure) Machinery() time.Duration {
	if m.Steps == 0 {
		return 0
	}
	return (m.Total - m.InModel - m.OnHost) / time.Duration(m.Steps)
}

// workOf is a step that ran as Work records it.
func workOf(tool string, params any) string {
	b, _ := json.Marshal(params)
	return tool + " " + string(b)
}

// Host is a target the scenarios run on: a transport and a directory on it
// (an absolute path that the benchmark process can read too).
type Host struct {
	Name      string
	Transport transport.Transport
	Dir       string
}

// timed is a Chatter that adds up the time spent inside the model calls.
type timed struct {
	next planner.Chatter
	mu   sync.Mutex
	d    time.Duration
}

func (c *timed) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := c.next.Chat(ctx, req)
	c.mu.Lock()
	c.d += time.Since(start)
	c.mu.Unlock()
	return resp, err
}

// Run runs sc in mode on h against a fresh scripted model and checks the
// end state. Every request must be accepted by the server and the script
// used up exactly.
//
// offer, when not nil, is the only tools the executor has, and so the
// only ones a ReAct run offers (adaptive offers a subset of the
// executor's tools per phase).
func Run(ctx context.Context, h Host, sc Scenario, mode stepgen.Mode, offer []string) (Measure, error) {
	m := Measure{Scenario: sc.Name, Mode: mode, Variant: string(mode), Transport: h.Name}
	if mode == stepgen.ModeReAct && offer == nil {
		m.Variant = "react-all"
	}
	if err := sc.Setup(h.Dir); err != nil {
		return m, fmt.Errorf("%s setup: %w", sc.Name, err)
	}
	srv, err := testenv.NewLLMServer(sc.Script(mode, h.Dir)...)
	if err != nil {
		return m, err
	}
	defer srv.Close()
	tr, onHost := timeTransport(h.Transport)
	emit := func(ev event.Event) {
		if st := ev.Step; ev.Kind == event.KindStep && st.Status == "ok" {
			m.Work = append(m.Work, workOf(st.Tool, st.Parameters))
		}
	}
	cfg := executor.Config{
		Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Emit: emit,
	}
	if sc.Vars != nil {
		cfg.Vars = execctx.New()
		for k, v := range sc.Vars(h.Dir) {
			if err := cfg.Vars.Set(k, v); err != nil {
				return m, err
			}
		}
	}
	ex := executor.New(cfg)
	if offer != nil {
		// the same tools, wired to the first executor's context (conditions
		// and session files), in a registry of their own
		var ts []tools.Tool
		for _, name := range offer {
			if t, ok := ex.Registry().Lookup(name); ok {
				ts = append(ts, t)
			}
		}
		cfg.Vars, cfg.Registry = ex.Vars(), tools.NewRegistry(ts...)
		ex = executor.New(cfg)
	}
	chat := &timed{next: llm.New(llm.Config{BaseURL: srv.URL, Model: "gpt-4o-mini", APIKey: "bench", MaxRetries: 0})}
	task := strings.ReplaceAll(sc.Task, "DIR", h.Dir)
	start := time.Now()
	res, err := stepgen.Run(ctx, stepgen.Config{LLM: chat, Executor: ex, Mode: mode, Transport: tr, Host: h.Name}, task)
	m.Total = time.Since(start)
	m.InModel = chat.d
	m.OnHost, m.Probe = onHost.spent()
	m.Calls, m.PromptTokens, m.CompletionTokens = res.Usage.Calls, res.Usage.Prompt, res.Usage.Completion
	m.Steps = res.Steps
	m.ran = res.Ran
	if rej := srv.Rejections(); len(rej) > 0 {
		msg := ""
		if rej[0].Error != nil {
			msg = rej[0].Error.Message
		}
		return m, fmt.Errorf("%s %s: the model server rejected request %d: %s", sc.Name, mode, len(srv.Requests()), msg)
	}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w", sc.Name, mode, err)
	}
	wantErrors := sc.AdaptiveErrors
	if mode == stepgen.ModeReAct {
		wantErrors = sc.Errors
	}
	if !res.Success || res.Errors != wantErrors {
		return m, fmt.Errorf("%s %s: run not clean: %s", sc.Name, mode, res.Summary.Text())
	}
	if n := srv.Remaining(); n != 0 {
		return m, fmt.Errorf("%s %s: %d scripted replies left unused", sc.Name, mode, n)
	}
	if err := sc.Check(h.Dir); err != nil {
		return m, fmt.Errorf("%s %s: end state: %w", sc.Name, mode, err)
	}
	for _, r := range srv.Requests() {
		if err := m.addBody(r.Body); err != nil {
			return m, err
		}
		n, err := O200kTokens(r.Body)
		if err != nil {
			return m, err
		}
		m.O200k += n
		m.Bodies = append(m.Bodies, r.Body)
	}
	return m, nil
}

// addBody splits a request body into its parts.
func (m *Measure) addBody(body []byte) error {
	var req struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	m.BodyBytes += len(body)
	m.ToolBytes += len(req.Tools)
	var ts []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	json.Unmarshal(req.Tools, &ts)
	for _, t := range ts {
		if n := t.Function.Name; n != planner.SubmitPlanName && n != stepgen.PhaseDoneName && !slices.Contains(m.Offered, n) {
			m.Offered = append(m.Offered, n)
		}
	}
	for _, raw := range req.Messages {
		var msg struct {
			Role string `json:"role"`
		}
		json.Unmarshal(raw, &msg)
		if msg.Role == "system" {
			m.SystemBytes += len(raw)
		} else {
			m.MessageBytes += len(raw)
		}
	}
	return nil
}

// Pair is one scenario measured on one host: adaptive, ReAct offered
// the same tools as adaptive (the fair comparison), and ReAct offered
// every tool.
type Pair struct {
	Adaptive, ReAct, ReActAll Measure
}

// Ratio is adaptive's prompt tokens over ReAct's (bytes / 4).
func (p Pair) Ratio() float64 {
	if p.ReAct.PromptTokens == 0 {
		return 0
	}
	return float64(p.Adaptive.PromptTokens) / float64(p.ReAct.PromptTokens)
}

// O200kRatio is adaptive's o200k tokens over ReAct's.
func (p Pair) O200kRatio() float64 {
	if p.ReAct.O200k == 0 {
		return 0
	}
	return float64(p.Adaptive.O200k) / float64(p.ReAct.O200k)
}

// CallRatio is adaptive's model calls over ReAct's.
func (p Pair) CallRatio() float64 {
	if p.ReAct.Calls == 0 {
		return 0
	}
	return float64(p.Adaptive.Calls) / float64(p.ReAct.Calls)
}

// RunAll runs every scenario on h: adaptive, then ReAct with the tools
// adaptive offered, then ReAct with every tool.
func RunAll(ctx context.Context, h Host) ([]Pair, error) {
	var out []Pair
	for _, sc := range All() {
		var p Pair
		var err error
		if len(sc.PlanOnce) > 0 {
			if p, err = planOnce(ctx, h, sc); err != nil {
				return out, err
			}
			out = append(out, p)
			continue
		}
		if p.Adaptive, err = Run(ctx, h, sc, stepgen.ModeAdaptive, nil); err != nil {
			return out, err
		}
		if p.ReAct, err = Run(ctx, h, sc, stepgen.ModeReAct, p.Adaptive.Offered); err != nil {
			return out, err
		}
		if p.ReActAll, err = Run(ctx, h, sc, stepgen.ModeReAct, nil); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Totals adds up the pairs.
func Totals(ps []Pair) Pair {
	var t Pair
	for _, p := range ps {
		for _, x := range []struct{ dst, src *Measure }{{&t.Adaptive, &p.Adaptive}, {&t.ReAct, &p.ReAct}, {&t.ReActAll, &p.ReActAll}} {
			x.dst.Scenario, x.dst.Mode, x.dst.Variant, x.dst.Transport = "total", x.src.Mode, x.src.Variant, x.src.Transport
			x.dst.Bodies = append(x.dst.Bodies, x.src.Bodies...)
			x.dst.Calls += x.src.Calls
			x.dst.PromptTokens += x.src.PromptTokens
			x.dst.O200k += x.src.O200k
			x.dst.CompletionTokens += x.src.CompletionTokens
			x.dst.BodyBytes += x.src.BodyBytes
			x.dst.ToolBytes += x.src.ToolBytes
			x.dst.SystemBytes += x.src.SystemBytes
			x.dst.MessageBytes += x.src.MessageBytes
			x.dst.Steps += x.src.Steps
			x.dst.Total += x.src.Total
			x.dst.InModel += x.src.InModel
			x.dst.OnHost += x.src.OnHost
			x.dst.Probe += x.src.Probe
		}
	}
	return t
}

// Table renders pairs as a text table: per scenario ReAct with every
// tool, ReAct with adaptive's tools, and adaptive with its ratios to the
// latter (prompt tokens by bytes / 4 and by o200k, calls).
func Table(ps []Pair) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-10s %-9s %5s %6s %8s %7s %6s %8s %8s %8s %8s %8s %7s %7s %6s\n",
		"scenario", "variant", "calls", "steps", "prompt", "o200k", "compl", "tools_B", "system_B", "msgs_B", "ms/step", "agent_ms", "bytes/4", "o200k", "calls")
	row := func(m Measure, ratios string) {
		fmt.Fprintf(&b, "%-10s %-9s %5d %6d %8d %7d %6d %8d %8d %8d %8.3f %8.3f %s\n", m.Scenario, m.Variant, m.Calls, m.Steps,
			m.PromptTokens, m.O200k, m.CompletionTokens, m.ToolBytes, m.SystemBytes, m.MessageBytes, ms(m.Overhead()), ms(m.Machinery()), ratios)
	}
	for _, p := range append(ps, Totals(ps)) {
		row(p.ReActAll, "")
		row(p.ReAct, "")
		row(p.Adaptive, fmt.Sprintf("%7s %7s %6s", fmt.Sprintf("%.0f%%", 100*p.Ratio()), fmt.Sprintf("%.0f%%", 100*p.O200kRatio()),
			fmt.Sprintf("%.2f×", p.CallRatio())))
	}
	return b.String()
}

// CostTable prices every scenario's runs at each of prices, with prompt
// caching: adaptive's share of ReAct's (same tools) cache-aware prompt
// cost, and of the whole cost with completions.
func CostTable(ps []Pair, prices []Price) (string, error) {
	var b bytes.Buffer
	for _, pr := range prices {
		fmt.Fprintf(&b, "-- %s: $/Mtok input %.3f, cached read %.3f, cache write %.3f, output %.3f; cached from %d tokens (%s)\n",
			pr.Name, pr.In, pr.Read, pr.Write, pr.Out, pr.Cache.MinTokens, pr.Source)
		fmt.Fprintf(&b, "%-10s %-9s %8s %8s %11s %11s %11s %9s %9s\n",
			"scenario", "variant", "prompt", "cached", "prompt_$", "no-cache_$", "compl_$", "prompt×", "total×")
		for _, p := range append(ps, Totals(ps)) {
			var costs [3]Cost
			for i, m := range []Measure{p.ReActAll, p.ReAct, p.Adaptive} {
				c, err := CostOf(pr, m.Bodies, m.CompletionTokens)
				if err != nil {
					return "", err
				}
				costs[i] = c
				ratios := ""
				if i == 2 && costs[1].Prompt > 0 {
					ratios = fmt.Sprintf("%8.2f× %8.2f×", c.Prompt/costs[1].Prompt, (c.Prompt+c.Completion)/(costs[1].Prompt+costs[1].Completion))
				}
				fmt.Fprintf(&b, "%-10s %-9s %8d %8d %11.6f %11.6f %11.6f %s\n",
					m.Scenario, m.Variant, c.Prompted, c.Cached, c.Prompt, c.PromptUncached, c.Completion, ratios)
			}
		}
	}
	return b.String(), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
