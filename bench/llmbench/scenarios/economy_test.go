package scenarios

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func body(t testing.TB, tools string, msgs ...string) []byte {
	t.Helper()
	var ms []json.RawMessage
	for _, m := range msgs {
		b, _ := json.Marshal(map[string]string{"role": "user", "content": m})
		ms = append(ms, b)
	}
	b, err := json.Marshal(map[string]any{"model": "m", "tools": json.RawMessage(tools), "messages": ms})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A request that repeats an earlier one's prefix has that prefix cached,
// from the minimum length on and in its steps; a first request, or one
// whose tools differ, has nothing cached.
func TestCacheUse(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"x","description":"` + strings.Repeat("d", 8000) + `"}}]`
	first := body(t, tools, "task")
	second := body(t, tools, "task", strings.Repeat("observation ", 100))
	other := body(t, `[]`, "task")
	uses, err := CacheUse([][]byte{first, second, other}, Cache{MinTokens: 1024, StepTokens: 128})
	if err != nil {
		t.Fatal(err)
	}
	if uses[0].Cached != 0 || uses[2].Cached != 0 {
		t.Errorf("first or unrelated request cached: %+v", uses)
	}
	if c := uses[1].Cached; c < 1024 || c%128 != 0 || c > uses[0].Prompt {
		t.Errorf("second request cached %d tokens of %d (first %d)", c, uses[1].Prompt, uses[0].Prompt)
	}
	short, _ := CacheUse([][]byte{first, second}, Cache{MinTokens: 1 << 20})
	if short[1].Cached != 0 {
		t.Errorf("below the minimum, %d cached", short[1].Cached)
	}
	if _, err := CacheUse([][]byte{[]byte("{")}, Cache{}); err == nil {
		t.Error("a bad body: no error")
	}
}

// CostOf: cached tokens at the read price, the rest at the input (or
// write) price, completions at the output price.
func TestCostOf(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"x","description":"` + strings.Repeat("d", 8000) + `"}}]`
	bodies := [][]byte{body(t, tools, "a"), body(t, tools, "a", "b")}
	p := Price{In: 1, Read: 0.1, Write: 1.25, Out: 4, Cache: Cache{MinTokens: 100, StepTokens: 1}}
	c, err := CostOf(p, bodies, 1000)
	if err != nil {
		t.Fatal(err)
	}
	uses, _ := CacheUse(bodies, p.Cache)
	want := (float64(uses[0].Prompt)*1.25 + float64(uses[1].Cached)*0.1 + float64(uses[1].Prompt-uses[1].Cached)*1.25) / 1e6
	if math.Abs(c.Prompt-want) > 1e-12 || c.Completion != 4000/1e6 || c.PromptUncached <= c.Prompt {
		t.Errorf("cost %+v, want prompt %g", c, want)
	}
}

func FuzzCacheUse(f *testing.F) {
	f.Add([]byte(`{"tools":[],"messages":[{"role":"user","content":"x"}]}`), []byte(`{"messages":[]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		uses, err := CacheUse([][]byte{a, b}, Cache{MinTokens: 1, StepTokens: 3})
		if err != nil {
			return
		}
		for _, u := range uses {
			if u.Cached < 0 || u.Cached > u.Prompt {
				t.Fatalf("%+v", u)
			}
		}
	})
}
