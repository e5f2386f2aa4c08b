package safety

import "testing"

// BenchmarkClassifyAwk: an ordinary awk pipeline, parsed and walked.
func BenchmarkClassifyAwk(b *testing.B) {
	p := DefaultPolicy()
	for b.Loop() {
		p.ClassifyCommand(`ps aux | awk 'NR>1 {m[$1]+=$6} END {for (u in m) printf "%s %d MB\n", u, m[u]/1024}'`)
	}
}

// BenchmarkClassifyBenign: the benign corpus, one command a loop.
func BenchmarkClassifyBenign(b *testing.B) {
	cmds, _ := corpus(b, "benign.txt")
	p := DefaultPolicy()
	for b.Loop() {
		for _, c := range cmds {
			p.ClassifyCommand(c)
		}
	}
}
