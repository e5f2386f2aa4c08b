// Command check verifies that a fan-out benchmark run (bench/fanout/run.sh)
// did the work on every host, so that a tool failing fast is never mistaken
// for a fast one. It exits 1 naming the first hosts that are wrong.
//
//	check files   -hosts FILE -root DIR
//	check agent   -hosts FILE -kernel K -root DIR OUTPUT.jsonl
//	check agent-log -hosts FILE -kernel K OUTDIR          (agent run --out OUTDIR)
//	check pssh    -hosts FILE -kernel K OUTDIR            (the three commands joined)
//	check pssh3   -hosts FILE -kernel K OUTDIR1 OUTDIR2 OUTDIR3
//	check ansible -hosts FILE -ok N STDOUT                (default callback's PLAY RECAP)
//	check ansible-json -hosts FILE -kernel K STDOUT       (ANSIBLE_STDOUT_CALLBACK=json)
//	check same    -hosts FILE OUTPUT.jsonl OUTDIR         (agent's results = parallel-ssh's)
//	check exec    -hosts FILE OUTPUT.jsonl OUTDIR         (agent exec -i's = parallel-ssh's, one command)
//
// files: DIR/HOST/f holds "HOST\n" for every host and DIR holds nothing else.
// The others check that each host's three outputs were collected: the
// kernel release K, df's header line, and the host's name read back.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: check files|agent|agent-log|pssh|pssh3|ansible|ansible-json|same|exec [flags] [ARG…]")
	}
	mode := args[0]
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	hostsFile := fs.String("hosts", "", "`FILE` with the expected host names, one a line")
	root := fs.String("root", "", "the run's file `DIR`")
	kernel := fs.String("kernel", "", "the expected `uname -r` output")
	ok := fs.Int("ok", 3, "ansible: expected ok= count per host")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	hosts, err := readHosts(*hostsFile)
	if err != nil {
		return err
	}
	var bad map[string]string
	switch mode {
	case "files":
		bad, err = checkFiles(hosts, *root)
	case "agent":
		bad, err = checkAgent(hosts, *kernel, one(fs))
	case "agent-log":
		bad, err = checkAgentLog(hosts, *kernel, one(fs))
	case "pssh":
		bad, err = checkPSSH(hosts, *kernel, one(fs))
	case "pssh3":
		if fs.NArg() != 3 {
			return errors.New("pssh3: want three output directories")
		}
		bad, err = checkPSSH3(hosts, *kernel, fs.Args())
	case "ansible":
		bad, err = checkRecap(hosts, *ok, one(fs))
	case "ansible-json":
		bad, err = checkAnsibleJSON(hosts, *kernel, one(fs))
	case "same":
		if fs.NArg() != 2 {
			return errors.New("same: want agent's JSON output and parallel-ssh's -o directory")
		}
		bad, err = checkSame(hosts, fs.Arg(0), fs.Arg(1))
	case "exec":
		if fs.NArg() != 2 {
			return errors.New("exec: want agent's JSON output and parallel-ssh's -o directory")
		}
		bad, err = checkExec(hosts, fs.Arg(0), fs.Arg(1))
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", mode, err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %d of %d hosts wrong: %s", mode, len(bad), len(hosts), summary(bad))
	}
	fmt.Printf("%s: all %d hosts ok\n", mode, len(hosts))
	return nil
}

func one(fs *flag.FlagSet) string {
	if fs.NArg() != 1 {
		return ""
	}
	return fs.Arg(0)
}

func readHosts(file string) ([]string, error) {
	if file == "" {
		return nil, errors.New("-hosts is required")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		hosts = append(hosts, strings.Fields(l)[0])
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: no hosts", file)
	}
	return hosts, nil
}

// summary names up to five wrong hosts with their reasons.
func summary(bad map[string]string) string {
	names := make([]string, 0, len(bad))
	for h := range bad {
		names = append(names, h)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, h := range names {
		if i == 5 {
			fmt.Fprintf(&b, "; …")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", h, bad[h])
	}
	return b.String()
}

func checkFiles(hosts []string, root string) (map[string]string, error) {
	if root == "" {
		return nil, errors.New("-root is required")
	}
	bad := map[string]string{}
	want := map[string]bool{}
	for _, h := range hosts {
		want[h] = true
		b, err := os.ReadFile(filepath.Join(root, h, "f"))
		switch {
		case err != nil:
			bad[h] = err.Error()
		case string(b) != h+"\n":
			bad[h] = fmt.Sprintf("file holds %q", b)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !want[e.Name()] {
			bad[e.Name()] = "unexpected entry in " + root
		}
	}
	return bad, nil
}

// outputs checks one host's three outputs.
func outputs(host, kernel, uname, df, file string) string {
	switch {
	case kernel == "":
		return "no -kernel given"
	case strings.TrimRight(uname, "\n") != kernel:
		return fmt.Sprintf("uname -r output %q", uname)
	case !strings.HasPrefix(df, "Filesystem"):
		return fmt.Sprintf("df output %q", df)
	case strings.TrimRight(stripJournalNotes(file), "\n") != host:
		return fmt.Sprintf("file read back %q", file)
	}
	return ""
}

// checkAgent reads `agent run --json` events: per host three step events
// with status ok and the expected outputs, and a done event with status
// success.
func checkAgent(hosts []string, kernel, file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bad, err := agentEvents(hosts, kernel, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return bad, nil
}

// agentEvent is one line of `agent run --json`, as far as the checks read it.
type agentEvent struct {
	Event  string `json:"event"`
	Host   string `json:"host"`
	Step   int    `json:"step"`
	Status string `json:"status"`
	Output string `json:"output"`
}

// readEvents reads r's JSON event lines: each host's step events, in the
// order they came, and its done status.
func readEvents(r io.Reader) (steps map[string][]agentEvent, done map[string]string, err error) {
	steps, done = map[string][]agentEvent{}, map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e agentEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, nil, fmt.Errorf("bad JSON line %.80q: %w", line, err)
		}
		switch e.Event {
		case "step":
			steps[e.Host] = append(steps[e.Host], e)
		case "done":
			done[e.Host] = e.Status
		}
	}
	return steps, done, sc.Err()
}

// agentEvents checks the JSON event lines read from r.
func agentEvents(hosts []string, kernel string, r io.Reader) (map[string]string, error) {
	steps, done, err := readEvents(r)
	if err != nil {
		return nil, err
	}
	bad := map[string]string{}
	for _, h := range hosts {
		s := steps[h]
		if len(s) != 3 {
			bad[h] = fmt.Sprintf("%d step events, want 3", len(s))
			continue
		}
		sort.SliceStable(s, func(i, j int) bool { return s[i].Step < s[j].Step })
		for _, e := range s {
			if e.Status != "ok" {
				bad[h] = fmt.Sprintf("step %d status %q: %.120q", e.Step, e.Status, e.Output)
			}
		}
		if bad[h] != "" {
			continue
		}
		if why := outputs(h, kernel, s[0].Output, s[1].Output, s[2].Output); why != "" {
			bad[h] = why
		} else if done[h] != "success" {
			bad[h] = fmt.Sprintf("done status %q", done[h])
		}
	}
	return bad, nil
}

// checkAgentLog reads the per-host logs of `agent run --out DIR`: each
// step's output lines are shown after "│ ", and the host's last line says
// "success on HOST:".
func checkAgentLog(hosts []string, kernel, dir string) (map[string]string, error) {
	if dir == "" {
		return nil, errors.New("want the --out directory")
	}
	bad := map[string]string{}
	for _, h := range hosts {
		b, err := os.ReadFile(filepath.Join(dir, h+".log"))
		if err != nil {
			bad[h] = err.Error()
			continue
		}
		if why := agentLogCheck(h, kernel, b); why != "" {
			bad[h] = why
		}
	}
	return bad, nil
}

// agentLogCheck checks one host's log; "" when it is right.
func agentLogCheck(host, kernel string, b []byte) string {
	var shown []string
	for _, l := range strings.Split(string(b), "\n") {
		if _, out, ok := strings.Cut(l, "│ "); ok {
			shown = append(shown, out)
		}
	}
	switch {
	case kernel == "":
		return "no -kernel given"
	case len(shown) < 3 || shown[0] != kernel || !strings.HasPrefix(shown[1], "Filesystem") || shown[len(shown)-1] != host:
		return fmt.Sprintf("outputs shown %q", shown)
	case !strings.Contains(string(b), "\nsuccess on "+host+":"):
		return "no success line"
	}
	return ""
}

// checkPSSH reads parallel-ssh -o OUTDIR files of the joined command:
// uname's line, df's lines, the file's line.
func checkPSSH(hosts []string, kernel, dir string) (map[string]string, error) {
	bad := map[string]string{}
	for _, h := range hosts {
		b, err := os.ReadFile(filepath.Join(dir, h))
		if err != nil {
			bad[h] = err.Error()
			continue
		}
		if why := psshJoined(h, kernel, b); why != "" {
			bad[h] = why
		}
	}
	return bad, nil
}

// psshJoined checks one host's output of the joined command.
func psshJoined(host, kernel string, b []byte) string {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 4 {
		return fmt.Sprintf("output %q", b)
	}
	last := len(lines) - 1
	if lines[last] == "" {
		last--
	}
	return outputs(host, kernel, lines[0], strings.Join(lines[1:last], ""), lines[last])
}

// checkPSSH3 reads the output directories of three parallel-ssh runs.
func checkPSSH3(hosts []string, kernel string, dirs []string) (map[string]string, error) {
	bad := map[string]string{}
	for _, h := range hosts {
		var out [3]string
		for i, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, h))
			if err != nil {
				bad[h] = err.Error()
				break
			}
			out[i] = string(b)
		}
		if bad[h] != "" {
			continue
		}
		if why := outputs(h, kernel, out[0], out[1], out[2]); why != "" {
			bad[h] = why
		}
	}
	return bad, nil
}

var recapLine = regexp.MustCompile(`^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// checkRecap reads ansible-playbook's default output: every host's PLAY
// RECAP line must say ok=N and nothing unreachable or failed.
func checkRecap(hosts []string, ok int, file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	bad, err := recapCheck(hosts, ok, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return bad, nil
}

// recapCheck checks the PLAY RECAP in ansible-playbook's output b.
func recapCheck(hosts []string, ok int, b []byte) (map[string]string, error) {
	_, recap, found := strings.Cut(string(b), "PLAY RECAP")
	if !found {
		return nil, errors.New("no PLAY RECAP")
	}
	got := map[string][]int{}
	for _, l := range strings.Split(recap, "\n") {
		m := recapLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		var n []int
		for _, s := range m[2:] {
			v, _ := strconv.Atoi(s)
			n = append(n, v)
		}
		got[m[1]] = n
	}
	bad := map[string]string{}
	for _, h := range hosts {
		n, found := got[h]
		switch {
		case !found:
			bad[h] = "not in PLAY RECAP"
		case n[0] != ok || n[2] != 0 || n[3] != 0:
			bad[h] = fmt.Sprintf("ok=%d unreachable=%d failed=%d, want ok=%d", n[0], n[2], n[3], ok)
		}
	}
	return bad, nil
}

// checkAnsibleJSON reads the json stdout callback's output: the last three
// tasks' stdout per host.
func checkAnsibleJSON(hosts []string, kernel, file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	bad, err := ansibleJSON(hosts, kernel, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return bad, nil
}

// ansibleJSON checks the json callback's output b.
func ansibleJSON(hosts []string, kernel string, b []byte) (map[string]string, error) {
	var doc struct {
		Plays []struct {
			Tasks []struct {
				Hosts map[string]struct {
					Stdout string `json:"stdout"`
					Failed bool   `json:"failed"`
				} `json:"hosts"`
			} `json:"tasks"`
		} `json:"plays"`
	}
	if i := bytes.IndexByte(b, '{'); i > 0 {
		b = b[i:] // warnings may come first
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Plays) != 1 || len(doc.Plays[0].Tasks) < 3 {
		return nil, errors.New("want one play with at least three tasks")
	}
	tasks := doc.Plays[0].Tasks[len(doc.Plays[0].Tasks)-3:]
	bad := map[string]string{}
	for _, h := range hosts {
		var out [3]string
		for i, t := range tasks {
			r, found := t.Hosts[h]
			if !found || r.Failed {
				bad[h] = fmt.Sprintf("task %d missing or failed", i+1)
				break
			}
			out[i] = r.Stdout
		}
		if bad[h] != "" {
			continue
		}
		if why := outputs(h, kernel, out[0], out[1], out[2]); why != "" {
			bad[h] = why
		}
	}
	return bad, nil
}

// stripJournalNotes drops the notes agent's undo journal appends to a
// command's output ("\n\n[warning: undo journal: …]" lines, e.g. for the
// directory mkdir -p created): what the command printed is before them.
func stripJournalNotes(out string) string {
	for {
		t := strings.TrimRight(out, "\n")
		i := strings.LastIndex(t, "\n[warning: undo journal: ")
		if i < 0 || !strings.HasSuffix(t, "]") || strings.Contains(t[i+1:], "\n") {
			return out
		}
		out = strings.TrimRight(t[:i], "\n") + "\n"
	}
}
