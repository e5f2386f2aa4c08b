package tools

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const stat1 = "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0 0 0\nintr 1 2\n"
const stat2 = "cpu  150 0 150 900 0 0 0 0 0 0\ncpu0 75 0 75 450 0 0 0 0 0 0\ncpu1 75 0 75 450 0 0 0 0 0 0\n"
const meminfo = "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    250 kB\nSwapTotal: 100 kB\nSwapFree: 40 kB\n"
const df = "Filesystem     1024-blocks    Used Available Capacity Mounted on\n/dev/sda1         1000     400       600      40% /\nmy disk 10 5 5 50% /mnt/my mount\ngarbage\n"

func TestParseSysMonitor(t *testing.T) {
	out := stat1 + sysSep + "\n" + stat2 + sysSep + "\n" + meminfo + sysSep + "\n" + df
	st, err := ParseSysMonitor("all", out, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPU.UsagePercent != 50 || st.CPU.Cores != 2 {
		t.Errorf("cpu %+v", st.CPU)
	}
	if m := st.Memory; m.UsedKB != 750 || m.UsedPercent != 75 || m.SwapUsedKB != 60 {
		t.Errorf("memory %+v", m)
	}
	if len(st.Disk) != 2 || st.Disk[1].Filesystem != "my disk" || st.Disk[1].Mount != "/mnt/my mount" || st.Disk[0].UsedPercent != 40 {
		t.Errorf("disk %+v", st.Disk)
	}
	for _, bad := range []string{"", "cpu 1 2\n" + sysSep + "\n", strings.Repeat(sysSep+"\n", 3)} {
		if _, err := ParseSysMonitor("all", bad, 0); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ParseMeminfo("MemFree: 3 kB\n"); err == nil {
		t.Error("meminfo without MemTotal")
	}
	if m, err := ParseMeminfo("MemTotal: 100 kB\nMemFree: 10 kB\nBuffers: 10 kB\nCached: 10 kB\n"); err != nil || m.AvailableKB != 30 {
		t.Errorf("old kernel: %+v %v", m, err)
	}
	if _, err := CPUUsage(CPUTimes{Total: 10, Idle: 5}, CPUTimes{Total: 5, Idle: 5}); err == nil {
		t.Error("backwards counters")
	}
}

func TestSysMonitorLive(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			reg := Default(testPolicy(), WithCPUInterval(50*time.Millisecond))
			out, err := reg.Run(ctxT(t), tg.tr, SysMonitorName, map[string]any{"metric": "all"})
			if err != nil || out.IsError {
				t.Fatal(out, err)
			}
			st := out.Value.(*SysStats)
			if st.CPU == nil || st.Memory == nil || len(st.Disk) == 0 || !strings.HasPrefix(out.Stdout, `{"cpu":`) {
				t.Errorf("%s", out.Stdout)
			}
			out, _ = reg.Run(ctxT(t), tg.tr, SysMonitorName, map[string]any{"metric": "memory"})
			if st := out.Value.(*SysStats); st.CPU != nil || st.Memory == nil || st.Disk != nil {
				t.Errorf("%s", out.Stdout)
			}
		})
	}
}

func FuzzSysMonitorParse(f *testing.F) {
	f.Add(stat1, stat2, meminfo, df)
	f.Add("cpu 1 2 3", "cpu 0 0 0 0", "MemTotal: x", "a 1 2 3 4% /")
	f.Fuzz(func(t *testing.T, a, b, m, d string) {
		out := a + sysSep + "\n" + b + sysSep + "\n" + m + sysSep + "\n" + d
		st, err := ParseSysMonitor("all", out, time.Second)
		if err == nil && (st.CPU.UsagePercent < 0 || st.CPU.UsagePercent > 100 || st.Memory.UsedPercent > 100) {
			t.Fatalf("out of range: %+v %+v", st.CPU, st.Memory)
		}
	})
}

func FuzzEditFile(f *testing.F) {
	f.Add("echo 1\necho 1\n", "echo 1", "echo 2", false, 0)
	f.Add("a.b.c", `\.`, `$0\0`, true, -1)
	f.Add("aaa", "a*", "x", true, 2)
	f.Add("xy", `(?P<a>x)|(?P<a>y)`, `[$a][${a}][$1$$][$2x][${2}x][$01][$9][${a`, true, -1)
	f.Add("k=v", `(\w)=(?P<val>\w)`, `\g<val>=\1 $é $ ${}`, true, 0)
	f.Fuzz(func(t *testing.T, content, pattern, repl string, regex bool, count int) {
		got, n, err := Edit(content, pattern, repl, regex, count)
		if err != nil {
			if n != 0 || got != "" {
				t.Fatalf("error with result %q %d", got, n)
			}
			return
		}
		if n < 1 || (count == 0 && n != 1) || (count > 0 && n > count) {
			t.Fatalf("count %d: %d replacements", count, n)
		}
		if regex {
			// The template expansion must match regexp's own.
			re := regexp.MustCompile(pattern)
			locs := re.FindAllStringSubmatchIndex(content, -1)
			if count > 0 && count < len(locs) {
				locs = locs[:count]
			}
			var want []byte
			last := 0
			for _, m := range locs {
				want = append(want, content[last:m[0]]...)
				want = re.ExpandString(want, pythonGroups(repl), content, m)
				last = m[1]
			}
			if want = append(want, content[last:]...); string(want) != got || n != len(locs) {
				t.Fatalf("regex: got %q, want %q", got, want)
			}
		} else {
			all := strings.Count(content, pattern)
			if count == -1 && (n != all || got != strings.ReplaceAll(content, pattern, repl)) {
				t.Fatalf("literal all: n %d of %d", n, all)
			}
			if got != strings.Replace(content, pattern, repl, n) {
				t.Fatalf("literal: %q", got)
			}
		}
	})
}
