package tools

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	"github.com/autoshell/agent/transport/ssh"
)

// containerTargets are this machine and a real OpenSSH sshd whose sessions
// get the podman configuration.
func containerTargets(t *testing.T, p *testenv.Podman) []target {
	t.Helper()
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: p.SSHDEnv()})
	h := d.Host
	cfg := &ssh.HostConfig{
		Alias: h.Alias, HostName: "127.0.0.1", Port: h.Port, User: h.User,
		IdentityFiles: []string{h.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		ConnectTimeout: 10 * time.Second, StrictHostKeyChecking: "yes", UserKnownHostsFiles: []string{h.KnownHosts},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := ssh.Dial(ctx, cfg, ssh.Options{})
	if err != nil {
		t.Fatalf("dial sshd: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return []target{{"local", lt, ""}, {"sshd", st, ""}}
}

func runTool(t *testing.T, tr transport.Transport, reg *Registry, name string, params map[string]any) Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := reg.Run(ctx, tr, name, params)
	if err != nil {
		t.Fatalf("%s %v: %v", name, params, err)
	}
	return out
}

// TestContainerTools runs every container tool against a real podman
// container, on this machine and over real sshd: list, logs, inspect
// (secrets redacted), restart (started-at changes), stop, start, an
// unknown container.
func TestContainerTools(t *testing.T) {
	p := testenv.StartPodman(t)
	data := t.TempDir()
	reg := Default(testPolicy())
	for _, tg := range containerTargets(t, p) {
		t.Run(tg.name, func(t *testing.T) {
			name := p.RunContainer(t, "-e", "API_TOKEN=s3cr3t-value-77", "-e", "MODE=prod", "-v", data+":/data:ro")

			out := runTool(t, tg.tr, reg, ContainerListName, map[string]any{})
			if out.IsError || !strings.Contains(out.Stdout, name) || !strings.Contains(out.Stdout, testenv.PodmanImage) ||
				!strings.Contains(out.Stdout, "NAMES") || !strings.Contains(out.Stdout, "Up ") {
				t.Fatalf("container_list: %+v", out)
			}

			deadline := time.Now().Add(time.Minute)
			for {
				out = runTool(t, tg.tr, reg, ContainerLogsName, map[string]any{"name": name, "tail": 1})
				if out.IsError {
					t.Fatalf("container_logs: %+v", out)
				}
				if strings.HasPrefix(out.Stdout, "tick ") || time.Now().After(deadline) {
					break
				}
			}
			if lines := strings.Split(strings.TrimSpace(out.Stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "tick ") {
				t.Errorf("container_logs tail 1: %q", out.Stdout)
			}
			out = runTool(t, tg.tr, reg, ContainerLogsName, map[string]any{"name": name, "since": "10m"})
			if out.IsError || !strings.Contains(out.Stdout, "tick 1\n") {
				t.Errorf("container_logs since 10m: %+v", out)
			}

			info := inspect(t, tg.tr, reg, name)
			if !info.Running || info.Status != "running" || info.Name != name || info.StartedAt == "" {
				t.Errorf("inspect: %+v", info)
			}
			// The environment holds the container's secrets: the tool
			// does not ask for it (issue 26; safety/inspect.go).
			if info.Env != nil {
				t.Errorf("inspect env: %v, want none asked for", info.Env)
			}
			if len(info.Mounts) != 1 || !strings.Contains(info.Mounts[0], data+" -> /data") || !strings.HasSuffix(info.Mounts[0], "ro)") {
				t.Errorf("inspect mounts: %v", info.Mounts)
			}

			timeout := 5
			out = runTool(t, tg.tr, reg, ContainerRestartName, map[string]any{"name": name, "timeout": timeout})
			if out.IsError {
				t.Fatalf("container_restart: %+v", out)
			}
			after := inspect(t, tg.tr, reg, name)
			if after.StartedAt == info.StartedAt || !after.Running {
				t.Errorf("restart: started_at %q → %q, running %v", info.StartedAt, after.StartedAt, after.Running)
			}

			if out = runTool(t, tg.tr, reg, ContainerStopName, map[string]any{"name": name, "timeout": 5}); out.IsError {
				t.Fatalf("container_stop: %+v", out)
			}
			if out = runTool(t, tg.tr, reg, ContainerListName, map[string]any{}); strings.Contains(out.Stdout, name) {
				t.Errorf("a stopped container is listed without all: %q", out.Stdout)
			}
			if out = runTool(t, tg.tr, reg, ContainerListName, map[string]any{"all": true}); !strings.Contains(out.Stdout, name) ||
				!strings.Contains(out.Stdout, "Exited") {
				t.Errorf("all: the stopped container is not listed as exited: %q", out.Stdout)
			}
			if out = runTool(t, tg.tr, reg, ContainerStartName, map[string]any{"name": name}); out.IsError {
				t.Fatalf("container_start: %+v", out)
			}
			if info := inspect(t, tg.tr, reg, name); !info.Running {
				t.Errorf("not running after container_start: %+v", info)
			}

			for _, tool := range []string{ContainerLogsName, ContainerInspectName, ContainerRestartName, ContainerStartName} {
				out = runTool(t, tg.tr, reg, tool, map[string]any{"name": "agent-no-such-container"})
				if !out.IsError || !strings.Contains(strings.ToLower(out.Observation), "no such") {
					t.Errorf("%s of an unknown container: %+v", tool, out)
				}
			}
		})
	}
}

func inspect(t *testing.T, tr transport.Transport, reg *Registry, name string) *ContainerInfo {
	t.Helper()
	out := runTool(t, tr, reg, ContainerInspectName, map[string]any{"name": name})
	info, ok := out.Value.(*ContainerInfo)
	if out.IsError || !ok {
		t.Fatalf("container_inspect: %+v", out)
	}
	if strings.Contains(out.Observation, "s3cr3t-value-77") || strings.Contains(out.Stdout, "s3cr3t-value-77") {
		t.Errorf("inspect shows a secret value: %s", out.Observation)
	}
	return info
}

// TestContainerNoCLI: a target with neither docker nor podman gets a tool
// error naming both.
func TestContainerNoCLI(t *testing.T) {
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	t.Setenv("PATH", "/nonexistent:"+t.TempDir())
	// sh itself must still be found: the local transport runs /bin/sh.
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	reg := Default(testPolicy())
	out := runTool(t, tr, reg, ContainerListName, map[string]any{"all": true})
	if !out.IsError || !strings.Contains(out.Observation, "neither docker nor podman") {
		t.Errorf("no CLI: %+v", out)
	}
}

// TestContainerParams: bad input is refused before anything runs, names
// are never shell text, and the classifier rates each tool's line.
func TestContainerParams(t *testing.T) {
	reg := Default(testPolicy())
	for _, tc := range []struct {
		tool   string
		params map[string]any
		want   string
	}{
		{ContainerLogsName, map[string]any{"name": "web; rm -rf ~"}, "not a container name"},
		{ContainerLogsName, map[string]any{"name": "$(reboot)"}, "not a container name"},
		{ContainerLogsName, map[string]any{"name": "-f"}, "not a container name"},
		{ContainerLogsName, map[string]any{"name": ""}, "name is empty"},
		{ContainerLogsName, map[string]any{}, `missing required parameter "name"`},
		{ContainerLogsName, map[string]any{"name": "web", "tail": -1}, "tail -1"},
		{ContainerLogsName, map[string]any{"name": "web", "tail": 1 << 30}, "tail"},
		{ContainerLogsName, map[string]any{"name": "web", "since": "yesterday; id"}, "neither a duration"},
		{ContainerLogsName, map[string]any{"name": "web", "since": "-5m"}, "positive"},
		{ContainerInspectName, map[string]any{"name": "a b"}, "not a container name"},
		{ContainerStopName, map[string]any{"name": "web", "timeout": -3}, "timeout"},
		{ContainerRestartName, map[string]any{"name": "web", "timeout": "soon"}, "timeout"},
		{ContainerListName, map[string]any{"all": "maybe"}, "all"},
		{ContainerStartName, map[string]any{"name": "web", "force": true}, "force"},
	} {
		err := reg.Validate(tc.tool, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want an error with %q", tc.tool, tc.params, err, tc.want)
		}
	}

	policy := safety.DefaultPolicy()
	for _, tc := range []struct {
		tool   string
		params map[string]any
		level  safety.Level
	}{
		{ContainerListName, map[string]any{"all": true}, safety.Safe},
		{ContainerLogsName, map[string]any{"name": "web", "tail": 5, "since": "2024-05-01T10:00:00Z"}, safety.Safe},
		{ContainerInspectName, map[string]any{"name": "web"}, safety.Safe},
		{ContainerStartName, map[string]any{"name": "web"}, safety.High},
		{ContainerStopName, map[string]any{"name": "web", "timeout": 3}, safety.High},
		{ContainerRestartName, map[string]any{"name": "web"}, safety.High},
	} {
		call, err := reg.Prepare(tc.tool, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		line, ok, err := call.CommandLine()
		if err != nil || !ok {
			t.Fatalf("%s: no command line: %v", tc.tool, err)
		}
		if got := policy.ClassifyCommand(line); got.Level != tc.level {
			t.Errorf("%s: %s is %v (%v), want %v", tc.tool, line, got.Level, got.Reasons, tc.level)
		}
	}
}

// FuzzContainerName: whatever name the model sends, the line either is
// refused or holds the name as one quoted word, and stays no worse than
// the tool's own level.
func FuzzContainerName(f *testing.F) {
	for _, s := range []string{"web", "web; rm -rf ~", "a'b", "$(id)", "-rf", "x\ny", "名前", "a.b-c_d"} {
		f.Add(s)
	}
	reg := Default(safety.DefaultPolicy())
	policy := safety.DefaultPolicy()
	f.Fuzz(func(t *testing.T, name string) {
		call, err := reg.Prepare(ContainerLogsName, map[string]any{"name": name})
		if err != nil {
			return
		}
		line, _, err := call.CommandLine()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, " -- "+Quote(name)+"; ") {
			t.Fatalf("name %q is not one word in %s", name, line)
		}
		if a := policy.ClassifyCommand(line); a.Level != safety.Safe {
			t.Fatalf("%s is %v: %v", line, a.Level, a.Reasons)
		}
	})
}
