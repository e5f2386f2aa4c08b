package executor

import (
	"testing"

	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// The executor's decorators (confinement, output streaming) keep every
// capability of the host's transport: found through them by transport.As,
// not re-implemented by each.
func TestDecoratorsKeepCapabilities(t *testing.T) {
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]transport.Transport{
		"confined":  wrapped{Transport: tr},
		"streaming": streamTransport{Transport: tr},
		"both":      streamTransport{Transport: wrapped{Transport: tr}},
	} {
		if _, ok := transport.As[transport.RealPather](d); !ok {
			t.Errorf("%s: no RealPath", name)
		}
		if _, ok := transport.As[transport.HomeDirer](d); !ok {
			t.Errorf("%s: no HomeDir", name)
		}
		if _, ok := transport.As[transport.DirReader](d); !ok {
			t.Errorf("%s: no ReadDir", name)
		}
	}
}
