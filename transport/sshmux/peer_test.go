package sshmux

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPeerOfAnotherUser: a socket file that passes the owner and mode
// checks but is served by a process of another uid (its file given back
// to the operator after the other user made it) is refused by the peer
// credential check.
func TestPeerOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running a listener as another uid needs root")
	}
	dir, err := os.MkdirTemp("", "mux")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s")
	bin := filepath.Join(dir, "t") // the build directory is the operator's alone
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperListener$")
	cmd.Env = append(os.Environ(), "SSHMUX_HELPER_LISTEN="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	if err := os.Chown(path, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckSocket(path); err != nil {
		t.Fatalf("the file checks should pass here: %v", err)
	}
	if _, err := AliveCheck(context.Background(), path); !errors.Is(err, ErrUnsafeSocket) {
		t.Errorf("a master of uid 65534: %v, want ErrUnsafeSocket", err)
	}
}

// TestHelperListener is TestPeerOfAnotherUser's listener, run as another
// uid; it answers as a master would.
func TestHelperListener(t *testing.T) {
	path := os.Getenv("SSHMUX_HELPER_LISTEN")
	if path == "" {
		t.Skip("helper process only")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("listening\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write(join(msg(msgHello, 4), msg(msgAlive, 1, 1)))
	}
}
