package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// listing builds TreeListCommand output: header, then entries of nine
// fields each.
func listing(entries ...string) []byte {
	return []byte("1000\n1000\n2049\n" + strings.Join(entries, ""))
}

func entry(fields ...string) string { return strings.Join(fields, "\x00") + "\x00" }

func TestParseTreeListing(t *testing.T) {
	root := entry("d", "755", "1000", "1000", "3", "2049", "4096", "", "")
	good := listing(root, entry("l", "777", "1000", "1000", "1", "2049", "4", "z/l", "../x"),
		entry("d", "1777", "1000", "1000", "2", "2049", "4096", "z", ""),
		entry("f", "4755", "1000", "1000", "1", "2049", "5", "a b\nc", ""))
	l, err := ParseTreeListing(good)
	if err != nil {
		t.Fatal(err)
	}
	if l.UID != 1000 || l.GID != 1000 || l.ParentDev != 2049 || len(l.Entries) != 4 {
		t.Fatalf("%+v", l)
	}
	var paths []string
	for _, e := range l.Entries {
		paths = append(paths, e.Path)
	}
	if got := strings.Join(paths, "|"); got != ".|a b\nc|z|z/l" {
		t.Errorf("order %q, want the root first, then sorted", got)
	}
	if e := l.Entries[1]; e.Type != 'f' || e.Mode != 0o4755 || e.Size != 5 || e.Nlink != 1 {
		t.Errorf("%+v", e)
	}
	if e := l.Entries[3]; e.Type != 'l' || e.Link != "../x" {
		t.Errorf("%+v", e)
	}
	if _, err := ParseTreeListing([]byte("absent\n")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	for name, in := range map[string][]byte{
		"empty":         nil,
		"no header":     []byte("1000\n"),
		"bad uid":       []byte("-1\n0\n0\n" + root),
		"bad dev":       []byte("0\n0\nx\n" + root),
		"no entries":    listing(),
		"no final NUL":  listing(strings.TrimSuffix(root, "\x00")),
		"short entry":   listing(entry("d", "755", "0")),
		"bad type":      listing(entry("dd", "755", "1000", "1000", "3", "2049", "4096", "", "")),
		"bad mode":      listing(entry("d", "9", "1000", "1000", "3", "2049", "4096", "", "")),
		"big mode":      listing(entry("d", "17777", "1000", "1000", "3", "2049", "4096", "", "")),
		"signed size":   listing(root, entry("f", "644", "1000", "1000", "1", "2049", "+5", "a", "")),
		"root not .":    listing(entry("d", "755", "1000", "1000", "3", "2049", "4096", "a", "")),
		"second root":   listing(root, root),
		"climbs":        listing(root, entry("f", "644", "1000", "1000", "1", "2049", "5", "../x", "")),
		"absolute":      listing(root, entry("f", "644", "1000", "1000", "1", "2049", "5", "/etc/x", "")),
		"unclean":       listing(root, entry("f", "644", "1000", "1000", "1", "2049", "5", "a//b", "")),
		"link no dest":  listing(root, entry("l", "777", "1000", "1000", "1", "2049", "5", "a", "")),
		"file w/ dest":  listing(root, entry("f", "644", "1000", "1000", "1", "2049", "5", "a", "x")),
		"absent+more":   []byte("absent\nx"),
		"trailing junk": append(listing(root), 'x'),
	} {
		if _, err := ParseTreeListing(in); err == nil {
			t.Errorf("%s: accepted %q", name, in)
		}
	}
}

// TestTreeListCommand runs the listing command on a real tree with a
// quote, a newline and a space in names, and parses it.
func TestTreeListCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's a\ntree")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub dir"), 0o750))
	must(os.WriteFile(filepath.Join(dir, "sub dir", "f\nx"), []byte("hello"), 0o600))
	must(os.Symlink("../nowhere", filepath.Join(dir, "sub dir", "l")))
	out, err := exec.Command("/bin/sh", "-c", TreeListCommand(dir, 10)).Output()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseTreeListing(out)
	if err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if len(l.Entries) != 4 || l.Entries[0].Dev != l.ParentDev || l.UID != os.Getuid() {
		t.Fatalf("%+v", l)
	}
	if e := l.Entries[1]; e.Path != "sub dir" || e.Type != 'd' || e.Mode != 0o750 {
		t.Errorf("%+v", e)
	}
	if e := l.Entries[2]; e.Path != "sub dir/f\nx" || e.Type != 'f' || e.Size != 5 || e.Mode != 0o600 {
		t.Errorf("%+v", e)
	}
	if e := l.Entries[3]; e.Path != "sub dir/l" || e.Link != "../nowhere" {
		t.Errorf("%+v", e)
	}
	// At most max+1 entries are listed.
	out, err = exec.Command("/bin/sh", "-c", TreeListCommand(dir, 1)).Output()
	if l, err = ParseTreeListing(out); err != nil || len(l.Entries) != 2 {
		t.Errorf("max 1: %d entries, %v", len(l.Entries), err)
	}
	out, _ = exec.Command("/bin/sh", "-c", TreeListCommand(dir+"/missing", 1)).Output()
	if _, err := ParseTreeListing(out); !errors.Is(err, ErrTreeAbsent) {
		t.Errorf("missing: %v", err)
	}
}

func FuzzParseTreeListing(f *testing.F) {
	f.Add(listing(entry("d", "755", "0", "0", "2", "1", "4096", "", ""), entry("f", "644", "0", "0", "1", "1", "3", "a", "")))
	f.Add([]byte("absent\n"))
	f.Add([]byte("0\n0\n0\n\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseTreeListing(b)
		if err != nil {
			return
		}
		if len(l.Entries) == 0 || l.Entries[0].Path != "." {
			t.Fatalf("accepted a listing without its root first: %+v", l)
		}
		for _, e := range l.Entries {
			if checkRelPath(e.Path) != nil || e.Mode > 0o7777 || e.Size < 0 {
				t.Fatalf("accepted %+v", e)
			}
		}
	})
}

const sum0 = "0000000000000000000000000000000000000000000000000000000000000000"

func TestParseManifest(t *testing.T) {
	good := `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"file","mode":"0644","size":1,"sha256":"` + sum0 + `","n":2},` +
		`{"path":"d","type":"dir","mode":"0700"},{"path":"d/l","type":"symlink","link":"../a"}]`
	if m, err := parseManifest([]byte(good)); err != nil || len(m) != 4 {
		t.Fatalf("%v %v", m, err)
	}
	for name, in := range map[string]string{
		"not json":      `[`,
		"empty":         `[]`,
		"trailing":      `[{"path":".","type":"dir","mode":"0755"}] []`,
		"unknown field": `[{"path":".","type":"dir","mode":"0755","uid":0}]`,
		"root not dir":  `[{"path":".","type":"file","mode":"0644","sha256":"` + sum0 + `","n":1}]`,
		"root missing":  `[{"path":"a","type":"dir","mode":"0755"}]`,
		"two roots":     `[{"path":".","type":"dir","mode":"0755"},{"path":".","type":"dir","mode":"0755"}]`,
		"out of order":  `[{"path":".","type":"dir","mode":"0755"},{"path":"b","type":"dir","mode":"0755"},{"path":"a","type":"dir","mode":"0755"}]`,
		"orphan":        `[{"path":".","type":"dir","mode":"0755"},{"path":"x/a","type":"symlink","link":"y"}]`,
		"in a file":     `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"symlink","link":"y"},{"path":"a/b","type":"symlink","link":"y"}]`,
		"climbs":        `[{"path":".","type":"dir","mode":"0755"},{"path":"../a","type":"symlink","link":"y"}]`,
		"absolute":      `[{"path":".","type":"dir","mode":"0755"},{"path":"/a","type":"symlink","link":"y"}]`,
		"bad mode":      `[{"path":".","type":"dir","mode":"99"}]`,
		"file no blob":  `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"file","mode":"0644","sha256":"` + sum0 + `"}]`,
		"file bad sum":  `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"file","mode":"0644","sha256":"00","n":1}]`,
		"dir with blob": `[{"path":".","type":"dir","mode":"0755","n":3}]`,
		"link no dest":  `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"symlink"}]`,
		"link w/ mode":  `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"symlink","link":"y","mode":"0777"}]`,
		"device":        `[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"char"}]`,
	} {
		if _, err := parseManifest([]byte(in)); err == nil {
			t.Errorf("%s: accepted %s", name, in)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`[{"path":".","type":"dir","mode":"0755"},{"path":"d","type":"dir","mode":"0700"},{"path":"d/l","type":"symlink","link":"../a"}]`))
	f.Add([]byte(`[{"path":".","type":"dir","mode":"0755"},{"path":"a","type":"file","mode":"0644","size":1,"sha256":"` + sum0 + `","n":2}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil {
			return
		}
		dirs := map[string]bool{}
		for i, e := range m {
			if checkRelPath(e.Path) != nil || i > 0 && !dirs[filepath.Dir(e.Path)] || e.check() != nil {
				t.Fatalf("accepted %+v", e)
			}
			if e.Type == "dir" {
				dirs[e.Path] = true
			}
		}
	})
}

func TestTreeIndexRecords(t *testing.T) {
	rec := func(s string) string {
		return `{"host":"h","path":"/t","time":"2026-01-01T00:00:00Z",` + s + "}\n"
	}
	ok := []string{
		rec(`"tree":true,"existed":true,"n":3,"size":10,"sha256":"` + sum0 + `"`),
		rec(`"changed":true,"new_sha256":"tree:` + sum0 + `"`),
	}
	for _, in := range ok {
		if _, err := parseIndex(strings.NewReader(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	for _, in := range []string{
		rec(`"tree":true,"n":3,"sha256":"` + sum0 + `"`),                              // not existed
		rec(`"tree":true,"existed":true,"sha256":"` + sum0 + `"`),                     // no manifest
		rec(`"tree":true,"existed":true,"n":3,"sha256":"00"`),                         // bad digest
		rec(`"tree":true,"existed":true,"n":3,"mode":"0755","sha256":"` + sum0 + `"`), // mode outside the manifest
		rec(`"tree":true,"dir":true,"existed":true,"n":3,"sha256":"` + sum0 + `"`),
		rec(`"tree":true,"existed":true,"n":3,"size":-1,"sha256":"` + sum0 + `"`),
		rec(`"changed":true,"new_sha256":"tree:00"`),
		rec(`"changed":true,"new_sha256":"trees:` + sum0 + `"`),
	} {
		if _, err := parseIndex(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
}

// memTree is an in-memory TreeReader over a real directory (for State).
type memTree struct{ root string }

func (m memTree) ReadFile(_ context.Context, p string, w io.Writer) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

func (m memTree) ListTree(_ context.Context, root string) (TreeListing, error) {
	out, err := exec.Command("/bin/sh", "-c", TreeListCommand(root, MaxTreeEntries)).Output()
	if err != nil {
		return TreeListing{}, err
	}
	return ParseTreeListing(out)
}

func TestState(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := func(p string) string {
		s, err := State(ctx, memTree{}, p, StateBounds{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := st(filepath.Join(dir, "missing")); got != Absent {
		t.Errorf("missing: %s", got)
	}
	if got := st(f); got != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("file: %s", got)
	}
	d1 := st(dir)
	if !strings.HasPrefix(d1, TreeStatePrefix) {
		t.Fatalf("dir: %s", d1)
	}
	for _, change := range []func() error{
		func() error { return os.WriteFile(f, []byte("y"), 0o644) },
		func() error { return os.Chmod(f, 0o600) },
		func() error { return os.Symlink("f", filepath.Join(dir, "l")) },
		func() error { return os.Mkdir(filepath.Join(dir, "e"), 0o755) },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		d2 := st(dir)
		if d2 == d1 {
			t.Errorf("a change left the tree's state %s", d1)
		}
		d1 = d2
	}
	if st(dir) != d1 {
		t.Error("the state of an unchanged tree differs")
	}
}

// TestTreeListCommandBusyBox: on a host whose find has no -printf
// (BusyBox) the listing is the same as GNU find's, and a name with a
// newline fails it (a line of find's output is one entry there).
func TestTreeListCommandBusyBox(t *testing.T) {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no busybox (apt-get install busybox-static)")
		}
		t.Skip("no busybox")
	}
	bin := t.TempDir()
	for _, c := range []string{"sh", "find", "stat", "head", "readlink", "id", "printf"} {
		if err := os.Symlink(bb, filepath.Join(bin, c)); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "it's a tree")
	for _, p := range []string{"sub dir/deeper"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o2750); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "sub dir"), 0o2750)
	os.WriteFile(filepath.Join(dir, "sub dir", " f"), []byte("hello"), 0o4711)
	os.Chmod(filepath.Join(dir, "sub dir", " f"), 0o4711)
	os.Symlink("../no where", filepath.Join(dir, "sub dir", "l"))
	run := func(shell string, path string) (TreeListing, error) {
		cmd := exec.Command(shell, "-c", TreeListCommand(dir, 10))
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.Output()
		if err != nil {
			return TreeListing{}, fmt.Errorf("%v: %q", err, out)
		}
		return ParseTreeListing(out)
	}
	gnu, err := run("/bin/sh", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := run(filepath.Join(bin, "sh"), bin)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gnu, busy) || len(busy.Entries) != 5 {
		t.Errorf("BusyBox listing\n%+v\nGNU\n%+v", busy, gnu)
	}
	os.WriteFile(filepath.Join(dir, "new\nline"), nil, 0o600)
	if l, err := run(filepath.Join(bin, "sh"), bin); err == nil {
		t.Errorf("a name with a newline listed as %+v", l)
	}
}
