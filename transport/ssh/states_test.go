package ssh

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// sftpTree is journal.State's reader over the transport's files (SFTP):
// how the executor reads a state without the worker.
type sftpTree struct{ tr *Transport }

func (s sftpTree) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	return s.tr.ReadFile(ctx, p, w)
}
func (s sftpTree) Stat(ctx context.Context, p string) (fs.FileInfo, error) { return s.tr.Stat(ctx, p) }
func (s sftpTree) ListTree(context.Context, string) (journal.TreeListing, error) {
	return journal.TreeListing{}, errors.New("not listed here")
}

// TestServedAfterStates: the states a served worker reads after a
// command, in its round trip (transport.AfterStates), are journal.State's
// over SFTP, byte for byte; what it leaves to the caller is a directory's
// and a file's over the bound. The shell worker reads none.
func TestServedAfterStates(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	tr.ServeWorker(serveArgv())
	dir := t.TempDir()
	names := []string{"f", "missing", "p", "d", "l", "e", "big", "nodir/x", "bin"}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	bounds := journal.StateBounds{FileBytes: 4096}
	a := &transport.AfterStates{Paths: append(paths, "/dev/null"), FileBytes: bounds.FileBytes}
	ctx := transport.WithAfterStates(context.Background(), a)
	runOK := func(ctx context.Context, c transport.Command) {
		t.Helper()
		if res, err := tr.Run(ctx, c); err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %+v, %v", c.Command, res, err)
		}
	}
	runOK(ctx, transport.Command{Command: "printf 'hello\\n' > f && mkfifo p && mkdir d && ln -s f l && : > e && head -c 5000 /dev/zero > big && head -c 3000 /dev/urandom > bin", Dir: dir})
	got := a.Take()
	if len(got) != len(a.Paths) {
		t.Fatalf("states read after the command: %+v", got)
	}
	for i, p := range a.Paths {
		want, err := journal.State(context.Background(), sftpTree{tr}, p, bounds)
		leftOver := names[min(i, len(names)-1)] == "d" || strings.HasSuffix(p, "/big")
		switch {
		case leftOver && i < len(names):
			if got[i].Value != "" {
				t.Errorf("%s: the worker said %q, want it left to the caller", p, got[i].Value)
			}
		case err != nil:
			t.Errorf("%s: journal.State over SFTP: %v", p, err)
		case got[i].Value != want || !journal.HostState(got[i].Value):
			t.Errorf("%s: the worker says %q, journal.State over SFTP %q", p, got[i].Value, want)
		}
	}
	if got[0].Size != 6 || got[len(names)-1].Size != 3000 {
		t.Errorf("sizes read: %+v", got)
	}
	if a.Take() != nil {
		t.Error("Take twice: states again")
	}
	// A command without a served worker reads none: the caller does.
	sh := dial(t, hostConfig(h.Host), Options{})
	if _, err := sh.Run(ctx, transport.Command{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	if s := a.Take(); s != nil {
		t.Errorf("the shell worker read states: %+v", s)
	}
	// Each command clears them: a later one that cannot read them leaves
	// none of the earlier one's.
	runOK(ctx, transport.Command{Command: "true"})
	a.Set([]transport.FileState{{Value: "stale"}})
	if _, err := sh.Run(ctx, transport.Command{Command: "true"}); err != nil || a.Take() != nil {
		t.Errorf("states left from before the command: %v", err)
	}
}

func TestParseStates(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	good := "6 " + sum + "\n0 ?\n0 special:special file\n"
	got := parseStates(good, 3)
	want := []transport.FileState{{Value: sum, Size: 6}, {}, {Value: "special:special file"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"", "\n", "6 " + sum + "\n", good + "0 absent\n", "x absent\n0 ?\n0 ?\n", "-1 absent\n0 ?\n0 ?\n",
		"0\n0 ?\n0 ?\n", "0 \n0 ?\n0 ?\n"} {
		if s := parseStates(bad, 3); s != nil {
			t.Errorf("%q read as %+v", bad, s)
		}
	}
}

func FuzzParseStates(f *testing.F) {
	f.Add("6 abc\n0 ?\n", 2)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, out string, n int) {
		if n < 0 || n > 64 {
			return
		}
		s := parseStates(out, n)
		if s == nil {
			return
		}
		if len(s) != n {
			t.Fatalf("%q: %d states, want %d", out, len(s), n)
		}
		for _, st := range s {
			if st.Size < 0 || strings.ContainsRune(st.Value, '\n') {
				t.Fatalf("%q: a state %+v", out, st)
			}
		}
	})
}

// TestServedInspectAll: what the served worker's look says of each path
// (transport.LookAheader) is what Inspect over SFTP says: where it is,
// its mode, size, time and owner, a small file's content; a missing
// directory on the way is fs.ErrNotExist as there; what it cannot say as
// Inspect does (a link on the way) is left to Inspect. Without a served
// worker it answers nothing, and starts no worker.
func TestServedInspectAll(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	dir := t.TempDir()
	ctx := context.Background()
	if in, errs, ok := tr.InspectAll(ctx, []string{dir}, []int64{0}); ok[0] || errs[0] != nil || in[0].Info != nil {
		t.Errorf("without a served worker: %+v %v %v", in, errs, ok)
	}
	tr.wmu.Lock()
	started := tr.worker != nil
	tr.wmu.Unlock()
	if started {
		t.Error("InspectAll started a worker that cannot look")
	}
	tr.ServeWorker(serveArgv())
	if res, err := tr.Run(ctx, transport.Command{Command: "printf 'hello\\n' > f && chmod 4751 f && : > e && mkdir d && ln -s d l && mkfifo p && head -c 300 /dev/zero > big", Dir: dir}); err != nil || res.ExitCode != 0 {
		t.Fatalf("set-up: %+v %v", res, err)
	}
	names := []string{"f", "e", "d", "missing", "nodir/x", "p", "big", "f", "l", "l/x", "d/./x"}
	maxes := []int64{100, 100, 100, 100, 100, 100, 100, 0, 100, 100, 100}
	leftOver := map[string]bool{"l": true, "l/x": true, "d/./x": true}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = dir + "/" + n
	}
	in, errs, ok := tr.InspectAll(ctx, paths, maxes)
	for i, p := range paths {
		want, werr := tr.Inspect(ctx, p, maxes[i])
		switch {
		case leftOver[names[i]]:
			if ok[i] {
				t.Errorf("%s: answered %+v, want it left to Inspect", p, in[i])
			}
		case !ok[i]:
			t.Errorf("%s: not answered", p)
		case (werr == nil) != (errs[i] == nil) || werr != nil && errors.Is(werr, fs.ErrNotExist) != errors.Is(errs[i], fs.ErrNotExist):
			t.Errorf("%s: error %v, Inspect's %v", p, errs[i], werr)
		case werr != nil:
		case in[i].Real != want.Real || in[i].Read != want.Read || string(in[i].Content) != string(want.Content) ||
			in[i].Owned != want.Owned || in[i].UID != want.UID || in[i].GID != want.GID || (in[i].Info == nil) != (want.Info == nil):
			t.Errorf("%s: %+v, Inspect over SFTP %+v", p, in[i], want)
		case want.Info != nil && (in[i].Info.Mode() != want.Info.Mode() || in[i].Info.Size() != want.Info.Size() || !in[i].Info.ModTime().Equal(want.Info.ModTime())):
			t.Errorf("%s: %v %d %v, Inspect over SFTP %v %d %v", p, in[i].Info.Mode(), in[i].Info.Size(), in[i].Info.ModTime(),
				want.Info.Mode(), want.Info.Size(), want.Info.ModTime())
		}
	}
	if !in[0].Read || string(in[0].Content) != "hello\n" || in[0].Info.Mode()&fs.ModeSetuid == 0 {
		t.Errorf("the small file: %+v", in[0])
	}
}

func TestParseLook(t *testing.T) {
	if in, ok := parseLook("/a", "-"); !ok || in.Real != "/a" || in.Info != nil {
		t.Errorf("missing: %+v %v", in, ok)
	}
	in, ok := parseLook("/a/f", "= 81a4 2 1700000000 1000 1001 3 x6869")
	if !ok || in.Real != "/a/f" || in.Info.Size() != 2 || in.Info.Mode() != 0o644 || in.UID != 1000 || in.GID != 1001 || !in.Owned || string(in.Content) != "hi" ||
		in.Links != 3 {
		t.Errorf("a file: %+v %v", in, ok)
	}
	for _, bad := range []string{"", "?", "!", "=", "= 81a4 2 1 0 0 1", "= 81a4 2 1 0 0 1 x686", "= 81a4 3 1 0 0 1 x6869", "= 81a4 2 1 0 0 1 y", "= zz 2 1 0 0 1 -",
		"= 81a4 -2 1 0 0 1 -", "= 81a4 2 1 0 0 1 - extra", "-x",
		// The link count: a positive decimal as the worker writes it.
		"= 81a4 2 1 0 0 -", "= 81a4 2 1 0 0 0 -", "= 81a4 2 1 0 0 01 -", "= 81a4 2 1 0 0 -1 -", "= 81a4 2 1 0 0 x -", "= 81a4 2 1 0 0 99999999999 -"} {
		if in, ok := parseLook("/a", bad); ok {
			t.Errorf("%q read as %+v", bad, in)
		}
	}
}

func FuzzParseLook(f *testing.F) {
	f.Add("= 81a4 2 1700000000 1000 1001 1 x6869")
	f.Add("-")
	f.Add("= 41ed 4096 1 0 0 2 -")
	f.Fuzz(func(t *testing.T, line string) {
		in, ok := parseLook("/p", line)
		if !ok {
			return
		}
		if in.Real != "/p" || in.Read && (in.Info == nil || int64(len(in.Content)) != in.Info.Size()) || in.Info != nil && in.Links < 1 {
			t.Fatalf("%q read as %+v", line, in)
		}
	})
}
