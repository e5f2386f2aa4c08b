package mcpserver

import (
	"os"
	"testing"

	"github.com/autoshell/agent/confine"
)

// TestMain lets this test binary be the launcher that confines the local
// steps of the tests (package confine re-executes the running executable).
func TestMain(m *testing.M) {
	confine.MaybeLaunch()
	os.Exit(m.Run())
}
