package confine

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestFsysAsOS: the launcher's own stat and directory reading see what
// os sees: every type of entry, a link followed or not, a missing path,
// modification times to the nanosecond.
func TestFsysAsOS(t *testing.T) {
	d := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(d, "file"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(d, "exe"), []byte("x"), 0o755))
	must(os.Mkdir(filepath.Join(d, "dir"), 0o755))
	must(os.Symlink("file", filepath.Join(d, "link")))
	must(os.Symlink("dir", filepath.Join(d, "dirlink")))
	must(os.Symlink("missing", filepath.Join(d, "dangling")))
	must(syscall.Mkfifo(filepath.Join(d, "fifo"), 0o600))
	l, err := net.Listen("unix", filepath.Join(d, "sock"))
	must(err)
	defer l.Close()
	for i := 0; i < 300; i++ { // more than one getdents buffer
		must(os.WriteFile(filepath.Join(d, "dir", "f"+string(rune('a'+i%26))+string(rune('0'+i/26))), nil, 0o600))
	}
	for _, dir := range []string{d, filepath.Join(d, "dir"), "/dev", "/", "/proc/self"} {
		want, werr := os.ReadDir(dir)
		got, gerr := readDir(dir)
		if (werr == nil) != (gerr == nil) || len(got) != len(want) {
			t.Fatalf("readDir(%s): %d entries, %v; os: %d, %v", dir, len(got), gerr, len(want), werr)
		}
		for i := range want {
			if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() {
				t.Errorf("readDir(%s)[%d] = %s %v; os: %s %v", dir, i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
			}
		}
	}
	if _, err := readDir(filepath.Join(d, "file")); err == nil {
		t.Error("readDir of a file: no error")
	}
	if _, err := readDir(filepath.Join(d, "missing")); err == nil {
		t.Error("readDir of a missing path: no error")
	}
	for _, name := range []string{"file", "exe", "dir", "link", "dirlink", "dangling", "fifo", "sock", "missing", "/dev/null", "/"} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(d, name)
		}
		lt, lerr := lstatType(p)
		if fi, err := os.Lstat(p); (err == nil) != (lerr == nil) || err == nil && fi.Mode().Type() != lt {
			t.Errorf("lstatType(%s) = %v, %v; os: %v", name, lt, lerr, err)
		}
		perm, st, serr := statMode(p)
		fi, err := os.Stat(p)
		if (err == nil) != (serr == nil) || err == nil && (fi.Mode().Type() != st || uint32(fi.Mode().Perm()) != perm&0o777) {
			t.Errorf("statMode(%s) = %o %v, %v; os: %v", name, perm, st, serr, err)
		}
		if err == nil && mtime(p) != fi.ModTime().UnixNano() || err != nil && mtime(p) != -1 {
			t.Errorf("mtime(%s) = %d; os: %v", name, mtime(p), fi)
		}
	}
}

// dirent is one getdents64 record, as the kernel writes it.
func dirent(name string, typ byte) []byte {
	n := direntHeader + len(name) + 1
	n = (n + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b, 42)
	binary.NativeEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[direntHeader:], name)
	return b
}

func TestParseDirentsRefusesBadInput(t *testing.T) {
	good := append(dirent(".", syscall.DT_DIR), append(dirent("..", syscall.DT_DIR), append(dirent("a", syscall.DT_REG), dirent("b", 0)...)...)...)
	got, err := parseDirents(good)
	if want := []dirEntry{{"a", 0}, {"b", typeUnknown}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseDirents = %v, %v; want %v", got, err, want)
	}
	short := dirent("a", syscall.DT_REG)
	binary.NativeEndian.PutUint16(short[16:], direntHeader)
	long := dirent("a", syscall.DT_REG)
	binary.NativeEndian.PutUint16(long[16:], 200)
	for name, b := range map[string][]byte{
		"truncated header": good[:10], "truncated record": good[:len(good)-1], "length too small": short, "length past the end": long,
		"no name": dirent("", syscall.DT_REG), "a slash": dirent("a/b", syscall.DT_REG),
	} {
		if got, err := parseDirents(b); err == nil {
			t.Errorf("%s: no error: %v", name, got)
		}
	}
}

func FuzzParseDirents(f *testing.F) {
	f.Add(append(dirent("a", syscall.DT_REG), dirent("link", syscall.DT_LNK)...))
	f.Add(dirent("x", 99))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := parseDirents(b)
		if err != nil {
			return
		}
		// What was read is what the records say, written again the same.
		var again []byte
		for _, e := range ents {
			if e.name == "" || e.name == "." || e.name == ".." {
				t.Fatalf("entry %q", e.name)
			}
			typ := byte(syscall.DT_UNKNOWN)
			for _, dt := range []byte{syscall.DT_BLK, syscall.DT_CHR, syscall.DT_DIR, syscall.DT_FIFO, syscall.DT_LNK, syscall.DT_REG, syscall.DT_SOCK} {
				if direntType(dt) == e.typ {
					typ = dt
				}
			}
			again = append(again, dirent(e.name, typ)...)
		}
		if got, err := parseDirents(again); err != nil || len(got) != len(ents) || len(ents) > 0 && !reflect.DeepEqual(got, ents) {
			t.Fatalf("%v, %v; want %v", got, err, ents)
		}
	})
}
