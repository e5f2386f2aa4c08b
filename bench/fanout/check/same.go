package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// checkSame compares, host by host, what `agent run --json` collected
// (file) with what parallel-ssh's joined command printed (dir, its -o
// directory): the same kernel release, the same df table (header, device
// and mount point: the sizes move between two runs) and the same file
// read back. Any host whose results differ, or that either tool lacks, is
// bad.
func checkSame(hosts []string, file, dir string) (map[string]string, error) {
	if file == "" || dir == "" {
		return nil, fmt.Errorf("same: want agent's JSON output and parallel-ssh's -o directory")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	agent, err := agentOutputs(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bad := map[string]string{}
	for _, h := range hosts {
		a, ok := agent[h]
		if !ok {
			bad[h] = "agent has no three ok steps"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, h))
		if err != nil {
			bad[h] = err.Error()
			continue
		}
		p, ok := splitJoined(string(b))
		if !ok {
			bad[h] = fmt.Sprintf("parallel-ssh output %q", b)
			continue
		}
		if why := sameResults(a, p); why != "" {
			bad[h] = why
		}
	}
	return bad, nil
}

// sameResults compares one host's three outputs; "" when they agree.
func sameResults(a, p [3]string) string {
	a[2] = stripJournalNotes(a[2])
	for i, name := range []string{"uname -r", "df -h /", "the file"} {
		x, y := strings.TrimRight(a[i], "\n"), strings.TrimRight(p[i], "\n")
		if i == 1 {
			x, y = dfShape(x), dfShape(y)
		}
		if x != y {
			return fmt.Sprintf("%s: agent %q, parallel-ssh %q", name, a[i], p[i])
		}
	}
	return ""
}

// dfShape keeps what two runs of df -h / agree on: the header line, and
// each row's device and mount point.
func dfShape(s string) string {
	lines := strings.Split(s, "\n")
	out := []string{strings.Join(strings.Fields(lines[0]), " ")}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		out = append(out, f[0]+" "+f[len(f)-1])
	}
	return strings.Join(out, "\n")
}

// splitJoined splits the joined command's output: uname's line, df's
// lines, the file's line.
func splitJoined(s string) ([3]string, bool) {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 3 {
		return [3]string{}, false
	}
	last := len(lines) - 1
	return [3]string{lines[0], strings.Join(lines[1:last], ""), lines[last]}, true
}

// agentOutputs reads `agent run --json` events: the three step outputs
// of each host whose three steps are ok and whose done status is success.
func agentOutputs(r io.Reader) (map[string][3]string, error) {
	steps, done, err := readEvents(r)
	if err != nil {
		return nil, err
	}
	outs := map[string][3]string{}
	for h, s := range steps {
		var o [3]string
		oks := 0
		for _, e := range s {
			if e.Status == "ok" && e.Step >= 1 && e.Step <= 3 {
				o[e.Step-1] = e.Output
				oks++
			}
		}
		if oks == 3 && done[h] == "success" {
			outs[h] = o
		}
	}
	return outs, nil
}
