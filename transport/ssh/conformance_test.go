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

// The suite over the shell transfer: forced where SFTP works, and on an
// OpenSSH host with the SFTP subsystem off.
func TestConformanceShellFilesInProcess(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	runConformanceWith(t, srv.Host, Options{ShellFiles: true})
}

func TestConformanceNoSFTPSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "Subsystem sftp /nonexistent/sftp-server\n"})
	runConformanceWith(t, d.Host, Options{})
}

// runConformance runs the transport suite against h: one server, a new
// Transport and a new scratch directory under h.Home for every case.
func runConformance(t *testing.T, h testenv.Host) { runConformanceWith(t, h, Options{}) }

func runConformanceWith(t *testing.T, h testenv.Host, opts Options) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		tr := dial(t, hostConfig(h), opts)
		return transporttest.Fixture{
			Transport: tr,
			Dir:       scratchDir(t, h),
			Home:      h.Home,
			Root:      os.Geteuid() == 0,
			CutAfter: func(t *testing.T, n int64) transport.Transport {
				cfg, proxy := viaProxy(t, h)
				tr := dial(t, cfg, opts)
				proxy.CutAfter(n)
				return tr
			},
		}
	})
}
