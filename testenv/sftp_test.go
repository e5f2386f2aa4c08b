package testenv

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/pkg/sftp"
)

// sftpSuite checks the SFTP subsystem of h; dir is an absolute scratch
// directory under h.Home on the host.
func sftpSuite(t *testing.T, h Host, dir string) {
	c := dial(t, h)
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatalf("sftp client: %v", err)
	}
	defer sc.Close()

	for _, ext := range []string{"posix-rename@openssh.com", "fsync@openssh.com"} {
		if _, ok := sc.HasExtension(ext); !ok {
			t.Errorf("server does not advertise %s", ext)
		}
	}
	if wd, err := sc.RealPath("."); err != nil || wd != h.Home {
		t.Errorf("realpath(.) = %q, %v; want %q", wd, err, h.Home)
	}

	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB: many packets
	tmp, final := path.Join(dir, "f.tmp"), path.Join(dir, "f")
	f, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Errorf("fsync: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	writeSFTP(t, sc, final, "old")
	if err := sc.Rename(tmp, final); err == nil {
		t.Error("plain rename over an existing file succeeded; OpenSSH refuses it")
	}
	if err := sc.PosixRename(tmp, final); err != nil {
		t.Fatalf("posix-rename: %v", err)
	}
	if got, err := readSFTP(sc, final); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes, %v; want %d", len(got), err, len(data))
	}
	if fi, err := sc.Stat(final); err != nil || fi.Size() != int64(len(data)) {
		t.Errorf("stat: %v, %v", fi, err)
	}
	if _, err := sc.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("stat renamed file: %v; want not exist", err)
	}

	// Relative paths resolve under the home directory.
	rel, err := filepath.Rel(h.Home, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeSFTP(t, sc, path.Join(rel, "rel"), "r")
	if fi, err := sc.Stat(path.Join(dir, "rel")); err != nil || fi.Size() != 1 {
		t.Errorf("relative write landed elsewhere: %v", err)
	}

	// fsync works on a file opened for reading, as with OpenSSH.
	r, err := sc.Open(final)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, r); err != nil || n != int64(len(data)) {
		t.Errorf("read %d, %v", n, err)
	}
	if err := r.Sync(); err != nil {
		t.Errorf("fsync read-only file: %v", err)
	}
	r.Close()
	if err := sc.Mkdir(path.Join(dir, "sub")); err != nil {
		t.Errorf("mkdir: %v", err)
	}
	if err := sc.Remove(final); err != nil {
		t.Errorf("remove: %v", err)
	}
}

func writeSFTP(t *testing.T, sc *sftp.Client, name, content string) {
	t.Helper()
	f, err := sc.Create(name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", name, err)
	}
}

func readSFTP(sc *sftp.Client, name string) ([]byte, error) {
	f, err := sc.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestSSHServerSFTP(t *testing.T) {
	srv := StartSSHServer(t, SSHServerOptions{})
	dir := filepath.Join(srv.Home, "scratch")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sftpSuite(t, srv.Host, dir)
}

func TestSFTPPacketHelpers(t *testing.T) {
	pkt := statusPacket(7, fxFailure)
	got, err := readSFTPPacket(bytes.NewReader(pkt))
	if err != nil || !bytes.Equal(got, pkt) {
		t.Fatalf("round trip: %x, %v", got, err)
	}
	id, rest, ok := sftpUint32(got[5:])
	code, rest, ok2 := sftpUint32(rest)
	msg, _, ok3 := sftpString(rest)
	if !ok || !ok2 || !ok3 || id != 7 || code != fxFailure || msg != "Failure" {
		t.Errorf("status packet: id %d code %d msg %q", id, code, msg)
	}
	if _, _, ok := sftpString([]byte{0, 0, 0, 9, 'x'}); ok {
		t.Error("short string accepted")
	}
	if _, err := readSFTPPacket(bytes.NewReader([]byte{0xff, 0, 0, 0})); err == nil {
		t.Error("oversized packet accepted")
	}
}
