package transport_test

import (
	"context"
	"testing"

	"github.com/autoshell/agent/transport"
)

// host is a transport with a home directory (a HomeDirer).
type host struct {
	transport.Transport
	home string
}

func (h host) HomeDir(context.Context) (string, error) { return h.home, nil }

// decorator adds behaviour and unwraps to the transport below.
type decorator struct{ transport.Transport }

func (d decorator) Unwrap() transport.Transport { return d.Transport }

// asUser acts as another user: its own home, and no Unwrap, so the login
// user's capabilities are not found through it.
type asUser struct{ transport.Transport }

func (asUser) User() string { return "root" }

// As finds a capability on the transport, through any number of
// decorators, and never through one that changes who acts.
func TestAs(t *testing.T) {
	ctx := context.Background()
	h := host{home: "/home/u"}
	for name, tc := range map[string]struct {
		tr       transport.Transport
		wantHome string // "" for none found
	}{
		"itself":           {h, "/home/u"},
		"one decorator":    {decorator{h}, "/home/u"},
		"two decorators":   {decorator{decorator{h}}, "/home/u"},
		"another user":     {asUser{h}, ""},
		"decorated become": {decorator{asUser{h}}, ""},
		"nil":              {nil, ""},
		"decorator of nil": {decorator{}, ""},
	} {
		hd, ok := transport.As[transport.HomeDirer](tc.tr)
		if ok != (tc.wantHome != "") {
			t.Errorf("%s: As found a HomeDirer: %v, want %v", name, ok, !ok)
			continue
		}
		if ok {
			if got, _ := hd.HomeDir(ctx); got != tc.wantHome {
				t.Errorf("%s: home %q, want %q", name, got, tc.wantHome)
			}
		}
	}
	if b, ok := transport.As[transport.Becomer](decorator{decorator{asUser{h}}}); !ok || b.User() != "root" {
		t.Errorf("As did not find the become transport through decorators: %v %v", b, ok)
	}
	if _, ok := transport.As[transport.Becomer](decorator{h}); ok {
		t.Error("As found a Becomer on the login user's transport")
	}
}
