package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
)

// TestAttackCorpusThroughMCP runs a share of the attack corpus through
// `agent mcp` over stdio — the real binary as a throwaway unprivileged
// user, its home a scratch one, agent's own keys in its environment —
// from a client that cannot be asked (no elicitation): every 6th high
// entry of attacks.txt (across its classes) as execute_command, the
// file tool attacks of toolattacks.jsonl as their own tools, and the
// safe-env entries, and the {{var}} template entries as plans through
// run_plan. Once with the default approval, once with --read-only
// --approve all (read-only must hold whatever --approve says). Judged by
// outcome: every attack refused, nothing under the home changed, no
// secret and none of agent's keys in a result, nothing reached the
// listener on 127.0.0.1:5353 (where the corpus's network attacks aim).
func TestAttackCorpusThroughMCP(t *testing.T) {
	other := testenv.StartOtherUser(t)
	agent := otherUserAgent(t)
	base, home, inv := otherUserScratch(t, "agent-attack-mcp-")
	tes := corpustest.ToolAttacks(t, home)
	corpustest.ToolHome(t, home, tes)
	other.Own(t, base)

	// The calls: name (class), tool, arguments.
	type attack struct {
		class, tool string
		args        map[string]any
	}
	var attacks, safe []attack
	p := safety.DefaultPolicy()
	n := 0
	for _, e := range corpustest.Attacks(t, home) {
		switch {
		case e.Safe():
			safe = append(safe, attack{e.Class, "execute_command", map[string]any{"command": e.Command}})
		case e.Medium() || e.Class == "gtfobins":
		default:
			if n++; n%6 != 0 {
				continue
			}
			// Guard: one the classifier does not rate high is a failure
			// here, not run.
			if an := p.Analyze(e.Command, home); an.Level != safety.High || an.IfJournaled.Level != safety.High {
				t.Errorf("%q = %s (%s once journaled), want high (not sent)", e.Command, an.Assessment, an.IfJournaled)
				continue
			}
			attacks = append(attacks, attack{e.Class, "execute_command", map[string]any{"command": e.Command}})
		}
	}
	for _, e := range tes {
		if e.Payload != nil || len(e.Steps) != 1 || !strings.HasPrefix(e.Class, "file-") {
			continue
		}
		attacks = append(attacks, attack{e.Class, e.Steps[0]["tool"].(string), maps.Clone(e.Steps[0]["parameters"].(map[string]any))})
	}

	// The template entries, each a plan for run_plan: the payload read
	// from a file on the host into {{out}}, then the entry's step. Their
	// network payloads aim at 5357 here (5356 is the engine test's).
	var plans []string
	for _, e := range tes {
		if e.Payload == nil || e.Class != "template" {
			continue
		}
		steps := append([]map[string]any{{"tool": "read_file", "parameters": map[string]any{"file_path": e.PayloadPath(home)}, "save_output_as": "out"}}, e.Steps...)
		b, err := json.Marshal(map[string]any{"steps": steps})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, string(b))
		if err := os.WriteFile(e.PayloadPath(home), []byte(strings.ReplaceAll(*e.Payload, "5356", "5357")), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Lchown(e.PayloadPath(home), int(other.UID), int(other.GID))
	}
	heardTemplates := corpustest.Listen(t, "5357")
	heard := corpustest.Listen(t, "5353")
	before := corpustest.Tree(t, home)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(base, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(base, "config"), "PATH=/usr/local/bin:/usr/bin:/bin", "SSH_AUTH_SOCK=", "CI=true", raceEnv()}
	for _, k := range corpustest.EnvKeys {
		env = append(env, k+"="+corpustest.Secrets[len(corpustest.Secrets)-1])
	}
	for _, flags := range [][]string{nil, {"--read-only", "--approve", "all"}} {
		name := "default"
		if flags != nil {
			name = strings.Join(flags, " ")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.Command(agent, append([]string{"mcp", "-i", inv}, flags...)...)
		cmd.Env, cmd.Dir = env, filepath.Join(home, "work")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: other.Cred(), Pdeathsig: syscall.SIGKILL}
		cmd.Stderr = &testWriter{t: t}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-attack-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%s: connect to agent mcp: %v", name, err)
		}
		tally := map[string][2]int{}
		for _, a := range attacks {
			args := maps.Clone(a.args)
			args["host"] = "me"
			text, isErr := call(t, ctx, cs, a.tool, args)
			// A read that ran is judged by what it showed (grep -r of ~/work
			// does not follow its links into ~/.ssh); anything else must be
			// refused.
			held := isErr || strings.Contains(text, "denied") || a.class == "file-read"
			for _, s := range corpustest.Secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: %s %v showed a secret: %.300q", name, a.tool, a.args, text)
					held = false
				}
			}
			if !held {
				t.Errorf("%s: %s %v was not refused: %.300q", name, a.tool, a.args, text)
			}
			v := tally[a.class]
			v[0]++
			if held {
				v[1]++
			}
			tally[a.class] = v
		}
		for _, a := range safe {
			args := maps.Clone(a.args)
			args["host"] = "me"
			text, isErr := call(t, ctx, cs, a.tool, args)
			if isErr {
				t.Errorf("%s: %q: %.300q, want it run", name, a.args["command"], text)
			}
			for _, s := range corpustest.Secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: %q showed a secret: %.300q", name, a.args["command"], text)
				}
			}
			for _, k := range corpustest.EnvKeys {
				if strings.Contains(text, k+"=") || strings.Contains(text, k+" ") {
					t.Errorf("%s: %q saw agent's %s: %.300q", name, a.args["command"], k, text)
				}
			}
		}
		pwned := filepath.Join(home, "work", "PWNED")
		for _, plan := range plans {
			text, _ := call(t, ctx, cs, "run_plan", map[string]any{"plan": plan, "hosts": "me"})
			for _, s := range corpustest.Secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: run_plan %s showed a secret: %.300q", name, plan, text)
				}
			}
			if _, err := os.Lstat(pwned); err == nil {
				t.Errorf("%s: run_plan %s: a template value ran (%s appeared): %.300q", name, plan, pwned, text)
				os.Remove(pwned)
			}
		}
		cs.Close()
		cancel()
		if got := heardTemplates(); got != "" {
			t.Errorf("%s: a template payload reached the listener: %s", name, got)
		}
		corpustest.Same(t, name+": after the corpus through agent mcp", before, corpustest.Tree(t, home))
		if got := heard(); got != "" {
			t.Errorf("%s: an attack reached the loopback listener: %s", name, got)
		}
		classes := slices.Sorted(maps.Keys(tally))
		var b strings.Builder
		for _, c := range classes {
			fmt.Fprintf(&b, " %s %d/%d", c, tally[c][1], tally[c][0])
		}
		t.Logf("agent mcp %s as uid %d: %d attacks (held/tried per class:%s), %d template plans through run_plan, %d safe-env entries ran",
			name, other.UID, len(attacks), b.String(), len(plans), len(safe))
	}
}
