package safety

import (
	"strings"
	"testing"
)

// TestGTFOBinsNetworkNeverSafe: GTFOBins' upload, download, reverse- and
// bind-shell techniques, aimed at an ordinary file instead of a protected
// one, still send data off the host: never safe, whatever file they name.
func TestGTFOBinsNetworkNeverSafe(t *testing.T) {
	p := DefaultPolicy()
	n := 0
	for _, e := range gtfobins(t) {
		switch e.Function {
		case "upload", "download", "reverse-shell", "bind-shell":
		default:
			continue
		}
		code := strings.NewReplacer("/home/u/.ssh/id_rsa", "/tmp/report.txt", "~/.ssh/id_rsa", "/tmp/report.txt",
			"/home/u/.bashrc", "/tmp/out.txt", "~/.bashrc", "/tmp/out.txt").Replace(e.Code)
		n++
		if a := p.ClassifyCommand(code); a.Level == Safe {
			t.Errorf("%s %s: %q = safe", e.Bin, e.Function, code)
		}
	}
	if n < 30 {
		t.Errorf("only %d network techniques", n)
	}
}
