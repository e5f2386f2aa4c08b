// Command launchsend measures what the launcher costs the host when agent
// sends it for a session (docs/bench.md, "Session 6: the launcher made
// small"): `gzip -dc` of the launcher gzip-compressed as agent compresses
// it, `sha256sum` of it, and a step under it (`-rules FILE -- /bin/true`,
// with a medium-like level's rules it computed). Each command runs N
// times, the launchers interleaved; the figure is the median of the
// child's CPU time (user and system, from its rusage).
//
//	go run ./bench/launchsend [-n N] LAUNCHER...
//
// The step needs a kernel with Landlock.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

func main() {
	n := flag.Int("n", 40, "runs of each command")
	flag.Parse()
	dir, err := os.MkdirTemp("", "launchsend-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	home, _ := os.UserHomeDir()
	spec := []string{"-write", "-caps", "nosystem", "-no-write", "/etc", "-no-write", home + "/.ssh", "-no-write", home + "/.bashrc",
		"-no-read", home + "/.ssh", "-no-read", home + "/.aws", "-no-read", home + "/.gnupg", "-public", "known_hosts", "-public", "*.pub",
		"-device", "/dev/null", "--"}
	type launcher struct {
		path, rules string
		raw, gz     []byte
		dc, sum, st []time.Duration
	}
	var ls []*launcher
	for i, p := range flag.Args() {
		raw, err := os.ReadFile(p)
		if err != nil {
			log.Fatal(err)
		}
		var b bytes.Buffer
		w := gzip.NewWriter(&b) // as engine/confine_remote.go compresses it
		w.Write(raw)
		w.Close()
		l := &launcher{path: p, raw: raw, gz: b.Bytes(), rules: filepath.Join(dir, strconv.Itoa(i)+".rules")}
		if out, err := exec.Command(p, append([]string{"-probe", "-compile", l.rules}, spec...)...).CombinedOutput(); err != nil {
			log.Fatalf("%s: compute the rules: %v: %s", p, err, out)
		}
		ls = append(ls, l)
	}
	out := filepath.Join(dir, "out")
	for i := 0; i < *n; i++ {
		for _, l := range ls {
			l.dc = append(l.dc, cpu(out, l.gz, "gzip", "-dc"))
			l.sum = append(l.sum, cpu(out, nil, "sha256sum", l.path))
			l.st = append(l.st, cpu(out, nil, l.path, "-rules", l.rules, "--", "/bin/true"))
		}
	}
	for _, l := range ls {
		fi, _ := os.Stat(l.rules)
		fmt.Printf("%s: %d bytes, gzip %d: gzip -dc %.2f ms, sha256sum %.2f ms; a step %.2f ms (rules %d bytes); median CPU of %d\n",
			l.path, len(l.raw), len(l.gz), ms(l.dc), ms(l.sum), ms(l.st), fi.Size(), *n)
	}
}

// cpu runs name with args, stdin and stdout to the file out, and returns
// its CPU time.
func cpu(out string, stdin []byte, name string, args ...string) time.Duration {
	c := exec.Command(name, args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	f, err := os.Create(out)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c.Stdout = f
	if err := c.Run(); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

func ms(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2]) / 1e6
}
