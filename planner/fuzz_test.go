package planner

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, and a plan it accepts survives
// Marshal and Parse unchanged.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input, and large ones
	// (the example plans) make that take most of a short run.
	for _, s := range []string{
		"steps: [{tool: x, parameters: {a: 1.0, b: [null, true], c: {d: ''}}}]",
		"vars: {a: 08, b: 0x10}\nsteps:\n  - tool: x\n    condition: \"a == '1'\"\n",
		"phases:\n  - goal: g\n    steps: [{tool: y, description: \"\\t x \\n\"}]\n",
		"steps:\n  - tool: x\n    parameters:\n      s: |2\n          indented\n        text\n",
		"steps: [{tool: x, parameters: {t: 2001-12-14t21:59:43.10-05:00, u: ~, v: -.5e3}}]",
		"permissions: {read: [/etc/**, '~/a/*.log'], write: [], run: [rm, /opt/*/bin/x], network: yes}\nsteps: [{tool: x}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			return
		}
		_ = Validate(p, coreTools(), nil)
		out, err := Marshal(p)
		if err != nil {
			t.Fatalf("Marshal of a parsed plan: %v\ninput:\n%q", err, data)
		}
		back, err := Parse(bytes.NewReader(out), "fuzz.yaml")
		if err != nil {
			t.Fatalf("Parse of Marshal's output: %v\ninput:\n%q\noutput:\n%s", err, data, out)
		}
		if !reflect.DeepEqual(withoutLines(back), withoutLines(p)) {
			t.Fatalf("round trip changed the plan\ninput:\n%q\nfirst:  %#v\nsecond: %#v\noutput:\n%s", data, p, back, out)
		}
	})
}
