package safety

import (
	"strings"
	"testing"
)

// TestProcessAttributes: a tool that changes a running process's
// priority, I/O class, scheduling, affinity or limits is High; asking
// for them is safe; running a new command under them classifies the
// command, Medium only when it is raised above every other process.
func TestProcessAttributes(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		cmd    string
		want   Level
		reason string
	}{
		{`ionice -c3 -p 123`, High, "I/O priority of running processes"},
		{`ionice -c3 -P 123`, High, "I/O priority of running processes"},
		{`ionice -c3 -u 1000`, High, "I/O priority of running processes"},
		{`ionice -c 3 -p123`, High, "I/O priority of running processes"},
		{`ionice -tc3 -p 1 2 3`, High, "I/O priority of running processes"},
		{`ionice --class idle --pid 123`, High, "I/O priority of running processes"},
		{`ionice -n7 --pgid 9`, High, "I/O priority of running processes"},
		{`ionice -c3 -p "$(pgrep postgres)"`, High, "not statically resolvable"},
		{`timeout 5 ionice -c3 -p 1`, High, "I/O priority of running processes"},
		{`renice -n 5 -p 123`, High, "priority of running processes"},
		{`renice +19 -u www-data`, High, "priority of running processes"},
		{`taskset -p 0x1 123`, High, "CPU affinity of a running process"},
		{`taskset -cp 0 123`, High, "CPU affinity of a running process"},
		{`taskset --pid --cpu-list 0 123`, High, "CPU affinity of a running process"},
		{`chrt -p 99 123`, High, "scheduling of a running process"},
		{`chrt -i -p 0 123`, High, "scheduling of a running process"},
		{`prlimit --pid 123 --nofile=10`, High, "resource limits of a running process"},
		{`prlimit -p 123 -n1`, High, "resource limits of a running process"},
		{`cpulimit -p 123 -l 10`, High, "priority of running processes"},
		{`ionice -c1 -n0 du -sh /var`, Medium, "realtime I/O class"},
		{`chrt -f 99 du -sh /var`, Medium, "realtime scheduling"},
		{`chrt 99 du -sh /var`, Medium, "realtime scheduling"},
		{`nice -n -10 du -sh /var`, Medium, "raises the command's priority"},
		{`nice --5 du -sh /var`, Medium, "raises the command's priority"},
		{`ionice -c3 rm -rf /home/u/important`, High, "rm -r"},
		{`prlimit --nofile=1024 rm -rf /home/u/important`, High, "rm -r"},
		// asking, or running a new command lower
		{`ionice -p 123`, Safe, ""},
		{`ionice`, Safe, ""},
		{`taskset -p 123`, Safe, ""},
		{`chrt -p 123`, Safe, ""},
		{`chrt -m`, Safe, ""},
		{`prlimit --pid 123`, Safe, ""},
		{`prlimit`, Safe, ""},
		{`ionice -c3 du -sh /var`, Safe, ""},
		{`ionice -c2 -n7 du -sh /var`, Safe, ""},
		{`nice -n 10 du -sh /var`, Safe, ""},
		{`nice du -sh /var`, Safe, ""},
		{`taskset -c 0 du -sh /var`, Safe, ""},
		{`chrt -b 0 du -sh /var`, Safe, ""},
		{`prlimit --nofile=1024 ls`, Safe, ""},
	} {
		got := p.ClassifyCommand(tc.cmd)
		if got.Level != tc.want || !strings.Contains(strings.Join(got.Reasons, "\n"), tc.reason) {
			t.Errorf("%s = %s, want %s with %q", tc.cmd, got, tc.want, tc.reason)
		}
	}
}

// TestProcOptsBadInput: option words that are not static, clusters with
// values, "--" and lone dashes.
func TestProcOptsBadInput(t *testing.T) {
	st := func(vs ...string) []arg {
		var out []arg
		for _, v := range vs {
			out = append(out, arg{val: v, text: v, static: true})
		}
		return out
	}
	if _, _, ok := procOpts(append(st("-c"), arg{text: "$X"}), "c", nil); ok {
		t.Error("a non-static value was accepted")
	}
	uses, rest, ok := procOpts(st("-tc3", "--pid", "7", "--", "-x"), "c", []string{"--pid"})
	if !ok || rest != 4 || len(uses) != 3 || uses[1].val != "3" || uses[2].val != "7" {
		t.Errorf("procOpts = %+v %d %v", uses, rest, ok)
	}
	if uses, rest, ok := procOpts(st("-", "x"), "c", nil); !ok || rest != 0 || len(uses) != 0 {
		t.Errorf("lone dash: %+v %d %v", uses, rest, ok)
	}
	if uses, _, ok := procOpts(st("-c"), "c", nil); !ok || len(uses) != 1 || uses[0].val != "" {
		t.Errorf("value missing at the end: %+v %v", uses, ok)
	}
}
