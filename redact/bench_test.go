package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// benignCorpus is about size bytes of output holding no secret: the
// repository's documentation and Go source (prose, code, tables, words
// like password and token), and dumps of pseudo-random bytes in the
// layouts the set reads (hexdump -C, base64 wrapped at 76, hex lines).
func benignCorpus(tb testing.TB, size int) string {
	tb.Helper()
	var b strings.Builder
	var files []string
	for _, glob := range []string{"../docs/*.md", "../README.md", "../*/*.go", "../cmd/agent/*.go"} {
		m, _ := filepath.Glob(glob)
		for _, f := range m {
			// test files hold made-up secrets on purpose: not benign
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 20 {
		tb.Fatalf("corpus: %d files", len(files))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; b.Len() < size; i++ {
		switch i % 4 {
		case 0, 1:
			data, err := os.ReadFile(files[rng.IntN(len(files))])
			if err != nil {
				tb.Fatal(err)
			}
			b.Write(data[:min(len(data), 16<<10)])
		case 2:
			blob := make([]byte, 2048)
			for j := range blob {
				blob[j] = byte(rng.Uint32())
			}
			b.WriteString(hex.Dump(blob))
		case 3:
			blob := make([]byte, 4096)
			for j := range blob {
				blob[j] = byte(rng.Uint32())
			}
			s := base64.StdEncoding.EncodeToString(blob)
			for len(s) > 76 {
				b.WriteString(s[:76] + "\n")
				s = s[76:]
			}
			b.WriteString(hex.EncodeToString(blob[:512]) + "\n")
		}
	}
	return b.String()[:size]
}

// randomSecrets are n values of the kinds a session holds: API keys,
// passwords, hex tokens, a private key's lines.
func randomSecrets(n int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	out := make([]string, n)
	for i := range out {
		l := 20 + rng.IntN(32)
		b := make([]byte, l)
		for j := range b {
			b[j] = alnum[rng.IntN(len(alnum))]
		}
		switch i % 4 {
		case 0:
			out[i] = "sk-" + string(b)
		case 1:
			out[i] = string(b) + "!#"
		case 2:
			out[i] = hex.EncodeToString(b)[:32]
		case 3:
			out[i] = base64.StdEncoding.EncodeToString(append(b, b...))[:48]
		}
	}
	return out
}

func fullSet(secrets []string) *Set {
	s := NewSet()
	for i, v := range secrets {
		s.Add(fmt.Sprintf("S%d", i), v, Known)
	}
	return s
}

// On a benign corpus, redaction keeps at least 99% of the bytes: the
// patterns' own hits on words like password in prose and code, what they
// teach the set, and 48 known secrets' shapes together.
func TestBenignKept(t *testing.T) {
	corpus := benignCorpus(t, 1<<20)
	set := fullSet(randomSecrets(48))
	// the set learns from the whole corpus first (once seen, always
	// hidden), then redacts it again
	set.String(corpus)
	got := set.String(corpus)
	lost := removed(corpus, got)
	kept := 1 - float64(lost)/float64(len(corpus))
	t.Logf("kept %.4f of %d bytes (%d removed), %d values in the set", kept, len(corpus), lost, set.Len())
	if kept < 0.99 {
		t.Errorf("kept %.4f < 0.99", kept)
	}
}

// removed is how many bytes of in are missing from out: in's length less
// the bytes of out outside its marks.
func removed(in, out string) int {
	keptBytes := len(out)
	for rest := out; ; {
		i := strings.Index(rest, "[REDACTED")
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		keptBytes -= j + 1
		rest = rest[i+j+1:]
	}
	return len(in) - keptBytes
}

// BenchmarkRedact is the cost per MiB of output: the patterns alone (what
// every output went through before the set) and with a set of 8 or 48
// known secrets in all their shapes, and the shapes alone; on the mixed
// benign corpus (prose and Go code full of the patterns' words: their
// worst case) and on what BenchmarkStep1MiB prints (base64 of random
// bytes).
func BenchmarkRedact(b *testing.B) {
	for _, c := range []struct{ name, text string }{{"mixed", benignCorpus(b, 1<<20)}, {"base64", base64Output()}} {
		corpus := c.text
		b.Run(c.name+"/patterns", func(b *testing.B) {
			b.SetBytes(int64(len(corpus)))
			t0 := cpuTime()
			for b.Loop() {
				String(corpus)
			}
			reportCPU(b, t0)
		})
		for _, n := range []int{8, 48} {
			set := fullSet(randomSecrets(n))
			set.String(corpus)
			b.Run(fmt.Sprintf("%s/set-%d", c.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(corpus)))
				t0 := cpuTime()
				for b.Loop() {
					set.String(corpus)
				}
				reportCPU(b, t0)
			})
			// the shapes alone: what the set adds to the patterns
			b.Run(fmt.Sprintf("%s/shapes-%d", c.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(corpus)))
				t0 := cpuTime()
				for b.Loop() {
					set.values(corpus, true, func(string) string { return Redacted })
				}
				reportCPU(b, t0)
			})
		}
	}
}

// BenchmarkRedactChunks is BenchmarkRedact's base64 output as a step's
// output events carry it (executor/stream.go): pieces of at most 32 KiB
// (each pipe read, as before session 15) or 128 or 256 KiB (outputChunk:
// a fast command's) ending at a line's end, each redacted on its own (not
// through the memo: a step's pieces come once), with the 48 secrets of
// bench/redact.sh (alike: one prefix) and with BenchmarkRedact's.
func BenchmarkRedactChunks(b *testing.B) {
	for _, size := range []int{32 << 10, 128 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dK", size>>10), func(b *testing.B) { benchRedactChunks(b, size) })
	}
}

func benchRedactChunks(b *testing.B, size int) {
	text := base64Output()
	var chunks []string
	for rest := text; len(rest) > 0; {
		cut := min(len(rest), size)
		if i := strings.LastIndexByte(rest[:cut], '\n'); i >= 0 {
			cut = i + 1
		}
		chunks = append(chunks, rest[:cut])
		rest = rest[cut:]
	}
	alike := make([]string, 48)
	for i := range alike {
		alike[i] = fmt.Sprintf("sk-Zq7Kx9Wm2Rt5Yp8Lb3-%03d", i)
	}
	for _, c := range []struct {
		name    string
		secrets []string
	}{{"alike-48", alike}, {"set-48", randomSecrets(48)}} {
		set := fullSet(c.secrets)
		set.String(chunks[0])
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			t0 := cpuTime()
			for b.Loop() {
				for _, ch := range chunks {
					set.named(ch, false) // not remembered: a step's pieces come once
				}
			}
			reportCPU(b, t0)
		})
		// as in a real step, where the command, the pipe and the reader
		// run between two pieces: the caches emptied before each (8 MiB
		// written, not counted), the thread's CPU time counted
		b.Run(c.name+"/cold", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			junk := make([]byte, 8<<20)
			var d time.Duration
			for b.Loop() {
				for _, ch := range chunks {
					for i := 0; i < len(junk); i += 64 {
						junk[i]++
					}
					t0 := threadTime()
					set.named(ch, false)
					d += threadTime() - t0
				}
			}
			b.ReportMetric(float64(d)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// threadTime is the CPU time the calling thread has used.
func threadTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// BenchmarkStep1MiB is what the shapes' cost compares with: a local step
// printing 1 MiB (base64 of random bytes), run by sh as agent runs one.
func BenchmarkStep1MiB(b *testing.B) {
	b.SetBytes(1 << 20)
	for b.Loop() {
		out, err := exec.Command("sh", "-c", "head -c 786432 /dev/urandom | base64").Output()
		if err != nil || len(out) < 1<<20 {
			b.Fatal(err, len(out))
		}
	}
}

// cpuTime is the CPU time this process has used: on a loaded machine
// (other jobs sharing its cores) wall time per op is mostly waiting, and
// cpu-ms/op is the redaction's own cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since t0 (cpuTime) as cpu-ms/op.
func reportCPU(b *testing.B, t0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-t0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkScanGates is the gate words' scan alone, per MiB: the pair
// filter (scanGates) and the automaton reading every byte.
func BenchmarkScanGates(b *testing.B) {
	for _, c := range []struct{ name, text string }{{"mixed", benignCorpus(b, 1<<20)}, {"base64", base64Output()}} {
		for _, s := range []struct {
			name string
			scan func(string) *gateScan
		}{{"filter", scanGates}, {"automaton", scanGatesAutomaton}} {
			b.Run(c.name+"/"+s.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				t0 := cpuTime()
				for b.Loop() {
					s.scan(c.text)
				}
				reportCPU(b, t0)
			})
		}
	}
}

// base64Output is what BenchmarkStep1MiB prints: 1 MiB of base64 of
// random bytes, in lines of 76.
func base64Output() string {
	rng := rand.New(rand.NewPCG(5, 6))
	blob := make([]byte, 786432)
	for i := range blob {
		blob[i] = byte(rng.Uint32())
	}
	var b64 strings.Builder
	for s := base64.StdEncoding.EncodeToString(blob); len(s) > 0; {
		n := min(76, len(s))
		b64.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b64.String()
}
