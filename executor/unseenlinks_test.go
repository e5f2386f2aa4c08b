package executor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/autoshell/agent/transport"
)

func TestProbeSees(t *testing.T) {
	const home = "/home/u"
	for p, want := range map[string]bool{
		"/home/u/x": true, "/home/u/a/b/c/d/e/f": true, "/home/u/a/b/c/d/e/f/g": false, "/home/u/.git/x": false,
		"/home/u/src/node_modules/x": false, "/home/u/.cache": true, "/home/u/.cache/x": false, "/srv/app/rc": false,
		"/home/uu/x": false, "/home/u/work/.github/x": true,
	} {
		if got := probeSees(p, home); got != want {
			t.Errorf("probeSees(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestParseLinkCounts(t *testing.T) {
	out := "K 0 -rw-r--r-- 2\nK 1 drwxr-xr-x 5\nK 2 -rw------- 1\nK 9 -rw-r--r-- 3\nK -1 -rw-r--r-- 3\n" +
		"K 3 -rw-r--r-- x\nK 3 -rw-r--r-- 4 extra\nnoise\nK 4 -rw-r--r-- 7\nK 4 -rw-r--r-- 1\n"
	if got, want := parseLinkCounts(out, 5), []int{2, 0, 1, 0, 7}; !slices.Equal(got, want) {
		t.Errorf("parseLinkCounts = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "K", "K 0 - 2", "K 0 -rw 99999999999999999999"} {
		if got := parseLinkCounts(bad, 1); got[0] != 0 && bad != "K 0 - 2" {
			t.Errorf("parseLinkCounts(%q) = %v", bad, got)
		}
	}
}

func FuzzParseLinkCounts(f *testing.F) {
	f.Add("K 0 -rw-r--r-- 2\nK 1 drwxr-xr-x 5\n", 2)
	f.Add("K 3 - 1\n\x00", 4)
	f.Fuzz(func(t *testing.T, out string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		got := parseLinkCounts(out, n)
		if len(got) != n {
			t.Fatalf("%d counts for %d paths", len(got), n)
		}
		for _, c := range got {
			if c < 0 {
				t.Fatalf("negative count in %v", got)
			}
		}
	})
}

// TestLinkCountScript runs the script with the host's sh and ls, and
// BusyBox's where there is one, over a file with two links, one with one,
// a directory, a name with a newline and a missing path.
func TestLinkCountScript(t *testing.T) {
	dir := t.TempDir()
	one, two, odd := filepath.Join(dir, "one"), filepath.Join(dir, "two"), filepath.Join(dir, "new\nline")
	for _, p := range []string{one, two, odd} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(two, filepath.Join(dir, "deep-other-name")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(odd, filepath.Join(dir, "odd2")); err != nil {
		t.Fatal(err)
	}
	paths := []string{one, two, dir, odd, filepath.Join(dir, "missing")}
	want := []int{1, 2, 0, 2, 0}
	shells := [][]string{{"sh", "-c"}}
	if bb, err := exec.LookPath("busybox"); err == nil {
		shells = append(shells, []string{bb, "sh", "-c"})
	}
	for _, sh := range shells {
		script := linkCountScript(paths)
		if len(sh) == 3 {
			// BusyBox's own ls: its applets first on PATH.
			bin := t.TempDir()
			os.Symlink(sh[0], filepath.Join(bin, "ls"))
			script = "PATH=" + bin + ":$PATH; " + script
		}
		out, err := exec.Command(sh[0], append(sh[1:], script)...).Output()
		if err != nil {
			t.Fatalf("%v: %v", sh, err)
		}
		if got := parseLinkCounts(string(out), len(paths)); !slices.Equal(got, want) {
			t.Errorf("%v: counts %v, want %v\n%s", sh, got, want, out)
		}
	}
	// Through a transport whose Stat says no count, the script answers.
	v := &hostView{tr: noNlinkTransport{}, paths: map[string]*hostPath{}}
	m, err := linkCounts(context.Background(), v, paths)
	if err != nil || m[two] != 2 || m[one] != 1 || m[odd] != 2 || len(m) != 3 {
		t.Errorf("linkCounts = %v, %v", m, err)
	}
	// What the step's look said (a become host's stat says the count)
	// is not asked again: no command runs.
	fi, err := os.Stat(two)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	v = &hostView{tr: noRunTransport{t: t}, paths: map[string]*hostPath{
		two: {done: done, real: two, looked: true, in: transport.Inspection{Real: two, Info: noSys{fi}, Links: 2}},
		one: {done: done, real: one, looked: true, in: transport.Inspection{Real: one, Info: noSys{fi}, Links: 1}},
	}}
	if m, err := linkCounts(context.Background(), v, []string{one, two}); err != nil || m[two] != 2 || m[one] != 1 {
		t.Errorf("linkCounts from the look = %v, %v", m, err)
	}
}

// noRunTransport fails the test when a command runs.
type noRunTransport struct {
	transport.Transport
	t *testing.T
}

func (n noRunTransport) Run(context.Context, transport.Command) (transport.Result, error) {
	n.t.Error("a command ran: the look had said the link counts")
	return transport.Result{}, errors.New("no commands")
}

// noNlinkTransport runs commands with sh here but, as SFTP, does not say
// a file's link count.
type noNlinkTransport struct{ transport.Transport }

func (noNlinkTransport) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	out, err := exec.CommandContext(ctx, "sh", "-c", c.Command).Output()
	return transport.Result{Stdout: string(out)}, err
}

func (noNlinkTransport) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	return noSys{fi}, nil
}

// noSys is a FileInfo without the system's stat (SFTP's has no link count).
type noSys struct{ fs.FileInfo }

func (noSys) Sys() any { return nil }
