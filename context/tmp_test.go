package context

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr"
)

func TestTmpNest(t *testing.T) {
	for _, d := range []int{8, 12, 16, 18} {
		s := strings.Repeat("n < (", d) + "n" + strings.Repeat(") < n", d)
		start := time.Now()
		_, err := Evaluate(s, map[string]any{"n": 1})
		fmt.Println(d, len(s), time.Since(start), err)
		start = time.Now()
		_, err = expr.Compile(s)
		fmt.Println("  plain expr", time.Since(start), err)
	}
}
