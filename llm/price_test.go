package llm

import (
	"strings"
	"testing"
)

func TestPricesConfig(t *testing.T) {
	fc, err := ParseFileConfig(strings.NewReader("llm:\n  model: m1\n  prices:\n    m1: {input: 0.5, output: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := fc.PriceOf("m1")
	if !ok || p.Cost(1_000_000, 500_000) != 1.5 {
		t.Fatalf("price %+v %v cost %v", p, ok, p.Cost(1_000_000, 500_000))
	}
	if _, ok := fc.PriceOf("other"); ok {
		t.Error("unpriced model has a price")
	}
	for _, bad := range []string{
		"llm:\n  prices:\n    m1: {input: 1, outptu: 2}\n", // a typo is not ignored
		"llm:\n  prices:\n    m1: {input: -1}\n",
		"llm:\n  prices:\n    m1: 3\n",
		"llm:\n  price:\n    m1: {input: 1}\n",
	} {
		if _, err := ParseFileConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
