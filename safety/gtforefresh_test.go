package safety

import (
	"strings"
	"testing"
)

// TestGTFOBinsRefreshRules: the holes the full GTFOBins list (every
// binary, not only those installed here) showed, and their neighbours.
func TestGTFOBinsRefreshRules(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		cmd    string
		want   Level
		reason string
	}{
		// An editor runs commands and writes any file, unjournaled.
		{`emacs --batch --eval '(shell-command "id")'`, High, "an editor"},
		{`emacs -Q -nw notes.txt`, High, "an editor"},
		{`vim notes.txt`, High, "an editor"},
		{`ed notes.txt`, High, "an editor"},
		{`nano notes.txt`, High, "an editor"},
		// nginx -t opens the error log, and a directive or a configuration
		// can load a module (code).
		{`nginx -t`, Safe, ""},
		{`nginx -T`, Safe, ""},
		{`nginx -t -e /home/u/.bashrc`, High, "protected"},
		{`nginx -t -e /tmp/err.log`, Medium, "nginx -e"},
		{`nginx -t -g 'load_module /tmp/x.so;'`, High, "load a module"},
		{`nginx -t -c /tmp/x.conf`, Medium, "runs script or program file"},
		{"printf 'load_module /tmp/x.so;' > /tmp/x.conf; nginx -t -c /tmp/x.conf", High, "the same command wrote"},
		{`nginx -T -p /tmp/x`, High, "prefix"},
		// strace -o '|CMD' runs CMD; -E sets the traced program's environment.
		{`strace -o '|sh -c id' true`, High, "pipes its output to a command"},
		{`strace --output='!sh' true`, High, "pipes its output to a command"},
		{`strace -o "$f" true`, High, "pipes its output to a command"},
		{`strace -f -o /tmp/out ls`, Medium, "writes a file"},
		{`strace -o /home/u/.bashrc true`, High, "protected"},
		{`strace -E LD_PRELOAD=/tmp/x.so ls`, High, "environment"},
		{`ltrace -F /home/u/.ssh/id_rsa ls`, High, "prototype file"},
		{`ltrace -l /tmp/x.so ls`, Medium, "traces a process"},
		{`ltrace -o /home/u/.bashrc ls`, High, "protected"},
		// php's built-in web server serves the working directory's files.
		{`php -S 0.0.0.0:8080`, High, "serves files"},
		{`php -S 127.0.0.1:8080 -t /home/u`, High, "serves files"},
		{`php x.php`, Medium, "runs script or program file"},
	} {
		got := p.ClassifyCommand(tc.cmd)
		if got.Level != tc.want {
			t.Errorf("%q = %s, want %s", tc.cmd, got, tc.want)
			continue
		}
		if !strings.Contains(strings.Join(got.Reasons, "\n"), tc.reason) {
			t.Errorf("%q = %s, want a reason containing %q", tc.cmd, got, tc.reason)
		}
	}
}
