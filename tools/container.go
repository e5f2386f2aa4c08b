package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/autoshell/agent/transport"
)

// Names of the container tools (the OpsAI spec's container worker).
const (
	ContainerListName    = "container_list"
	ContainerLogsName    = "container_logs"
	ContainerInspectName = "container_inspect"
	ContainerStartName   = "container_start"
	ContainerStopName    = "container_stop"
	ContainerRestartName = "container_restart"
)

// IsContainerTool reports whether name is a container tool: its command
// line is agent's own (a fixed docker/podman argv, names checked), and
// podman mounts its storage on every call, which no Landlock-confined
// process may do, so the kernel does not confine it (package confine).
func IsContainerTool(name string) bool {
	switch name {
	case ContainerListName, ContainerLogsName, ContainerInspectName, ContainerStartName, ContainerStopName, ContainerRestartName:
		return true
	}
	return false
}

// Bounds of the container tools' parameters.
const (
	DefaultLogTail  = 100
	MaxLogTail      = 10000
	MaxStopTimeout  = 600
	containerNoCLI  = "neither docker nor podman is on the target's PATH: the container tools need one of them"
	containerStatus = 127 // the exit status the line gives when no CLI is found
)

// containerName is Docker's and Podman's rule for names, which IDs also
// fit: a name is a parameter, never shell text, and anything else (a
// space, a ';', a leading '-') is refused before a command is built.
var containerName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,252}$`)

// templateRef is a {{ variable }} reference: a plan is validated before
// its variables are known, so a reference stands for a valid part of a
// name there (the resolved name is checked again before the step runs,
// and is a quoted word either way).
var templateRef = regexp.MustCompile(`\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}`)

func checkContainer(name string) error {
	if name == "" {
		return errors.New("name is empty: give a container name or ID (container_list shows them)")
	}
	if !containerName.MatchString(templateRef.ReplaceAllString(name, "x")) {
		return fmt.Errorf("name %q is not a container name or ID (letters, digits, '_', '.', '-'; starting with a letter or digit)", name)
	}
	return nil
}

// ContainerListParams are container_list's parameters.
type ContainerListParams struct {
	All bool `json:"all,omitempty" description:"Stopped containers too."`
}

// ContainerLogsParams are container_logs' parameters.
type ContainerLogsParams struct {
	Name  string `json:"name" description:"Container name or ID."`
	Tail  int    `json:"tail,omitempty" description:"Last N lines; default 100."`
	Since string `json:"since,omitempty" description:"Only newer than this: a duration (10m, 2h) or an RFC 3339 time."`
}

func (p *ContainerLogsParams) check() error {
	if err := checkContainer(p.Name); err != nil {
		return err
	}
	if p.Tail < 0 || p.Tail > MaxLogTail {
		return fmt.Errorf("tail %d is not between 1 and %d", p.Tail, MaxLogTail)
	}
	if p.Since == "" {
		return nil
	}
	if d, err := time.ParseDuration(p.Since); err == nil {
		if d <= 0 {
			return fmt.Errorf("since %q must be a positive duration", p.Since)
		}
		return nil
	}
	if _, err := time.Parse(time.RFC3339, p.Since); err != nil {
		return fmt.Errorf("since %q is neither a duration (10m, 2h30m) nor an RFC 3339 time (2024-05-01T10:00:00Z)", p.Since)
	}
	return nil
}

// ContainerNameParams are container_inspect's and container_start's
// parameters.
type ContainerNameParams struct {
	Name string `json:"name" description:"Container name or ID."`
}

func (p *ContainerNameParams) check() error { return checkContainer(p.Name) }

// ContainerStopParams are container_stop's and container_restart's
// parameters.
type ContainerStopParams struct {
	Name    string `json:"name" description:"Container name or ID."`
	Timeout *int   `json:"timeout,omitempty" description:"Seconds to wait for it to stop before killing it; default the CLI's (10)."`
}

func (p *ContainerStopParams) check() error {
	if err := checkContainer(p.Name); err != nil {
		return err
	}
	if p.Timeout != nil && (*p.Timeout < 0 || *p.Timeout > MaxStopTimeout) {
		return fmt.Errorf("timeout %d is not between 0 and %d seconds", *p.Timeout, MaxStopTimeout)
	}
	return nil
}

// containerLine runs args (quoted, after the CLI's name) with docker when
// the target has it, else podman, else fails with a message the model can
// act on. When both are there, docker is used only if its daemon answers
// (a docker CLI without an engine beside a working podman is common). Both
// branches name their program literally, so the risk classifier sees
// exactly what runs.
func containerLine(args ...string) string { return containerLines(args, args) }

// containerLines is containerLine with docker's and podman's own argv.
func containerLines(docker, podman []string) string {
	return "if " + containerDocker + "; then docker " + QuoteArgv(docker) +
		"; elif command -v podman >/dev/null 2>&1; then podman " + QuoteArgv(podman) +
		"; else echo " + Quote(containerNoCLI) + fmt.Sprintf(" >&2; exit %d; fi", containerStatus)
}

// containerDocker is the shell condition under which docker is the CLI.
const containerDocker = "command -v docker >/dev/null 2>&1 && { ! command -v podman >/dev/null 2>&1 || docker version >/dev/null 2>&1; }"

func buildContainerList(p ContainerListParams) (string, error) {
	args := []string{"ps"}
	if p.All {
		args = append(args, "--all")
	}
	return containerLine(append(args, "--format", "table {{.Names}}\t{{.Image}}\t{{.Status}}\t{{.Ports}}")...), nil
}

func buildContainerLogs(p ContainerLogsParams) (string, error) {
	tail := p.Tail
	if tail == 0 {
		tail = DefaultLogTail
	}
	args := []string{"logs", "--tail", fmt.Sprint(tail)}
	if p.Since != "" {
		args = append(args, "--since", p.Since)
	}
	// The container's own stderr is log lines, not the tool's error: both
	// streams come as one, in order.
	return containerLine(append(args, "--", p.Name)...) + " 2>&1", nil
}

// inspectFormat is what container_inspect asks for: the fields
// ParseContainerInspect reads but the environment, as one JSON array
// (ID: the ID field's name, docker's Id, podman's ID). The environment
// (and command line, labels) holds the container's secrets, which no
// redactor is trusted to find: inspect without a format that leaves them
// out is high (safety/inspect.go).
func inspectFormat(id string) string {
	return `[{"Id":{{json .` + id + `}},"Name":{{json .Name}},"Config":{"Image":{{json .Config.Image}}},` +
		`"State":{{json .State}},"RestartCount":{{json .RestartCount}},"HostConfig":{"RestartPolicy":{{json .HostConfig.RestartPolicy}}},` +
		`"Mounts":{{json .Mounts}},"NetworkSettings":{"Ports":{{json .NetworkSettings.Ports}}}}]`
}

func buildContainerInspect(p ContainerNameParams) (string, error) {
	argv := func(id string) []string {
		return []string{"inspect", "--type", "container", "--format", inspectFormat(id), "--", p.Name}
	}
	return containerLines(argv("Id"), argv("ID")), nil
}

func buildContainerStart(p ContainerNameParams) (string, error) {
	return containerLine("start", "--", p.Name), nil
}

func stopLine(verb string) func(ContainerStopParams) (string, error) {
	return func(p ContainerStopParams) (string, error) {
		args := []string{verb}
		if p.Timeout != nil {
			args = append(args, "--time", fmt.Sprint(*p.Timeout))
		}
		return containerLine(append(args, "--", p.Name)...), nil
	}
}

// containerTool is a container tool: a structured command (Commander, so
// the classifier rates the docker/podman line) whose output may be
// rewritten for the model (inspect's summary).
type containerTool[P any] struct {
	*shellTool[P]
	post func(Output) Output
}

func newContainerTool[P any](c *config, name, desc string, build func(P) (string, error), post func(Output) Output) *containerTool[P] {
	return &containerTool[P]{shellTool: newShellTool(c, name, desc, build), post: post}
}

// Run builds the command line, runs it and rewrites its output.
func (t *containerTool[P]) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

func (t *containerTool[P]) prepare(self Tool, raw json.RawMessage) (binding, error) {
	return t.base.prepare(self, raw)
}

func (t *containerTool[P]) commandLine(p P) (string, error) { return t.shellTool.commandLine(p) }

func (t *containerTool[P]) run(ctx context.Context, tr transport.Transport, p P) (Output, error) {
	line, err := t.shellTool.commandLine(p)
	if err != nil {
		return invalid(t.name, err), nil
	}
	out, err := shellCall{line: line, timeout: t.timeout}.run(ctx, tr)
	if err != nil {
		return out, err
	}
	if out.ExitCode == containerStatus && strings.Contains(out.Stderr, containerNoCLI) {
		return ErrorOutput("%s: %s", t.name, containerNoCLI), nil
	}
	if t.post != nil && !out.IsError {
		out = t.post(out)
	}
	return out, nil
}

func newContainerList(c *config) *containerTool[ContainerListParams] {
	return newContainerTool(c, ContainerListName,
		"List the target's containers (docker or podman): name, image, status, ports.", buildContainerList, nil)
}

func newContainerLogs(c *config) *containerTool[ContainerLogsParams] {
	return newContainerTool(c, ContainerLogsName,
		"A container's latest log lines (stdout and stderr together).", buildContainerLogs, nil)
}

func newContainerInspect(c *config) *containerTool[ContainerNameParams] {
	return newContainerTool(c, ContainerInspectName,
		"A container's state, restart count, start time, health, mounts and environment names (secret values redacted).",
		buildContainerInspect, summarizeInspect)
}

func newContainerStart(c *config) *containerTool[ContainerNameParams] {
	return newContainerTool(c, ContainerStartName, "Start a stopped container.", buildContainerStart, nil)
}

func newContainerStop(c *config) *containerTool[ContainerStopParams] {
	return newContainerTool(c, ContainerStopName, "Stop a running container.", stopLine("stop"), nil)
}

func newContainerRestart(c *config) *containerTool[ContainerStopParams] {
	return newContainerTool(c, ContainerRestartName, "Restart a container.", stopLine("restart"), nil)
}
