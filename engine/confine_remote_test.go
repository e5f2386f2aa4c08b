package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// TestFinishRemoteRefusesBadAnswers: what the host prints after the set-up
// is outside input; an answer that is not the launcher's leaves the host
// unusable with an error (no confinement is invented), never a panic.
func TestFinishRemoteRefusesBadAnswers(t *testing.T) {
	good := "landlock 7 protocol " + strconv.Itoa(confine.Protocol)
	sandbox := string(confine.Compile(confine.Spec{Writable: []string{"/tmp"}}).Encode())
	for _, tc := range []struct {
		name, stdout string
		sandbox      bool
		want         string // "" : ready
	}{
		{"ready", "uname Linux 6.1 x86_64\ndir /d\n" + good + "\nready\n", false, ""},
		{"no probe", "ready\n", false, "did not answer"},
		{"probe garbage", "landlock x\nready\n", false, "did not answer"},
		{"other protocol", "landlock 7 protocol 1\nready\n", false, "protocol 1"},
		{"rules not computed", good + "\n", false, "compute the rules"},
		{"sandbox missing", good + "\nready\n", true, "sandbox"},
		{"sandbox garbage", good + "\nsandbox {\"v\":2,\"rules\":[{\"p\":\"rel\",\"r\":4}]}\nready\n", true, "sandbox"},
		{"sandbox", good + "\nsandbox " + sandbox + "ready\n", true, ""},
	} {
		h := newConfiner(nil, confinerOptions{Policy: safety.DefaultPolicy()})
		h.specs = map[string]confine.Spec{"safe": {}, "medium": {Write: true}}
		if tc.sandbox {
			h.specs[sandboxName] = confine.Spec{}
		}
		err := h.finishRemote(parseSetup(tc.stdout), transport.Result{Stdout: tc.stdout}, "6.1", "/d/agent-launch-x", "/d/rules-k-6.1", h.stacks())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		case tc.want == "" && len(h.conf[confine.ReadOnly].Wrap) == 0:
			t.Errorf("%s: no launcher for safe steps", tc.name)
		}
	}
}

func FuzzParseSetup(f *testing.F) {
	f.Add("uname Linux 6.1 x86_64\ndir /d\nlandlock 7 protocol 4\nready\n")
	f.Add("unsafe /x is a link\n")
	f.Add("sandbox {}\n\n\nsend")
	f.Fuzz(func(t *testing.T, s string) {
		out := parseSetup(s)
		for k, v := range out {
			if k == "" || strings.Contains(k, " ") || strings.Contains(k+v, "\n") {
				t.Fatalf("key %q value %q", k, v)
			}
		}
		h := newConfiner(nil, confinerOptions{Policy: safety.DefaultPolicy()})
		h.specs = map[string]confine.Spec{"safe": {}, "medium": {Write: true}, sandboxName: {}}
		h.finishRemote(out, transport.Result{Stdout: s}, "6.1", "/d/x", "/d/r", h.stacks())
	})
}
