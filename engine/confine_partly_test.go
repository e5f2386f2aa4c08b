package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
)

// TestPartlyEnforced: a host whose kernel has Landlock but takes no
// seccomp filter confines with Landlock alone and says what then holds
// what; with --require-enforcement its unapproved steps are refused.
func TestPartlyEnforced(t *testing.T) {
	for _, require := range []bool{false, true} {
		h := newConfiner(nil, confinerOptions{Policy: safety.DefaultPolicy(), Require: require})
		h.ready, h.partly = true, noSeccomp("5.15.0")
		h.conf = map[confine.Level]confine.Confinement{confine.ReadOnly: {Wrap: []string{"/l", "--"}}}
		c, err := h.Confine(context.Background(), confine.ReadOnly)
		switch {
		case require && !errors.Is(err, confine.ErrNotEnforced):
			t.Errorf("required: %v, want refused", err)
		case require && !strings.Contains(err.Error(), "5.15.0 takes no seccomp filter"):
			t.Errorf("required: %v does not say why", err)
		case !require && (err != nil || len(c.Wrap) == 0):
			t.Errorf("not required: %+v %v, want Landlock's confinement", c, err)
		}
		msg := partlyMessage(h.partly, require)
		if !strings.HasPrefix(msg, "partly enforced: kernel 5.15.0 takes no seccomp filter; Landlock holds files") ||
			require != strings.Contains(msg, "refused") || require == strings.Contains(msg, "classifier alone UDP") {
			t.Errorf("require %v: %q", require, msg)
		}
	}
}
