package local_test

import (
	"os"
	"testing"

	"github.com/autoshell/agent/transport/local"
	"github.com/autoshell/agent/transport/transporttest"
)

func TestConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		tr, err := local.New()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		home, _ := os.UserHomeDir()
		return transporttest.Fixture{Transport: tr, Dir: t.TempDir(), Home: home, Root: os.Geteuid() == 0}
	})
}
