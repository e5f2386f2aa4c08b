package safety

import (
	"strings"
	"testing"
	"time"
)

// Hostile shapes must be classified quickly: nesting, fan-out, expansion.
// The bound is not a speed target (speed is measured in benchmarks): it is far
// above what -race on a loaded 2-core machine takes (3 s failed there) and
// far below what a blow-up exponential in these sizes would take.
func TestClassifyCommandFast(t *testing.T) {
	p := DefaultPolicy()
	for name, cmd := range map[string]string{
		"cmdsubst": strings.Repeat("echo $(", 8000) + "x" + strings.Repeat(")", 8000),
		"dq":       strings.Repeat(`echo "$(`, 6000) + "x" + strings.Repeat(`)"`, 6000),
		"bq":       strings.Repeat("echo `", 1) + strings.Repeat(`\`, 10) + "`",
		"funcs":    strings.Repeat("f(){ ", 8000) + "ls" + strings.Repeat("; }", 8000),
		"pipes":    strings.Repeat("ls | ", 12000) + "ls",
		"alias":    "alias a='ls;ls;ls;ls;ls;ls;ls;ls;ls;ls'; alias b='" + strings.Repeat("a;", 30) + "'; alias c='" + strings.Repeat("b;", 30) + "'; alias d='" + strings.Repeat("c;", 30) + "'; d",
		"braces":   "echo " + strings.Repeat("{a,b}", 2000),
		"seq":      "echo {1..9223372036854775807} {a..z}{a..z} {9223372036854775806..9223372036854775807}",
		"words":    "ls " + strings.Repeat("/etc/* ", 9000),
		"arith":    "echo $((" + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + "))",
		"params":   "echo " + strings.Repeat("${x:-", 5000) + "y" + strings.Repeat("}", 5000),
		"shc":      strings.Repeat("sh -c ", 1) + "'" + strings.Repeat("ls;", 20000) + "'",
		"evalfan":  "eval '" + strings.Repeat("eval \"ls;ls;ls;ls\";", 2000) + "'",
		"awkdeep":  "awk '" + strings.Repeat("(", 30000) + "1" + strings.Repeat(")", 30000) + "'",
		"awkwide":  "awk 'BEGIN{" + strings.Repeat(`print "x" | "sort";`, 3000) + "}'",
		"awkcall":  "awk '" + strings.Repeat("function f", 1) + "(){" + strings.Repeat("f();", 10000) + "} BEGIN{f()}'",
		"sedwide":  "sed '" + strings.Repeat("s/[[:alpha:]]/x/;", 3000) + "'",
	} {
		start := time.Now()
		a := p.ClassifyCommand(cmd)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: %v %.80s", name, d, a.String())
		}
	}
}
