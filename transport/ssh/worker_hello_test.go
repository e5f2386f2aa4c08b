package ssh

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestShellHelloReadInBlocks: the shell worker's script, sent first on
// its standard input, is read by bash in blocks (read -N), not a byte a
// read(2) (bash reads a script from a pipe so): its read calls are
// counted in /proc/PID/io. A shell whose read has no -N (dash) reads it
// as its script and answers all the same; and the body is ASCII, which
// read -N counts in characters.
func TestShellHelloReadInBlocks(t *testing.T) {
	hello := shellHello("0123456789abcdef0123456789abcdef", false)
	for i, c := range []byte(hello) {
		if c >= 0x80 {
			t.Fatalf("the hello's byte %d is not ASCII: %q", i, hello[max(0, i-20):i+1])
		}
	}
	for _, sh := range [][]string{{"bash", "--noprofile", "--norc", "-s"}, {"/bin/sh", "-s"}} {
		t.Run(sh[0], func(t *testing.T) {
			if _, err := exec.LookPath(sh[0]); err != nil {
				t.Skip(err)
			}
			cmd := exec.Command(sh[0], sh[1:]...)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			nonce := "0123456789abcdef0123456789abcdef"
			if _, err := io.WriteString(in, shellHello(nonce, false)); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(out)
			var lines []string
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("no ready marker: %q, %v", lines, err)
				}
				if line == nonce+":0:0\n" {
					break
				}
				lines = append(lines, line)
			}
			if len(lines) != 2 || lines[1] != os.Getenv("HOME")+"\n" {
				t.Errorf("before the marker: %q", lines)
			}
			b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/io")
			if err != nil {
				t.Skip(err)
			}
			reads := -1
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "syscr: "); ok {
					reads, _ = strconv.Atoi(v)
				}
			}
			t.Logf("%s: %d read calls for a hello of %d bytes (%q)", sh[0], reads, len(hello), lines[0])
			if sh[0] == "bash" && lines[0] == "sized\n" && reads > len(hello)/4 {
				t.Errorf("bash made %d read calls for a hello of %d bytes: read a byte at a time", reads, len(hello))
			}
		})
	}
}
