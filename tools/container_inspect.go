package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/autoshell/agent/redact"
)

// ContainerInfo is container_inspect's result (Output.Value): what an
// operator looks at first, from `docker inspect` or `podman inspect`.
type ContainerInfo struct {
	Name          string            `json:"name"`
	ID            string            `json:"id"`
	Image         string            `json:"image"`
	Status        string            `json:"status"`
	Running       bool              `json:"running"`
	ExitCode      int               `json:"exit_code"`
	Error         string            `json:"error,omitempty"`
	RestartCount  int               `json:"restart_count"`
	RestartPolicy string            `json:"restart_policy,omitempty"`
	StartedAt     string            `json:"started_at"`
	FinishedAt    string            `json:"finished_at,omitempty"`
	Health        string            `json:"health,omitempty"`
	Mounts        []string          `json:"mounts,omitempty"` // "SOURCE -> DEST (rw|ro)"
	Env           map[string]string `json:"env,omitempty"`    // secret-looking values redacted
	Ports         []string          `json:"ports,omitempty"`
}

// inspectJSON is the part of docker's and podman's inspect output read.
type inspectJSON struct {
	ID        string `json:"Id"`
	Name      string
	ImageName string // podman
	Config    struct {
		Image string
		Env   []string
	}
	State struct {
		Status     string
		Running    bool
		ExitCode   int
		Error      string
		StartedAt  string
		FinishedAt string
		Health     *struct{ Status string }
		// podman 4 names it Healthcheck
		Healthcheck *struct{ Status string }
	}
	RestartCount int
	HostConfig   struct {
		RestartPolicy struct{ Name string }
	}
	Mounts []struct {
		Type        string
		Source      string
		Destination string
		RW          bool
	}
	NetworkSettings struct {
		Ports map[string][]struct{ HostIP, HostPort string }
	}
}

// maxEnvValue bounds each environment value shown.
const maxEnvValue = 200

// ParseContainerInspect reads `docker inspect` / `podman inspect` output
// (a JSON array of one container) into a ContainerInfo, secrets redacted:
// the whole value of a variable whose name says secret (redact.SecretKey:
// PASSWORD, TOKEN, API_KEY, …), and what redact.String finds in the
// others.
func ParseContainerInspect(out string) (*ContainerInfo, error) {
	var all []inspectJSON
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		return nil, fmt.Errorf("inspect output is not a JSON array: %w", err)
	}
	if len(all) != 1 {
		return nil, fmt.Errorf("inspect output holds %d containers, want 1", len(all))
	}
	c := all[0]
	info := &ContainerInfo{
		Name: strings.TrimPrefix(c.Name, "/"), ID: c.ID, Image: c.Config.Image,
		Status: c.State.Status, Running: c.State.Running, ExitCode: c.State.ExitCode, Error: c.State.Error,
		RestartCount: c.RestartCount, RestartPolicy: c.HostConfig.RestartPolicy.Name,
		StartedAt: c.State.StartedAt, FinishedAt: c.State.FinishedAt,
	}
	if len(info.ID) > 12 {
		info.ID = info.ID[:12]
	}
	if c.ImageName != "" {
		info.Image = c.ImageName
	}
	if strings.HasPrefix(info.FinishedAt, "0001-01-01") {
		info.FinishedAt = ""
	}
	switch {
	case c.State.Health != nil && c.State.Health.Status != "":
		info.Health = c.State.Health.Status
	case c.State.Healthcheck != nil && c.State.Healthcheck.Status != "":
		info.Health = c.State.Healthcheck.Status
	}
	for _, m := range c.Mounts {
		mode := "ro"
		if m.RW {
			mode = "rw"
		}
		info.Mounts = append(info.Mounts, fmt.Sprintf("%s -> %s (%s, %s)", m.Source, m.Destination, m.Type, mode))
	}
	for _, kv := range c.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		if info.Env == nil {
			info.Env = map[string]string{}
		}
		switch {
		case redact.SecretKey(k):
			v = redact.Redacted
		default:
			v = redact.String(v)
			if len(v) > maxEnvValue {
				v = clipRunesBytes(v, maxEnvValue) + "…"
			}
		}
		info.Env[k] = v
	}
	for port, binds := range c.NetworkSettings.Ports {
		if len(binds) == 0 {
			info.Ports = append(info.Ports, port)
		}
		for _, b := range binds {
			info.Ports = append(info.Ports, fmt.Sprintf("%s:%s->%s", b.HostIP, b.HostPort, port))
		}
	}
	sort.Strings(info.Ports)
	return info, nil
}

// clipRunesBytes is s cut to at most n bytes at a rune boundary.
func clipRunesBytes(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// summarizeInspect replaces inspect's raw JSON (which holds every
// environment value) with the redacted summary.
func summarizeInspect(out Output) Output {
	info, err := ParseContainerInspect(out.Stdout)
	if err != nil {
		return ErrorOutput("%s: %v", ContainerInspectName, err)
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return ErrorOutput("%s: %v", ContainerInspectName, err)
	}
	res := TextOutput(string(b) + "\n")
	res.Value = info
	return res
}
