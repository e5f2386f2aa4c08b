package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/autoshell/agent/transport"
)

// SysMonitorName is the name of the system metrics tool.
const SysMonitorName = "sys_monitor"

// SysMonitorParams are sys_monitor's parameters.
type SysMonitorParams struct {
	Metric string `json:"metric" enum:"cpu,memory,disk,all" description:"Which."`
}

// SysStats is sys_monitor's result (Output.Value) and, as JSON, its output.
type SysStats struct {
	CPU    *CPUStats   `json:"cpu,omitempty"`
	Memory *MemStats   `json:"memory,omitempty"`
	Disk   []DiskStats `json:"disk,omitempty"`
}

// CPUStats is the cpu part of SysStats.
type CPUStats struct {
	UsagePercent float64 `json:"usage_percent"`
	Cores        int     `json:"cores"`
	SampleMillis int64   `json:"sample_ms"`
}

// sysSep separates the sections of the sampling script's output.
const sysSep = "--agent-sys-monitor--"

// SysMonitor reads cpu, memory and disk use from a Linux target.
type SysMonitor struct {
	base[SysMonitorParams]
	interval time.Duration
}

// NewSysMonitor returns sys_monitor (WithCPUInterval applies).
func NewSysMonitor(opts ...Option) *SysMonitor { return newSysMonitor(newConfig(zeroPolicy, opts)) }

func newSysMonitor(c *config) *SysMonitor {
	return &SysMonitor{interval: c.cpuInterval, base: newBase[SysMonitorParams](SysMonitorName,
		"CPU, memory, disk usage of the target as JSON.")}
}

// script returns the shell script that prints what metric needs, in
// sections separated by sysSep: stat, stat, meminfo, df.
func (t *SysMonitor) script(metric string) string {
	all := metric == "all"
	s := []string{":", ":", ":", ":"}
	if all || metric == "cpu" {
		s[0], s[1] = "cat /proc/stat", fmt.Sprintf("sleep %.3f; cat /proc/stat", t.interval.Seconds())
	}
	if all || metric == "memory" {
		s[2] = "cat /proc/meminfo"
	}
	if all || metric == "disk" {
		s[3] = "df -P -k"
	}
	return strings.Join(s, "; echo "+sysSep+"; ")
}

// Run samples the target and returns JSON.
func (t *SysMonitor) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

// Touches reports that sys_monitor acts on no file: it reads /proc and
// df's output, which the risk classifier rates safe.
func (t *SysMonitor) Touches(raw json.RawMessage) (Effects, error) {
	_, err := t.params(raw)
	return Effects{}, err
}

func (t *SysMonitor) touches(SysMonitorParams) Effects { return Effects{} }

func (t *SysMonitor) run(ctx context.Context, tr transport.Transport, p SysMonitorParams) (Output, error) {
	res, err := tr.Run(ctx, transport.Command{Command: t.script(p.Metric), Timeout: time.Minute, CaptureLimit: 1 << 20})
	if err != nil {
		if infraError(ctx, err) {
			return Output{}, fmt.Errorf("%s: %w", t.name, err)
		}
		return ErrorOutput("%s: %v", t.name, err), nil
	}
	stats, err := ParseSysMonitor(p.Metric, res.Stdout, t.interval)
	if err != nil {
		msg := err.Error()
		if res.Stderr != "" {
			msg += "; stderr: " + strings.TrimSpace(res.Stderr)
		}
		return ErrorOutput("%s: %s (sys_monitor needs a Linux target with /proc)", t.name, msg), nil
	}
	b, err := json.Marshal(stats)
	if err != nil {
		return Output{}, fmt.Errorf("%s: %w", t.name, err)
	}
	out := TextOutput(string(b) + "\n")
	out.Value = stats
	return out, nil
}

// ParseSysMonitor parses the sampling script's output for metric.
func ParseSysMonitor(metric, out string, interval time.Duration) (*SysStats, error) {
	sec := strings.Split(out, sysSep+"\n")
	if len(sec) != 4 {
		return nil, fmt.Errorf("unexpected output: %d sections, want 4", len(sec))
	}
	var st SysStats
	all := metric == "all"
	if all || metric == "cpu" {
		s1, err := ParseProcStat(sec[0])
		if err != nil {
			return nil, err
		}
		s2, err := ParseProcStat(sec[1])
		if err != nil {
			return nil, err
		}
		u, err := CPUUsage(s1, s2)
		if err != nil {
			return nil, err
		}
		st.CPU = &CPUStats{UsagePercent: u, Cores: s2.Cores, SampleMillis: interval.Milliseconds()}
	}
	if all || metric == "memory" {
		m, err := ParseMeminfo(sec[2])
		if err != nil {
			return nil, err
		}
		st.Memory = &m
	}
	if all || metric == "disk" {
		d, err := ParseDF(sec[3])
		if err != nil {
			return nil, err
		}
		st.Disk = d
	}
	return &st, nil
}
