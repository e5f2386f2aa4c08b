package journal

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A directory the session created is removed again by undo, after the
// files made in it; one that holds something the session did not put
// there is left, with an error, and the session stays unrestored.
func TestRestoreRemovesCreatedDirs(t *testing.T) {
	ctx := context.Background()
	for _, later := range []bool{false, true} {
		m := newMemFiles()
		j, err := Open(t.TempDir(), "20260101-000000-abcdef", "h")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"/srv/a", "/srv/a/b"} {
			if err := j.RecordDir(ctx, d, ""); err != nil {
				t.Fatal(err)
			}
			m.dirs[d] = true
		}
		m.change(t, j, "/srv/a/b/f", []byte("x"))
		if later {
			m.files["/srv/a/other"] = []byte("someone else's")
		}
		acts, err := j.Restore(ctx, m.restorer())
		if !later {
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range acts {
				got = append(got, a.Path)
			}
			if want := []string{"/srv/a/b/f", "/srv/a/b", "/srv/a"}; !slices.Equal(got, want) {
				t.Fatalf("restored %v, want %v (innermost first)", got, want)
			}
			if len(m.dirs) != 0 || len(m.files) != 0 {
				t.Fatalf("left dirs %v files %v", m.dirs, m.files)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "remove directory /srv/a") {
			t.Fatalf("undo over a directory holding a later file: err %v", err)
		}
		if string(m.files["/srv/a/other"]) != "someone else's" || !m.dirs["/srv/a"] {
			t.Fatal("undo lost a file the session did not make")
		}
		if _, err := j.Restore(ctx, m.restorer()); err == nil || strings.Contains(err.Error(), "already restored") {
			t.Fatalf("a half-done undo was marked restored: %v", err)
		}
	}
}

// A created directory's record with file fields is refused when read.
func TestIndexDirRecordChecked(t *testing.T) {
	for _, line := range []string{
		`{"host":"h","path":"/d","dir":true,"existed":true,"time":"2026-01-01T00:00:00Z"}`,
		`{"host":"h","path":"/d","dir":true,"n":3,"time":"2026-01-01T00:00:00Z"}`,
		`{"host":"h","path":"/d","dir":true,"changed":true,"new_sha256":"absent","time":"2026-01-01T00:00:00Z"}`,
	} {
		if _, err := parseIndex(strings.NewReader(line)); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
	if _, err := parseIndex(strings.NewReader(`{"host":"h","path":"/d","dir":true,"as":"root","time":"2026-01-01T00:00:00Z"}`)); err != nil {
		t.Error(err)
	}
}
