package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autoshell/agent/transport"
)

// TestTruncationCount: a command printing n bytes shows the model the
// head and tail of its output and says exactly how many bytes were left
// out between them — from 1 KiB to 1 GiB locally, to 16 MiB over SSH
// (the count was once that of the marker's own bytes: bounded twice).
func TestTruncationCount(t *testing.T) {
	const keep = 2 * transport.DefaultCaptureLimit
	sizes := map[string][]int64{
		"local": {1 << 10, keep - 1, keep, keep + 1, 1 << 20, 15 << 20, 1 << 30},
		"ssh":   {1 << 10, keep, keep + 1, 16 << 20},
	}
	tool := NewExecuteCommand()
	for _, tg := range targets(t) {
		for _, n := range sizes[tg.name] {
			t.Run(fmt.Sprintf("%s/%d", tg.name, n), func(t *testing.T) {
				cmd := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; echo err >&2", n)
				out, err := tool.Run(ctxT(t), tg.tr, raw(t, map[string]any{"command": cmd}))
				if err != nil {
					t.Fatal(err)
				}
				marker := fmt.Sprintf("[output truncated: %d bytes omitted]", n-keep)
				switch got := strings.Count(out.Observation, "[output truncated:"); {
				case n <= keep && got != 0:
					t.Fatalf("%d bytes truncated: %q", n, clipObs(out.Observation))
				case n > keep && (got != 1 || !strings.Contains(out.Observation, marker)):
					t.Fatalf("want one %q in %q", marker, clipObs(out.Observation))
				}
				if !strings.HasPrefix(out.Observation, "[ERROR]: err\n") {
					t.Errorf("stderr lost: %q", clipObs(out.Observation))
				}
				if xs := strings.Count(out.Observation, "x"); int64(xs) != min(n, keep) {
					t.Errorf("observation keeps %d bytes of output, want %d", xs, min(n, keep))
				}
			})
		}
	}
}

func clipObs(s string) string {
	if len(s) > 200 {
		return s[:100] + " … " + s[len(s)-100:]
	}
	return s
}

// TestObserveBoundsText: text from a tool (not a command's captured
// stream) is bounded once, with the right count.
func TestObserveBoundsText(t *testing.T) {
	const keep = 2 * transport.DefaultCaptureLimit
	text := strings.Repeat("y", keep+12345)
	obs := Observe(text, "", 0)
	if !strings.Contains(obs, "[output truncated: 12345 bytes omitted]") {
		t.Fatalf("observation %q", clipObs(obs))
	}
}
