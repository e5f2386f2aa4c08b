package tools

import (
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
)

// Observe formats a step's result for the LLM, as DESIGN.md "Observations"
// says: "[ERROR]: <stderr>" first when stderr is not empty, then stdout, then
// "[exit code N]" when exitCode is not 0, each part starting on its own
// line; no output and exit 0 give "". Each stream is bounded to
// transport.DefaultCaptureLimit bytes of head and of tail, with the
// transport's truncation marker in between (for read_file content and the
// like; a command's streams are bounded by the transport already and go
// through observe).
func Observe(stdout, stderr string, exitCode int) string {
	return observe(bound(stdout), bound(stderr), exitCode)
}

// observe is Observe without bounding: for a command's streams, which the
// transport has already bounded (transport.Capture). Bounding them again
// would cut the truncation marker and count only its own bytes as omitted.
func observe(stdout, stderr string, exitCode int) string {
	var b strings.Builder
	if stderr != "" {
		b.WriteString("[ERROR]: ")
		b.WriteString(stderr)
	}
	if stdout != "" {
		newline(&b)
		b.WriteString(stdout)
	}
	if exitCode != 0 {
		newline(&b)
		b.WriteString("[exit code " + strconv.Itoa(exitCode) + "]")
	}
	return b.String()
}

func newline(b *strings.Builder) {
	if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}

func bound(s string) string {
	if len(s) <= 2*transport.DefaultCaptureLimit {
		return s
	}
	c := transport.NewCapture(transport.DefaultCaptureLimit)
	c.Write([]byte(s))
	return c.String()
}
