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
// transport's truncation marker in between (a command's streams already
// are; this bounds read_file content and the like).
func Observe(stdout, stderr string, exitCode int) string {
	var b strings.Builder
	if stderr != "" {
		b.WriteString("[ERROR]: ")
		b.WriteString(bound(stderr))
	}
	if stdout != "" {
		newline(&b)
		b.WriteString(bound(stdout))
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
