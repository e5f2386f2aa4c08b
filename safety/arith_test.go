package safety

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestArithmeticOverRunTimeValues: arithmetic over a value a step gets
// when it runs is High — bash (/bin/sh on Red Hat's family) evaluates
// the value as an expression and runs the command substitution in an
// array subscript it holds (a file holding a[$(cmd)] read by
// `read y < f; echo $((y))`). Arithmetic over static values, numeric
// commands' output and bash's own counters stays as it was.
func TestArithmeticOverRunTimeValues(t *testing.T) {
	p := DefaultPolicy()
	for _, cmd := range []string{
		`read y < /home/u/work/f; echo $((y))`,
		`read y < /home/u/work/f; echo $(($y))`,
		`read -r y < f; echo $[y]`,
		`y=$(cat /home/u/work/f); echo $((y+1))`,
		`echo $(( $(cat /home/u/work/f) ))`,
		`echo $(( $(wc -l *) ))`,
		`read y < f; declare -i z=y`,
		`read y < f; declare -i z; z=$y`,
		`read y < f; [[ $y -eq 1 ]]`,
		`read y < f; (( y > 1 ))`,
		`read y < f; let y+1`,
		`read y < f; echo ${HOME:y}`,
		`read y < f; echo ${HOME:0:y}`,
		`read y < f; a=(1); echo ${a[y]}`,
		`read y < f; z=y; echo $((z))`,
		`for y in $(cat f); do echo $((y)); done`,
		`for y in *; do echo $((y)); done`,
		`mapfile -t a < f; echo $((a))`,
		`read; echo $((REPLY))`,
		`printf -v y %s "$(cat f)"; echo $((y))`,
		`set -- $(cat f); echo $(($1))`,
		`read y < f; declare -n r=y; echo $((r))`,
		`read y < f; export y; sh -c 'echo $((y))'`,
		// a numeric program's static format prints the subscript itself
		`x=$(stat -c 'a[$(touch /tmp/p)]' /); echo $((x))`,
		`echo $(( $(stat -c 'a[$(touch /tmp/p)]' /) ))`,
		`x=$(date '+a[$(touch /tmp/p)]'); echo $((x))`,
		"x=$(stat --printf 'a[`touch /tmp/p`]' /); echo $((x))",
	} {
		if an := p.Analyze(cmd, "/home/u"); an.Level != High || !strings.Contains(an.Assessment.String(), "arithmetic") {
			t.Errorf("%s = %s, want high (arithmetic over a run-time value)", cmd, an.Assessment)
		}
	}
	for _, cmd := range []string{
		`echo $((1+2))`,
		`x=5; echo $((x+1))`,
		`n=$(nproc); echo $((n*2))`,
		`echo $(( $(date +%s) - $(stat -c %Y /etc/hostname) ))`,
		`echo $(( $(wc -l < /var/log/syslog) / 2 ))`,
		`echo $(( $(ls /etc | wc -l) ))`,
		`for i in 1 2 3; do echo $((i*2)); done`,
		`i=0; for f in /etc/*.conf; do i=$((i+1)); done; echo $i`,
		`n=0; n="$((n+2))"; echo $((n*3))`,
		`echo $((RANDOM % 10)); echo $(($$ + 0))`,
	} {
		if an := p.Analyze(cmd, "/home/u"); an.Level != Safe {
			t.Errorf("%s = %s, want safe", cmd, an.Assessment)
		}
	}
}

// FuzzArithRuntime: any code bash parses goes through arithRuntime,
// nested or not, without a panic.
func FuzzArithRuntime(f *testing.F) {
	for _, s := range []string{`read y < f; echo $((y))`, `declare -i z=y; z=$(cat f)`, `echo ${a[$(id)]:1:y}`,
		`for ((i=0;i<y;i++)); do :; done`, `[[ $(cat f) -eq 16#ff ]]`, `declare -n r=y; let r++`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil {
			return
		}
		arithRuntime(file, false)
		arithRuntime(file, true)
	})
}
