package confine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// BenchmarkLocalStep is the per-step cost of confinement on the local
// transport against the unconfined step, measured in pairs in the same
// loop (the machine is shared: pairs see the same load): a safe step's
// `true` unconfined, then started on a confined thread (what agent does
// locally), then through agent-launch reading rules computed once (what
// an SSH host, or a local command under sudo, runs), on a thread
// confined by the level's ruleset with --sandbox's stacked on it, and on
// a thread confined by Landlock alone (the safe step's seccomp filter's
// own cost: thread against it).
// Reported: the medians of each, the median of the paired overheads,
// their ratio to the unconfined step, and the load average.
func BenchmarkLocalStep(b *testing.B) {
	if confine.ABI() < 1 {
		b.Skip("the kernel has no Landlock")
	}
	home, _ := os.UserHomeDir()
	s := confine.Spec{NoRead: []string{home + "/.ssh", home + "/.aws", home + "/.gnupg", home + "/.config/agent", home + "/.bash_history", "/dev"},
		Public: []string{"*.pub", "known_hosts", "/dev/null", "/dev/pts"}, Devices: []string{"/dev/null", "/dev/zero"}}
	noFilter := confine.Compile(s)
	s.Syscalls = confine.SyscallsRead // a safe step's seccomp filter
	rs := confine.Compile(s)
	tr, err := local.New()
	if err != nil {
		b.Fatal(err)
	}
	r, err := confine.NewRestrictor(rs)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rNo, err := confine.NewRestrictor(noFilter)
	if err != nil {
		b.Fatal(err)
	}
	defer rNo.Close()
	dir := b.TempDir()
	sb, err := confine.NewRestrictor(rs, confine.Compile(confine.Spec{Writable: []string{dir, os.TempDir()}, Devices: []string{"/dev/null"}, Caps: confine.CapsNoSystem}))
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	bin, err := confinetest.Launcher(b)(runtimeArch())
	if err != nil {
		b.Fatal(err)
	}
	exe, rules := filepath.Join(dir, "agent-launch"), filepath.Join(dir, "safe.rules")
	if err := os.WriteFile(exe, bin, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := confine.WriteRuleset(rules, rs); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	step := func(c transport.Command, do func(func()) error) time.Duration {
		start := time.Now()
		var res transport.Result
		var rerr error
		if err := do(func() { res, rerr = tr.Run(ctx, c) }); err != nil || rerr != nil || res.ExitCode != 0 {
			b.Fatalf("%v %v %+v", err, rerr, res)
		}
		return time.Since(start)
	}
	direct := func(fn func()) error { fn(); return nil }
	plain, launched := transport.Command{Command: "true"}, transport.Command{Command: "true", Wrap: []string{exe, confine.RulesFlag, rules, "--"}}
	var un, th, la, ts, dth, dla, dts, dsc []float64
	for b.Loop() {
		u := step(plain, direct)
		t := step(plain, r.Do)
		l := step(launched, direct)
		s := step(plain, sb.Do)
		n := step(plain, rNo.Do)
		un, th, la, ts = append(un, ms(u)), append(th, ms(t)), append(la, ms(l)), append(ts, ms(s))
		dth, dla, dts, dsc = append(dth, ms(t-u)), append(dla, ms(l-u)), append(dts, ms(s-u)), append(dsc, ms(t-n))
	}
	b.ReportMetric(median(un), "unconfined-ms")
	b.ReportMetric(median(th), "thread-ms")
	b.ReportMetric(median(dth), "thread-overhead-ms")
	b.ReportMetric(median(th)/median(un), "thread/unconfined")
	b.ReportMetric(median(la), "launcher-ms")
	b.ReportMetric(median(dla), "launcher-overhead-ms")
	b.ReportMetric(median(la)/median(un), "launcher/unconfined")
	b.ReportMetric(median(ts), "sandbox-thread-ms")
	b.ReportMetric(median(dts), "sandbox-overhead-ms")
	b.ReportMetric(median(dsc), "seccomp-overhead-ms")
	b.ReportMetric(loadavg(), "load1")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadavg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}
