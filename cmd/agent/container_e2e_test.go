package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// containerPlan lists the containers, reads the test container's logs,
// restarts it when the listing shows it, and inspects it.
const containerPlan = `name: containers
phases:
  - phase: 1
    goal: look at the container and restart it
    steps:
      - tool: container_list
        save_output_as: listing
      - tool: container_logs
        parameters: {name: "{{ctr}}", tail: 3}
      - tool: container_restart
        condition: "ctr in listing"
        parameters: {name: "{{ctr}}", timeout: 5}
      - tool: container_inspect
        parameters: {name: "{{ctr}}"}
      - tool: container_logs
        parameters: {name: "{{evil}}"}
`

// TestContainersEndToEnd drives the container tools through the CLI
// against a real podman container, on this machine and over real sshd:
// `agent run` of a plan using them (the restart is high, issue 26: undo
// cannot take a container's state back; it is denied at --approve medium
// and the container keeps running as it was, judged by its start time,
// and runs with --approve all), and `agent -c` with the scripted model
// calling them.
func TestContainersEndToEnd(t *testing.T) {
	p := testenv.StartPodman(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: p.SSHDEnv()})
	home, srv := goldenEnv(t)
	cfg := filepath.Join(home, "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host ctr\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, d.User, d.IdentityFile, d.KnownHosts)), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(home, "plan.yaml")
	if err := os.WriteFile(plan, []byte(containerPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"", "ctr"} {
		t.Run("host="+host, func(t *testing.T) {
			name := p.RunContainer(t)
			marker := filepath.Join(t.TempDir(), "hostile")
			args := []string{"-F", cfg, "--ssh-host=" + host, "run", plan, "--var", "ctr=" + name, "--var", "evil=web; touch " + marker, "--json"}

			// at --approve medium the restart is denied (exit 4): the
			// container was not restarted
			started := containerStarted(t, name)
			out, _, code := runAgent(append(args, "--approve", "medium")...)
			if steps := stepEvents(t, out); code != 4 || len(steps) < 3 || steps[2]["status"] != "denied" || steps[2]["risk"] != "high" {
				t.Errorf("at --approve medium: exit %d, steps %v", code, steps)
			}
			if now := containerStarted(t, name); now != started {
				t.Errorf("at --approve medium the container was restarted: started %s, now %s", started, now)
			}

			out, errOut, code := runAgent(append(args, "--approve", "all")...)
			if out == "" {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			steps := stepEvents(t, out)
			if code != 1 || len(steps) != 5 {
				t.Fatalf("exit %d, %d steps (want 1: the hostile name fails)\n%s\n%s", code, len(steps), out, errOut)
			}
			for i, want := range []struct{ status, risk, in string }{
				{"ok", "safe", name}, {"ok", "safe", "tick "}, {"ok", "high", ""}, {"ok", "safe", `"running": true`},
				{"error", "", "not a container name"},
			} {
				s := steps[i]
				if s["status"] != want.status || want.risk != "" && s["risk"] != want.risk || !strings.Contains(fmt.Sprint(s["output"]), want.in) {
					t.Errorf("step %d: %v %v, want %s %s with %q: %v", i+1, s["status"], s["risk"], want.status, want.risk, want.in, s["output"])
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("a hostile container name ran as shell text")
			}
			if now := containerStarted(t, name); now == started {
				t.Errorf("with --approve all the container was not restarted (started %s)", now)
			}
			// written into the plan, it is refused before anything runs
			bad := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(bad, []byte(strings.ReplaceAll(containerPlan, "{{evil}}", "web; touch "+marker)), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, errOut, code := runAgent("-F", cfg, "--ssh-host="+host, "run", bad, "--var", "ctr="+name, "--approve", "medium"); code != 2 ||
				!strings.Contains(errOut, "bad.yaml:15: step 5 (container_logs)") || !strings.Contains(errOut, "is not a container name") {
				t.Errorf("hostile name in a plan: exit %d: %s", code, errOut)
			}

			srv.Push(
				testenv.Calls(testenv.Call("container_list", `{"all":true}`)),
				testenv.Calls(testenv.Call("container_restart", fmt.Sprintf(`{"name":%q,"timeout":5}`, name))),
				testenv.Text("Restarted it."),
			)
			out, errOut, code = runAgent("-F", cfg, "--ssh-host="+host, "--mode", "react", "--approve", "all", "--json",
				"-c", "restart the test container")
			steps = stepEvents(t, out)
			if code != 0 || len(steps) != 2 || steps[0]["status"] != "ok" || steps[1]["status"] != "ok" || steps[1]["risk"] != "high" {
				t.Fatalf("agent -c: exit %d, steps %v\n%s", code, steps, errOut)
			}
			reqs := srv.Requests()
			if last := string(reqs[len(reqs)-2].Body); !strings.Contains(last, name) {
				t.Errorf("the model was not shown the listing: %s", last)
			}
		})
	}
}

// containerStarted is when podman last started the container.
func containerStarted(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("podman", "inspect", "--format", "{{.State.StartedAt}}", name).CombinedOutput()
	if err != nil {
		t.Fatalf("podman inspect %s: %v: %s", name, err, out)
	}
	return strings.TrimSpace(string(out))
}

// stepEvents are the step events of a --json stream.
func stepEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var steps []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if m["event"] == "step" {
			steps = append(steps, m)
		}
	}
	return steps
}
