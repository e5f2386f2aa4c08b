package session

import (
	"fmt"
	"testing"
)

// BenchmarkStepRecords is the cost the record adds to a step: a start
// and an end, each synced (go test -bench StepRecords ./session). The
// state directory's file system decides it; compare with the step's own
// time (milliseconds over SSH).
func BenchmarkStepRecords(b *testing.B) {
	for _, hosts := range []int{1, 10} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			l, err := Create(b.TempDir(), "bench", Start{Kind: KindBatchRun})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			params := map[string]any{"command": "systemctl restart nginx"}
			b.SetParallelism(hosts)
			b.RunParallel(func(pb *testing.PB) {
				n := 0
				for pb.Next() {
					n++
					l.Write(Record{R: RecStepStart, Host: "web01", Step: n, Tool: "execute_command", Params: params, Command: "systemctl restart nginx"}, true)
					l.Write(Record{R: RecStep, Host: "web01", Step: n, Tool: "execute_command", Params: params, Status: "ok", Output: "done\n",
						Vars: map[string]any{"last": map[string]any{"stdout": "done\n", "exit_code": 0}}}, true)
				}
			})
		})
	}
}
