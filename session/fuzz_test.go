package session

import (
	"bytes"
	"testing"
)

// FuzzParse: whatever a session file holds, Parse returns records or an
// error, never panics, and Build copes with what it returns.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"r":"start","time":"2026-01-01T00:00:00Z","start":{"kind":"run","args":["run","p"],"dir":"/"}}` + "\n" +
		`{"r":"step_start","host":"h","step":1}` + "\n" + `{"r":"step","host":"h","step":1,"status":"ok","vars":{"a":1}}` + "\n" +
		`{"r":"llm","prompt_tokens":3}` + "\n" + `{"r":"end","status":"done"}` + "\n"))
	f.Add([]byte(`{"r":"start","start":{"kind":"task"}}` + "\n" + `{"r":"step","step":-1}`))
	f.Add([]byte("\x00\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Parse(bytes.NewReader(data))
		if err == nil && (len(recs) == 0 || recs[0].R != RecStart) {
			t.Fatalf("no error and no start: %+v", recs)
		}
		if len(recs) > 0 {
			s := Build("x", recs)
			for _, h := range s.Hosts {
				h.Unknown()
				h.Steps()
			}
		}
	})
}
