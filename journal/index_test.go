package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fromWholeIndex is what Open said before journalIndexes: the
// whole index read afresh.
func fromWholeIndex(t *testing.T, index, host string) (next int, seen map[string]bool, restored bool) {
	t.Helper()
	recs, err := readIndex(index)
	if err != nil {
		t.Fatal(err)
	}
	next, seen = 1, map[string]bool{}
	for _, r := range recs {
		next = max(next, r.N+1)
		if r.Host == host {
			if r.Restored {
				restored = true
			} else {
				seen[r.Path] = true
			}
		}
	}
	return next, seen, restored
}

// Open reads only what was appended to the index since its last
// call, and sees the same as a whole read: other hosts' and other
// processes' records, a replaced file, an unterminated last line, a bad
// line named as readIndex names it.
func TestJournalIndexIncremental(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	index := filepath.Join(state, "sessions", "s1", "undo", "index.jsonl")
	check := func(what, host string) *Journal {
		t.Helper()
		j, err := Open(state, "s1", host)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		next, seen, restored := fromWholeIndex(t, index, host)
		if j.next != next || !reflect.DeepEqual(j.seen, seen) || j.restored != restored {
			t.Errorf("%s: journal of %s has next %d seen %v restored %v; the whole index says %d %v %v",
				what, host, j.next, j.seen, j.restored, next, seen, restored)
		}
		return j
	}
	appendRaw := func(text string) {
		f, err := os.OpenFile(index, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	line := func(r indexRecord) string {
		r.Time = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	a, err := Open(state, "s1", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record(ctx, "/a1", []byte("old"), true, 0o644); err != nil {
		t.Fatal(err)
	}
	b := check("second host", "b")
	if err := b.Record(ctx, "/b1", []byte("old b"), true, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.RecordDir(ctx, "/b2", ""); err != nil {
		t.Fatal(err)
	}
	if j := check("after the other host's records", "a"); !j.seen["/a1"] || j.next != 3 {
		t.Errorf("a: seen %v next %d", j.seen, j.next)
	}
	appendRaw(line(indexRecord{Host: "a", Path: "/a2", Dir: true}) + "\n" + line(indexRecord{Host: "c", Restored: true}) + "\n")
	if j := check("another process's records", "a"); !j.seen["/a2"] {
		t.Errorf("a: %v", j.seen)
	}
	if j := check("another host restored", "c"); !j.restored {
		t.Error("c not restored")
	}
	appendRaw(line(indexRecord{Host: "a", Path: "/a3", Dir: true})) // no newline yet
	if j := check("an unterminated line", "a"); j.seen["/a3"] {
		t.Errorf("a line without its newline counted: %v", j.seen)
	}
	appendRaw("\n" + line(indexRecord{Host: "a", Path: "/a4", Dir: true}) + "\n")
	if j := check("the line terminated", "a"); !j.seen["/a3"] || !j.seen["/a4"] {
		t.Errorf("a: %v", j.seen)
	}
	fi, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if off := journalIndexes.m[index].off; off != fi.Size() {
		t.Errorf("read up to byte %d of %d: the next open would read the index again", off, fi.Size())
	}

	// A writer killed mid-line (kill -9 can cut a write short) leaves a
	// fragment: readers pass over it, and the next append cuts it off
	// instead of gluing its own line to it.
	for i, cut := range []string{`{"host":"a","pa`, line(indexRecord{Host: "a", Path: "/a5", Dir: true})} {
		appendRaw(cut)
		if j := check("a cut last line", "a"); j.seen["/a5"] {
			t.Errorf("a cut line counted: %v", j.seen)
		}
		j := check("a cut last line", "b")
		after := fmt.Sprintf("/b-after-cut%d", i)
		if err := j.RecordDir(ctx, after, ""); err != nil {
			t.Fatal(err)
		}
		if j := check("after the cut line", "b"); !j.seen[after] {
			t.Errorf("b: %v", j.seen)
		}
		data, _ := os.ReadFile(index)
		recs, err := readIndex(index)
		if err != nil || strings.Count(string(data), "\n") != len(recs) || !strings.HasSuffix(string(data), "\n") {
			t.Errorf("the fragment %q is still in the index: %d records, %v\n%s", cut, len(recs), err, data)
		}
	}

	// A new file in its place is read from its start.
	tmp := index + ".new"
	if err := os.WriteFile(tmp, []byte(line(indexRecord{Host: "a", Path: "/only", Dir: true})+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, index); err != nil {
		t.Fatal(err)
	}
	if j := check("a replaced index", "a"); len(j.seen) != 1 || !j.seen["/only"] || j.next != 1 {
		t.Errorf("a: seen %v next %d", j.seen, j.next)
	}

	// Written anew in place (the same inode), longer than what was read:
	// its start differs, so it is read from the start.
	var fresh strings.Builder
	for _, p := range []string{"/x1", "/x2", "/x3"} {
		fresh.WriteString(line(indexRecord{Host: "a", Path: p, Dir: true}) + "\n")
	}
	if err := os.WriteFile(index, []byte(fresh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if j := check("an index written anew in place", "a"); len(j.seen) != 3 || j.seen["/only"] {
		t.Errorf("a: seen %v", j.seen)
	}

	// A bad line after lines already read: named as readIndex names it.
	appendRaw(line(indexRecord{Host: "a", Path: "/ok", Dir: true}) + "\n" + `{"host":"a","path":` + "\n")
	_, err = Open(state, "s1", "a")
	if err == nil || !strings.Contains(err.Error(), "index.jsonl: line 5:") {
		t.Errorf("bad line: %v", err)
	}
}
