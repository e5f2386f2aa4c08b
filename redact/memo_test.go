package redact

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A text redacted again answers as it did, while the set is unchanged;
// once a value is added, found or made Known, the same text is scanned
// again with it.
func TestMemoForgetsWhenTheSetChanges(t *testing.T) {
	s := NewSet()
	const secret = "k7Qz9vLmP2xW4rT8"
	text := "deploy key " + secret + " for the build"
	for i := range 2 {
		if got := s.String(text); got != text {
			t.Fatalf("call %d: %q, want it unchanged (nothing known)", i, got)
		}
	}
	s.Add("DEPLOY", secret, Known)
	if got := s.String(text); strings.Contains(got, secret) {
		t.Fatalf("after Add: %q still shows the value", got)
	}
	// Made Known after being Found: --send-secrets no longer sends it.
	f := NewSet()
	f.Add("TOKEN", secret, Found)
	if got, _ := f.Named(text, true); !strings.Contains(got, secret) {
		t.Fatalf("a Found value with --send-secrets: %q, want it sent", got)
	}
	f.Add("TOKEN", secret, Known)
	if got, _ := f.Named(text, true); strings.Contains(got, secret) {
		t.Fatalf("made Known: %q still sends the value", got)
	}
	// A short Known value (hidden as it is only).
	sh := NewSet()
	if got := sh.String("pin 73x9 here"); got != "pin 73x9 here" {
		t.Fatalf("%q", got)
	}
	sh.Add("PIN", "73x9", Known)
	if got := sh.String("pin 73x9 here"); strings.Contains(got, "73x9") {
		t.Fatalf("after adding a short value: %q", got)
	}
}

// Remembered answers are the answers: the same as a fresh set's, names
// included, and the caller's copy of names is its own.
func TestMemoSameAnswers(t *testing.T) {
	s := NewSet()
	s.Add("API_KEY", "sk-live-0123456789abcdef", Known)
	texts := []string{
		"curl -H 'Authorization: Bearer sk-live-0123456789abcdef' x",
		"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"nothing here",
		"password=Tr0ub4dor&3horse",
	}
	for _, text := range texts {
		first, names := s.Named(text, false)
		if len(names) > 0 {
			names[0] = "CHANGED"
		}
		again, names2 := s.Named(text, false)
		fresh := NewSet()
		fresh.Add("API_KEY", "sk-live-0123456789abcdef", Known)
		for _, prior := range texts { // what s learned from the texts before
			fresh.Named(prior, false)
		}
		want, wantNames := fresh.Named(text, false)
		if again != first || again != want || fmt.Sprint(names2) != fmt.Sprint(wantNames) {
			t.Errorf("%q: %q %v, first %q, fresh %q %v", text, again, names2, first, want, wantNames)
		}
	}
}

// Concurrent use (run with -race) while values are added.
func TestMemoConcurrent(t *testing.T) {
	s := NewSet()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fmt.Sprintf("v%d-Zq8rT3mW9xK2pL", i)
			for range 50 {
				s.String("token " + v)
			}
			s.Add("V", v, Known)
			if got := s.String("token " + v); strings.Contains(got, v) {
				t.Errorf("%q shows %s after Add", got, v)
			}
		}()
	}
	wg.Wait()
}

// String's remembered answers are the patterns' answers.
func TestPatternMemoSameAnswers(t *testing.T) {
	for _, text := range []string{
		"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"mysql -u root -pS3cr3tPassw0rd db",
		"nothing here",
		strings.Repeat("token=abcdefgh12345678 ", 1000), // longer than maxMemoText: remembered apart
	} {
		want := redactGated(text, newRedactGate(text), plainMark)
		for i := range 2 {
			if got := String(text); got != want {
				t.Errorf("call %d of %.40q: %.80q, want %.80q", i, text, got, want)
			}
		}
	}
}

// A long text (a step's observation, up to 64 KiB) is remembered apart,
// the last few: redacted again for the audit line and the record, it is
// not scanned again; a change to the set forgets it.
func TestMemoBigTexts(t *testing.T) {
	s := NewSet()
	const secret = "k7Qz9vLmP2xW4rT8"
	text := strings.Repeat("an ordinary line of output\n", 2000) + "key " + secret + "\n"
	if len(text) <= maxMemoText || len(text) > maxBigText {
		t.Fatalf("text of %d bytes", len(text))
	}
	first := s.String(text)
	if s.memo.big.n != 1 {
		t.Fatalf("%d long texts remembered, want 1", s.memo.big.n)
	}
	if again := s.String(strings.Clone(text)); again != first || s.memo.big.n != 1 {
		t.Fatalf("the same long text again: scanned again (%d remembered) or answered otherwise", s.memo.big.n)
	}
	s.Add("DEPLOY", secret, Known)
	if got := s.String(text); strings.Contains(got, secret) {
		t.Fatalf("after Add: the long text still shows the value")
	}
	// the pattern memo too
	p := strings.Repeat("an ordinary line of output\n", 2000) + "password=hunter2hunter2\n"
	if a, b := String(p), String(p); a != b || strings.Contains(a, "hunter2hunter2") {
		t.Fatal("String of a long text")
	}
	if _, ok := patternMemo.big.get(p); !ok {
		t.Fatal("String did not remember a long text")
	}
}
