package transport_test

import (
	"testing"

	"github.com/autoshell/agent/transport"
)

func TestExpandHome(t *testing.T) {
	for in, want := range map[string]string{
		"":             "/home/u",
		"~":            "/home/u",
		"~/":           "/home/u",
		"~/a/b":        "/home/u/a/b",
		"~/../etc":     "/home/etc",
		"/etc//hosts":  "/etc/hosts",
		"rel/x":        "/home/u/rel/x",
		"~root/.ssh":   "~root/.ssh",
		"./a":          "/home/u/a",
		"/a/../../b/.": "/b",
	} {
		if got := transport.ExpandHome(in, "/home/u"); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
