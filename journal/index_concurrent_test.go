package journal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The hosts of a batch run share one session's index and record into it
// at once, from goroutines and from other agent processes. Every Open and
// every Record must succeed however the appends and reads interleave: at
// 2,000 hosts one host failed with "the last line changed while it was
// read" (issue 31).

const (
	concurrentWriters = 200 // per test: goroutines, or processes × goroutines
	writerRounds      = 6
	writerProcs       = 20
)

// writerPath is a long path (a few KiB, as a deep tree's can be), so that
// many index lines straddle a page and an append is seen half-done.
func writerPath(host string, i int) string {
	return "/" + strings.Repeat("d", 2500) + "/" + host + "/" + strconv.Itoa(i)
}

// writeAsHost opens the journal afresh for each record, as a run opens a
// host's journal per step, and records files and directories.
func writeAsHost(state, host string) error {
	ctx := context.Background()
	for i := range writerRounds {
		j, err := Open(state, "s1", host)
		if err != nil {
			return fmt.Errorf("%s round %d: %w", host, i, err)
		}
		if i > 0 && !j.seen[writerPath(host, i-1)] {
			return fmt.Errorf("%s round %d: its own record %d is not seen", host, i, i-1)
		}
		if i%2 == 0 {
			err = j.Record(ctx, writerPath(host, i), []byte("old "+host), true, 0o644)
		} else {
			err = j.RecordDir(ctx, writerPath(host, i), "")
		}
		if err != nil {
			return fmt.Errorf("%s round %d: %w", host, i, err)
		}
	}
	return nil
}

// writeHosts runs writeAsHost for each host at once.
func writeHosts(state string, hosts []string) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = writeAsHost(state, h)
		}()
	}
	wg.Wait()
	return errs
}

// checkAllRecorded reads the whole index: every host's every record is
// there once, and blob numbers are distinct.
func checkAllRecorded(t *testing.T, state string, hosts []string) {
	t.Helper()
	recs, err := readIndex(state + "/sessions/s1/undo/index.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(hosts)*writerRounds {
		t.Errorf("%d records, want %d", len(recs), len(hosts)*writerRounds)
	}
	seen := map[string]int{}
	blobs := map[int]bool{}
	for _, r := range recs {
		seen[r.Host+" "+r.Path]++
		if r.N != 0 {
			if blobs[r.N] {
				t.Errorf("blob %d recorded twice", r.N)
			}
			blobs[r.N] = true
		}
	}
	for _, h := range hosts {
		for i := range writerRounds {
			if n := seen[h+" "+writerPath(h, i)]; n != 1 {
				t.Errorf("%s record %d: %d times", h, i, n)
			}
		}
	}
}

func hostNames(prefix string, n int) []string {
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return hosts
}

func TestJournalIndexConcurrentGoroutines(t *testing.T) {
	state := t.TempDir()
	hosts := hostNames("h", concurrentWriters)
	for _, err := range writeHosts(state, hosts) {
		if err != nil {
			t.Error(err)
		}
	}
	checkAllRecorded(t, state, hosts)
}

// TestJournalIndexConcurrentProcesses runs writerProcs processes of
// concurrentWriters/writerProcs hosts each, all on one index.
func TestJournalIndexConcurrentProcesses(t *testing.T) {
	if os.Getenv("JOURNAL_INDEX_WRITER") != "" {
		t.Skip("a writer process")
	}
	state := t.TempDir()
	per := concurrentWriters / writerProcs
	var all []string
	cmds := make([]*exec.Cmd, writerProcs)
	outs := make([]strings.Builder, writerProcs)
	for p := range writerProcs {
		prefix := fmt.Sprintf("p%02d-", p)
		all = append(all, hostNames(prefix, per)...)
		cmd := exec.Command(os.Args[0], "-test.run=^TestJournalIndexWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "JOURNAL_INDEX_WRITER="+state+"|"+prefix+"|"+strconv.Itoa(per))
		cmd.Stdout, cmd.Stderr = &outs[p], &outs[p]
		cmds[p] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process %d: %v\n%s", p, err, outs[p].String())
		}
	}
	checkAllRecorded(t, state, all)
}

// TestJournalIndexWriterProcess is one writer process of
// TestJournalIndexConcurrentProcesses.
func TestJournalIndexWriterProcess(t *testing.T) {
	arg := os.Getenv("JOURNAL_INDEX_WRITER")
	if arg == "" {
		t.Skip("run by TestJournalIndexConcurrentProcesses")
	}
	f := strings.Split(arg, "|")
	n, _ := strconv.Atoi(f[2])
	for _, err := range writeHosts(f[0], hostNames(f[1], n)) {
		if err != nil {
			t.Error(err)
		}
	}
}
