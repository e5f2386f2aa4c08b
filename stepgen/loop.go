package stepgen

import (
	"encoding/json"
	"fmt"
)

// LoopRepeats is how many times in a row the same resolved step may be
// proposed before the run stops.
const LoopRepeats = 3

// loopDetector notices the same resolved step proposed LoopRepeats times in
// a row.
type loopDetector struct {
	last  string
	count int
}

// observe records a step (tool and resolved parameters) and reports
// whether it completes a loop.
func (d *loopDetector) observe(tool string, params map[string]any) bool {
	b, _ := json.Marshal(params) // map keys are sorted: a canonical form
	key := tool + " " + string(b)
	if key == d.last {
		d.count++
	} else {
		d.last, d.count = key, 1
	}
	return d.count >= LoopRepeats
}

func (d *loopDetector) err() error {
	return fmt.Errorf("%w: the model proposed the same step %d times in a row: %s", ErrLoop, d.count, clip(d.last, 200))
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
