package stepgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport/local"
)

// A command that prints the value of a variable the model is not shown
// (an inventory password, say) must not hand that value to the model in
// the step's raw output.
func TestObservationScrubsHiddenValues(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Calls(testenv.Call("execute_command", `{"command":"echo pw={{vault_token}}; echo plain"}`)),
		testenv.Text("done"),
	)
	t.Cleanup(func() { srv.CheckNoRejections(t) })
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(executor.Config{
		Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil),
	})
	if err := ex.Vars().Set("vault_token", "TopSecret42"); err != nil {
		t.Fatal(err)
	}
	ex.Vars().SetExposure("vault_token", execctx.ExposeNone)
	client := llm.New(llm.Config{BaseURL: srv.URL, Model: "gpt-4o-mini", APIKey: "k"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{LLM: client, Executor: ex, Mode: ModeReAct, Transport: tr, Environment: "test"}, "show it")
	if err != nil || !res.Success {
		t.Fatalf("run: %v %+v", err, res.Summary)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var tool string
	for _, m := range reqs[1].Request.Messages {
		if m.Role == "tool" {
			tool += m.Text()
		}
	}
	if strings.Contains(tool, "TopSecret42") {
		t.Fatalf("the model got the hidden value: %q", tool)
	}
	// named since issue 14 §4, and the model is told
	if !strings.Contains(tool, "pw=[REDACTED:VAULT_TOKEN]") || !strings.Contains(tool, "plain") ||
		!strings.Contains(tool, "secret values withheld from you: VAULT_TOKEN") {
		t.Fatalf("tool reply %q: want the value replaced and the rest kept", tool)
	}
}

// What a step reads goes to the model without the secrets safety's
// patterns find — in the tool reply and in the next phase's history —
// named, with a note; SendSecrets sends them (issue 14 §4).
func TestObservationScrubsSecrets(t *testing.T) {
	for _, send := range []bool{false, true} {
		f := newFixture(t)
		f.sendSecrets = send
		f.write("s.env", "DB_PASSWORD=pw-9f8e7d\nurl=https://u:urlpw-5544@h/x\n")
		f.srv.Push(
			testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"a"},{"phase":2,"goal":"b"}]}`)),
			testenv.Calls(testenv.Call("read_file", f.q(`{"file_path":"DIR/s.env","save_output_as":"env"}`))),
			testenv.Text("read"),
			testenv.Text("done"))
		if _, err := f.run(ModeAdaptive, 0, "t", 0); err != nil {
			t.Fatal(err)
		}
		reqs := f.srv.Requests()
		for i, r := range reqs {
			for _, v := range []string{"pw-9f8e7d", "urlpw-5544"} {
				if got := strings.Contains(string(r.Body), v); got != (send && i > 1) {
					t.Errorf("send %v: request %d holds %s: %v", send, i, v, got)
				}
			}
		}
		if send {
			continue
		}
		reply := f.toolReplies(2)[0]
		if !strings.Contains(reply, "DB_PASSWORD=[REDACTED:DB_PASSWORD]") || !strings.Contains(reply, "https://u:[REDACTED:URL_PASSWORD]@h/x") ||
			!strings.Contains(reply, "withheld from you: DB_PASSWORD, URL_PASSWORD") {
			t.Errorf("tool reply %q", reply)
		}
		if sys := reqs[3].Request.Messages[0].Text(); !strings.Contains(sys, "[REDACTED:DB_PASSWORD]") {
			t.Errorf("phase 2 history:\n%s", sys)
		}
	}
}

// The environment text may carry an earlier REPL task's variables and
// answers (engine.Conversation's notes): their secrets stay home too.
func TestEnvironmentScrubbed(t *testing.T) {
	srv := testenv.StartLLMServer(t, testenv.Text("ok"))
	t.Cleanup(func() { srv.CheckNoRejections(t) })
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(executor.Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil)})
	ex.Vars().Set("db_password", "VarSecret-31")
	ex.Vars().SetExposure("db_password", execctx.ExposeName)
	client := llm.New(llm.Config{BaseURL: srv.URL, Model: "gpt-4o-mini", APIKey: "k"})
	env := "os: Linux\n\nEarlier tasks:\n- out = \"API_TOKEN=EnvSecret-77\"\n- db_password = \"VarSecret-31\"\n"
	if _, err := Run(context.Background(), Config{LLM: client, Executor: ex, Mode: ModeReAct, Environment: env}, "t"); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	if strings.Contains(body, "EnvSecret-77") || strings.Contains(body, "VarSecret-31") || !strings.Contains(body, "[REDACTED:DB_PASSWORD]") {
		t.Errorf("request: %s", body)
	}
}
