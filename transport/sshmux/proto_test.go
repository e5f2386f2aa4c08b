package sshmux

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func msg(words ...any) []byte {
	var body []byte
	for _, w := range words {
		switch v := w.(type) {
		case uint32:
			body = binary.BigEndian.AppendUint32(body, v)
		case int:
			body = binary.BigEndian.AppendUint32(body, uint32(v))
		case string:
			body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
			body = append(body, v...)
		case []byte:
			body = append(body, v...)
		}
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func join(ms ...[]byte) []byte { return bytes.Join(ms, nil) }

// hello4 is a version 4 hello followed by one message of words.
func hello4(words ...any) []byte { return join(msg(msgHello, 4), msg(words...)) }

func TestParseReplies(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		pid  uint32
		err  string // "" = ok
	}{
		{"alive", hello4(msgAlive, 1, 4242), 4242, ""},
		{"hello with extensions", join(msg(msgHello, 4, "name", "value"), msg(msgAlive, 1, 7)), 7, ""},
		{"proxy", hello4(msgProxyReply, 1), 0, ""},
		{"version 3", join(msg(msgHello, 3), msg(msgAlive, 1, 1)), 0, "version 3"},
		{"no hello", msg(msgAlive, 1, 1), 0, "expected hello"},
		{"hello without version", msg(msgHello), 0, "without a version"},
		{"extension cut", msg(msgHello, 4, uint32(9), "ab"), 0, "cut short"},
		{"extension without value", msg(msgHello, 4, "name"), 0, "without a value"},
		{"other request's reply", hello4(msgAlive, 2, 1), 0, "request 2"},
		{"denied", hello4(msgDenied, 1, "Permission denied"), 0, "permission denied"},
		{"failure", hello4(msgFailure, 1, "unsupported request"), 0, "unsupported request"},
		{"failure without reason", hello4(msgFailure, 1), 0, "malformed failure"},
		{"alive without pid", hello4(msgAlive, 1), 0, "malformed reply"},
		{"alive trailing", hello4(msgAlive, 1, 1, 1), 0, "malformed reply"},
		{"proxy trailing", hello4(msgProxyReply, 1, 9), 0, "too many"},
		{"unknown reply", hello4(uint32(0x80000099), 1), 0, "unexpected reply"},
		{"no request id", hello4(msgOK), 0, "without a request id"},
		{"huge length", append(msg(msgHello, 4), 0x7f, 0, 0, 0), 0, "bytes"},
		{"short length", append(msg(msgHello, 4), 0, 0, 0, 2, 1, 1), 0, "message of 2 bytes"},
		{"cut message", append(msg(msgHello, 4), 0, 0, 0, 9, 1), 0, "cut short"},
		{"empty", nil, 0, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid, err := parseStream(bytes.NewReader(tc.in), 1)
			if tc.err == "" {
				if err != nil || pid != tc.pid {
					t.Errorf("= %d, %v; want %d", pid, err, tc.pid)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("= %d, %v; want an error with %q", pid, err, tc.err)
			}
		})
	}
}

// parseStream reads a hello and one reply as AliveCheck does.
func parseStream(r *bytes.Reader, id uint32) (uint32, error) {
	typ, body, err := readMessage(r)
	if err != nil {
		return 0, err
	}
	if err := parseHello(typ, body); err != nil {
		return 0, err
	}
	if typ, body, err = readMessage(r); err != nil {
		return 0, err
	}
	return parseReply(typ, body, id)
}

func FuzzParseStream(f *testing.F) {
	f.Add(hello4(msgAlive, 1, 4242))
	f.Add(join(msg(msgHello, 4, "a", "b"), msg(msgProxyReply, 1)))
	f.Add(hello4(msgFailure, 1, "no"))
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 1})
	f.Add(join(msg(msgHello, 4), msg(msgSessionOpened, 1, 5), msg(msgExit, 5, 0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		sid, err := parseStream(r, 1)
		if err != nil {
			if sid != 0 {
				t.Errorf("%d with error %v", sid, err)
			}
			return
		}
		for { // what a passenger reads after its session opened
			typ, body, err := readMessage(r)
			if err != nil {
				return
			}
			if status, exited, err := parseEvent(typ, body, sid); err != nil && (status != 0 || exited) {
				t.Errorf("status %d, exited %v with error %v", status, exited, err)
			}
		}
	})
}

// fakeMaster listens on a 0600 socket and answers each connection with
// reply, after reading what the client sends first.
func fakeMaster(t *testing.T, reply []byte) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mux")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write(reply)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 64)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return path
}

// TestBadMasters: a master that speaks another version, refuses, says
// nothing or sends garbage is an error, never a client.
func TestBadMasters(t *testing.T) {
	for name, reply := range map[string][]byte{
		"version 3":   msg(msgHello, 3),
		"denied":      hello4(msgDenied, 0, "Permission denied"),
		"garbage":     []byte("SSH-2.0-OpenSSH_9.2\r\n"),
		"silent":      nil,
		"hello only":  msg(msgHello, 4),
		"wrong reply": hello4(msgOK, 0),
	} {
		t.Run(name, func(t *testing.T) {
			path := fakeMaster(t, reply)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			if c, err := Dial(ctx, path); err == nil {
				c.Close()
				t.Error("Dial succeeded")
			}
			if _, err := AliveCheck(ctx, path); err == nil {
				t.Error("AliveCheck succeeded")
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("the master held the client %v past a 1 s deadline", time.Since(start))
			}
		})
	}
}

// TestNoMaster: a missing socket and a stale one (nothing listening) are
// ErrNoMaster, so the caller dials; a file that is not a socket is unsafe.
func TestNoMaster(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mux")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if _, err := Dial(ctx, dir+"/none"); !errors.Is(err, ErrNoMaster) {
		t.Errorf("missing socket: %v, want ErrNoMaster", err)
	}
	stale := dir + "/stale"
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	os.Chmod(stale, 0o600)
	if _, err := Dial(ctx, stale); !errors.Is(err, ErrNoMaster) {
		t.Errorf("stale socket: %v, want ErrNoMaster", err)
	}
	if _, err := AliveCheck(ctx, stale); !errors.Is(err, ErrNoMaster) {
		t.Errorf("stale socket: AliveCheck %v, want ErrNoMaster", err)
	}
	file := dir + "/file"
	os.WriteFile(file, nil, 0o600)
	if _, err := Dial(ctx, file); !errors.Is(err, ErrUnsafeSocket) {
		t.Errorf("regular file: %v, want ErrUnsafeSocket", err)
	}
	link := dir + "/link"
	os.Symlink(stale, link)
	if err := CheckSocket(link); !errors.Is(err, ErrUnsafeSocket) {
		t.Errorf("symbolic link: %v, want ErrUnsafeSocket", err)
	}
}

func TestParseEvents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []byte
		status uint32
		exited bool
		err    string
	}{
		{"exit", msg(msgExit, 7, 3), 3, true, ""},
		{"tty alloc fail", msg(msgTTYAllocFail, 7), 0, false, ""},
		{"other session", msg(msgExit, 8, 3), 0, false, "session 8"},
		{"no session", msg(msgExit), 0, false, "without a session id"},
		{"exit without status", msg(msgExit, 7), 0, false, "malformed exit"},
		{"exit trailing", msg(msgExit, 7, 1, 2), 0, false, "malformed exit"},
		{"unexpected", msg(msgAlive, 7, 1), 0, false, "unexpected message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, body, err := readMessage(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			status, exited, err := parseEvent(typ, body, 7)
			if tc.err == "" {
				if err != nil || status != tc.status || exited != tc.exited {
					t.Errorf("= %d %v %v", status, exited, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("= %d %v %v; want an error with %q", status, exited, err, tc.err)
			}
		})
	}
}

// TestNewSessionMessage: the request as mux.c's
// mux_master_process_new_session reads it.
func TestNewSessionMessage(t *testing.T) {
	typ, body, err := readMessage(bytes.NewReader(newSession(1, "echo hi", true)))
	if err != nil || typ != msgNewSession {
		t.Fatalf("%#x %v", typ, err)
	}
	want := join(msg(uint32(1), "", 0, 0, 0, 1, uint32(0xffffffff), "", "echo hi"))[4:]
	if !bytes.Equal(body, want) {
		t.Errorf("body %x, want %x", body, want)
	}
}
