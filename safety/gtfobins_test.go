package safety

import (
	"encoding/json"
	"os"
	"testing"
)

// gtfoEntry is one GTFOBins technique (https://gtfobins.github.io, GPL-3.0;
// testdata/gtfobins.json holds the unprivileged entries of commit 7382261
// for every binary, installed here or not, placeholders pointed at
// protected paths: input file ~/.ssh/id_rsa, output file ~/.bashrc,
// command ~/important/x.sh; nohup's "command" entry, a program file run by
// its path, is medium by design and is in attacks.txt's medium entries).
type gtfoEntry struct {
	Bin      string `json:"bin"`
	Function string `json:"function"`
	Code     string `json:"code"`
}

func gtfobins(t testing.TB) []gtfoEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/gtfobins.json")
	if err != nil {
		t.Fatal(err)
	}
	var es []gtfoEntry
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	return es
}

// TestGTFOBinsAreHigh: every GTFOBins entry aimed at protected paths is
// High: denied without a terminal by default and at --approve medium.
func TestGTFOBinsAreHigh(t *testing.T) {
	p := DefaultPolicy()
	es := gtfobins(t)
	for _, e := range es {
		if a := p.ClassifyCommand(e.Code); a.Level != High {
			t.Errorf("%s %s: %q = %s, want high", e.Bin, e.Function, e.Code, a)
		}
	}
	t.Logf("%d GTFOBins entries", len(es))
}
