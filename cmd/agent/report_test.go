package main

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/event"
)

const partA = `{"event":"plan","host":"web01","session":"s1","phases":[]}
{"event":"done","host":"web01","session":"s1","status":"success","summary":"","steps":1,"ok":1,"errors":0,"skipped":0,"denied":0}
{"event":"host","host":"web01","status":"ok","how":"plan","steps":1,"changed":1,"duration_ms":20}
{"event":"done","host":"db01","session":"s1","status":"failed","summary":"not run: dial","steps":0,"ok":0,"errors":0,"skipped":0,"denied":0}
{"event":"host","host":"db01","status":"not run","steps":0,"changed":0,"duration_ms":0,"error":"dial tcp: refused"}
{"event":"batch","session":"s1","hosts":2,"ok":1,"failed":0,"not_run":1,"llm_calls":2,"duration_ms":900}
`

const partB = `{"event":"host","host":"web02","status":"failed","how":"plan","steps":2,"changed":0,"llm_calls":3,"duration_ms":30,"error":"step 2 failed"}
{"event":"batch","session":"s2","hosts":1,"ok":0,"failed":1,"not_run":0,"llm_calls":3,"duration_ms":1200}
`

func mustPart(t *testing.T, text, name string) *part {
	t.Helper()
	p, err := readPart(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportMerge(t *testing.T) {
	r := mergeParts([]*part{mustPart(t, partA, "a.jsonl"), mustPart(t, partB, "b.jsonl")})
	want := event.Batch{Hosts: 3, OK: 1, Failed: 1, NotRun: 1, LLMCalls: 5, DurationMS: 1200}
	if r.totals != want || len(r.incomplete) != 0 || len(r.notes) != 0 {
		t.Fatalf("totals %+v, incomplete %v, notes %v", r.totals, r.incomplete, r.notes)
	}
	if got := strings.Join(r.hosts, ","); got != "db01,web01,web02" {
		t.Errorf("hosts %s", got)
	}
	if e := r.result["web02"]; e.LLMCalls != 3 || e.Err != "step 2 failed" {
		t.Errorf("web02 %+v", e)
	}
	if r.session() != "s1,s2" {
		t.Errorf("session %q", r.session())
	}
	var b strings.Builder
	r.writeTable(&b, 2)
	for _, s := range []string{"web02  FAILED", "db01   not run", "3 hosts: 1 ok, 1 failed, 1 not run; LLM: 5 calls (from 2 files)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	// The merged JSON is itself a part.
	b.Reset()
	if err := r.writeJSON(&b); err != nil {
		t.Fatal(err)
	}
	again := mergeParts([]*part{mustPart(t, b.String(), "merged")})
	if again.totals != want {
		t.Errorf("merged JSON reads back as %+v:\n%s", again.totals, b.String())
	}
}

// TestReportRetryAndUnfinished: a host reported again (a retry) counts as
// the later file says, with a note; a part without its batch event, or
// whose last line is cut short, is unfinished.
func TestReportRetryAndUnfinished(t *testing.T) {
	retry := `{"event":"host","host":"db01","status":"ok","how":"plan","steps":1,"changed":0,"duration_ms":5}` + "\n" +
		`{"event":"batch","session":"s3","hosts":1,"ok":1,"failed":0,"not_run":0,"llm_calls":0,"duration_ms":5}` + "\n"
	r := mergeParts([]*part{mustPart(t, partA, "a"), mustPart(t, retry, "retry")})
	if r.totals.OK != 2 || r.totals.NotRun != 0 || len(r.notes) != 1 || !strings.Contains(r.notes[0], "db01: reported by a and retry") {
		t.Fatalf("retry: %+v %v", r.totals, r.notes)
	}
	cut := partA[:strings.LastIndex(partA, `{"event":"batch"`)+20] // killed mid-line
	noBatch := partA[:strings.LastIndex(partA, `{"event":"batch"`)]
	r = mergeParts([]*part{mustPart(t, cut, "cut"), mustPart(t, noBatch, "nobatch"), mustPart(t, "", "empty")})
	if strings.Join(r.incomplete, ",") != "cut,nobatch,empty" {
		t.Fatalf("incomplete %v (notes %v)", r.incomplete, r.notes)
	}
}

func TestReportBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"not json\n" + partB, "x:1: not an event"},
		{`{"host":"a"}` + "\n", `x:1: not an event of agent --json: no "event" key`},
		{partB + "[1,2]\n", "x:3: not an event"},
		{`{"event":"host","host":"a","steps":"many"}` + "\n", "x:1: not an event"},
		{strings.Repeat("x", maxReportLine+10) + "\n", "longer than"},
	} {
		_, err := readPart(strings.NewReader(tc.in), "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// A host reported only by a done event (no host event) counts from it.
func TestReportDoneOnly(t *testing.T) {
	in := `{"event":"done","host":"a","status":"success","summary":""}` + "\n" + `{"event":"done","host":"b","status":"failed","summary":""}` + "\n" +
		`{"event":"batch","session":"s","hosts":2,"ok":1,"failed":1,"not_run":0,"llm_calls":0,"duration_ms":1}` + "\n"
	r := mergeParts([]*part{mustPart(t, in, "x")})
	if r.totals.OK != 1 || r.totals.Failed != 1 {
		t.Fatalf("%+v", r.totals)
	}
}

func FuzzReadPart(f *testing.F) {
	f.Add(partA)
	f.Add(partB)
	f.Add(partA[:50])
	f.Add("{}\n{\"event\":\"host\"}")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := readPart(strings.NewReader(in), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") {
				t.Fatalf("error without its place: %v", err)
			}
			return
		}
		r := mergeParts([]*part{p})
		if r.totals.Hosts != len(r.hosts) || r.totals.OK+r.totals.Failed+r.totals.NotRun != r.totals.Hosts {
			t.Fatalf("totals %+v for %d hosts", r.totals, len(r.hosts))
		}
		var b strings.Builder
		if err := r.writeJSON(&b); err != nil {
			t.Fatal(err)
		}
	})
}
