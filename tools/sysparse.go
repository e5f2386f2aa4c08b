package tools

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CPUTimes is the aggregate "cpu" line of /proc/stat, in clock ticks.
type CPUTimes struct {
	Total, Idle uint64
	Cores       int
}

// ParseProcStat parses /proc/stat: the aggregate cpu line (user nice
// system idle iowait irq softirq steal; guest time is already in user) and
// the number of cpuN lines.
func ParseProcStat(s string) (CPUTimes, error) {
	var t CPUTimes
	found := false
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				t.Cores++
			}
			continue
		}
		if len(f) < 5 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line has %d fields, want at least 4 numbers", len(f)-1)
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= 8; i++ {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i, err)
			}
			v[i-1] = n
		}
		for _, n := range v {
			t.Total += n
		}
		if t.Total < v[0] { // overflow: nonsense input
			return CPUTimes{}, errors.New("/proc/stat: cpu times overflow")
		}
		t.Idle = v[3] + v[4]
		found = true
	}
	if !found {
		return CPUTimes{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	return t, nil
}

// CPUUsage is the busy percentage between two samples.
func CPUUsage(a, b CPUTimes) (float64, error) {
	if b.Total < a.Total || b.Idle < a.Idle {
		return 0, errors.New("/proc/stat: cpu counters went backwards")
	}
	dt, di := b.Total-a.Total, b.Idle-a.Idle
	if dt == 0 {
		return 0, nil
	}
	if di > dt {
		return 0, errors.New("/proc/stat: idle time grew more than total time")
	}
	return round2(100 * float64(dt-di) / float64(dt)), nil
}

// MemStats is memory from /proc/meminfo, in KiB.
type MemStats struct {
	TotalKB     uint64  `json:"total_kb"`
	AvailableKB uint64  `json:"available_kb"`
	UsedKB      uint64  `json:"used_kb"`
	UsedPercent float64 `json:"used_percent"`
	SwapTotalKB uint64  `json:"swap_total_kb"`
	SwapUsedKB  uint64  `json:"swap_used_kb"`
}

// ParseMeminfo parses /proc/meminfo. MemAvailable is used when present,
// else MemFree+Buffers+Cached (kernels before 3.14).
func ParseMeminfo(s string) (MemStats, error) {
	kv := map[string]uint64{}
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		kv[strings.TrimSpace(k)] = n
	}
	total, ok := kv["MemTotal"]
	if !ok || total == 0 {
		return MemStats{}, errors.New("/proc/meminfo: no MemTotal")
	}
	avail, ok := kv["MemAvailable"]
	if !ok {
		avail = kv["MemFree"] + kv["Buffers"] + kv["Cached"]
	}
	avail = min(avail, total)
	m := MemStats{TotalKB: total, AvailableKB: avail, UsedKB: total - avail, SwapTotalKB: kv["SwapTotal"]}
	m.SwapUsedKB = m.SwapTotalKB - min(kv["SwapFree"], m.SwapTotalKB)
	m.UsedPercent = round2(100 * float64(m.UsedKB) / float64(total))
	return m, nil
}

// DiskStats is one line of df -P -k.
type DiskStats struct {
	Filesystem  string  `json:"filesystem"`
	Mount       string  `json:"mount"`
	SizeKB      uint64  `json:"size_kb"`
	UsedKB      uint64  `json:"used_kb"`
	AvailableKB uint64  `json:"available_kb"`
	UsedPercent float64 `json:"used_percent"`
}

// ParseDF parses the output of df -P -k. Names with spaces are handled by
// finding the three numbers and the percentage that separate the file
// system from the mount point; lines that do not fit are skipped.
func ParseDF(s string) ([]DiskStats, error) {
	var out []DiskStats
	header := false
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !header && f[0] == "Filesystem" {
			header = true
			continue
		}
		for i := 1; i+4 < len(f); i++ {
			size, e1 := strconv.ParseUint(f[i], 10, 64)
			used, e2 := strconv.ParseUint(f[i+1], 10, 64)
			avail, e3 := strconv.ParseUint(f[i+2], 10, 64)
			pct, e4 := strconv.ParseFloat(strings.TrimSuffix(f[i+3], "%"), 64)
			if e1 != nil || e2 != nil || e3 != nil || e4 != nil || !strings.HasSuffix(f[i+3], "%") {
				continue
			}
			out = append(out, DiskStats{Filesystem: strings.Join(f[:i], " "), Mount: strings.Join(f[i+4:], " "),
				SizeKB: size, UsedKB: used, AvailableKB: avail, UsedPercent: pct})
			break
		}
	}
	if out == nil {
		return nil, errors.New("df: no file systems in the output")
	}
	return out, nil
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
