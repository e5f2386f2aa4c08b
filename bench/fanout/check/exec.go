package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkExec compares `agent exec -i … --json`'s one step per host with
// parallel-ssh's output of the same command (-o DIR): each host ok in
// both, the same bytes (trailing newlines aside).
func checkExec(hosts []string, file, dir string) (map[string]string, error) {
	if file == "" || dir == "" {
		return nil, fmt.Errorf("exec: want agent's JSON output and parallel-ssh's -o directory")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	steps, done, err := readEvents(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bad := map[string]string{}
	for _, h := range hosts {
		s := steps[h]
		if len(s) != 1 || s[0].Status != "ok" || done[h] != "success" {
			bad[h] = fmt.Sprintf("agent: %d step events, done %q, want one ok step", len(s), done[h])
			continue
		}
		p, err := os.ReadFile(filepath.Join(dir, h))
		if err != nil {
			bad[h] = err.Error()
			continue
		}
		a, b := strings.TrimRight(s[0].Output, "\n"), strings.TrimRight(string(p), "\n")
		if a == "" || a != b {
			bad[h] = fmt.Sprintf("agent %q, parallel-ssh %q", a, b)
		}
	}
	return bad, nil
}
