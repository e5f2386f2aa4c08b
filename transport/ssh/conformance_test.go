package ssh

import (
	"os"
	"testing"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/transporttest"
)

func TestConformanceInProcess(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	runConformance(t, srv.Host)
}

func TestConformanceSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	runConformance(t, d.Host)
}

// runConformance runs the transport suite against h: one server, a new
// Transport and a new scratch directory under h.Home for every case.
func runConformance(t *testing.T, h testenv.Host) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		tr := dial(t, hostConfig(h), Options{})
		return transporttest.Fixture{
			Transport: tr,
			Dir:       scratchDir(t, h),
			Home:      h.Home,
			Root:      os.Geteuid() == 0,
			CutAfter: func(t *testing.T, n int64) transport.Transport {
				cfg, proxy := viaProxy(t, h)
				tr := dial(t, cfg, Options{})
				proxy.CutAfter(n)
				return tr
			},
		}
	})
}
