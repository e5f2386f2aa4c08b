package stepgen

import (
	"context"
	"strings"
	"testing"
	"time"

	execctx "github.com/autoshell/agent/context"
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
	if !strings.Contains(tool, "pw="+execctx.Redacted) || !strings.Contains(tool, "plain") {
		t.Fatalf("tool reply %q: want the value replaced and the rest kept", tool)
	}
}
