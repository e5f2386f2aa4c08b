package testenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SFTP packet types and status codes (draft-ietf-secsh-filexfer-02).
const (
	fxpVersion  = 2
	fxpOpen     = 3
	fxpClose    = 4
	fxpRename   = 18
	fxpStatus   = 101
	fxpHandle   = 102
	fxpExtended = 200

	fxOK      = 0
	fxFailure = 4

	fsyncExtension = "fsync@openssh.com"
	// maxSFTPPacket bounds one packet; pkg/sftp itself accepts 256 KiB.
	maxSFTPPacket = 1 << 20
)

// serveSFTP serves SFTP on ch with pkg/sftp's server, relative paths
// resolving under home.
//
// A thin packet filter in front of the server makes it behave like
// OpenSSH's sftp-server where pkg/sftp differs:
//   - plain SSH_FXP_RENAME fails when the target exists (pkg/sftp
//     overwrites); posix-rename@openssh.com overwrites, as in OpenSSH;
//   - fsync@openssh.com is supported (see below).
//
// pkg/sftp's server implements posix-rename@openssh.com, statvfs and
// hardlink, but not fsync@openssh.com, which clients need for durable
// writes (pkg/sftp's File.Sync refuses to send it unless advertised). The
// filter adds it: it advertises the
// extension in the version packet, remembers the path of every handle an
// SSH_FXP_OPEN returned, and answers fsync by opening that path and calling
// fsync(2) on it — the same inode unless the file was renamed or replaced
// while open.
func serveSFTP(ch ssh.Channel, home string) error {
	toSrvR, toSrvW := io.Pipe()
	fromSrvR, fromSrvW := io.Pipe()
	srv, err := sftp.NewServer(sftpPipe{toSrvR, fromSrvW}, sftp.WithServerWorkingDirectory(home))
	if err != nil {
		return fmt.Errorf("sftp server: %w", err)
	}
	f := &sftpFilter{ch: ch, home: home, opens: map[uint32]string{}, handles: map[string]string{}}

	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		toSrvW.CloseWithError(f.fromClient(toSrvW))
	}()
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		err := f.fromServer(fromSrvR)
		fromSrvR.CloseWithError(err)
	}()

	err = srv.Serve()
	fromSrvW.Close()
	<-serverDone
	select {
	case <-clientDone: // the client ended the session
	default: // the server gave up: end the channel so the reader stops
		ch.Close()
		<-clientDone
	}
	if err != nil {
		return fmt.Errorf("sftp: %w", err)
	}
	return nil
}

// sftpPipe is the server's side of the two pipes.
type sftpPipe struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p sftpPipe) Close() error { return p.PipeWriter.Close() }

// sftpFilter sits between the channel and pkg/sftp's server.
type sftpFilter struct {
	ch   ssh.Channel
	home string

	wmu sync.Mutex // serialises whole packets to ch

	mu      sync.Mutex
	opens   map[uint32]string // request id of a pending SSH_FXP_OPEN → path
	handles map[string]string // open file handle → path
}

// fromClient forwards the client's packets to the server, answering fsync
// requests itself.
func (f *sftpFilter) fromClient(srv io.Writer) error {
	for {
		pkt, err := readSFTPPacket(f.ch)
		if err != nil {
			return err
		}
		body := pkt[5:]
		switch pkt[4] {
		case fxpExtended:
			id, rest, ok1 := sftpUint32(body)
			name, rest, ok2 := sftpString(rest)
			if ok1 && ok2 && name == fsyncExtension {
				if err := f.write(statusPacket(id, f.fsync(rest))); err != nil {
					return err
				}
				continue
			}
		case fxpRename:
			id, rest, ok1 := sftpUint32(body)
			_, rest, ok2 := sftpString(rest)
			newpath, _, ok3 := sftpString(rest)
			if ok1 && ok2 && ok3 {
				if _, err := os.Lstat(f.local(newpath)); err == nil {
					if err := f.write(statusPacket(id, fxFailure)); err != nil {
						return err
					}
					continue
				}
			}
		case fxpOpen:
			id, rest, ok1 := sftpUint32(body)
			p, _, ok2 := sftpString(rest)
			if ok1 && ok2 {
				f.mu.Lock()
				f.opens[id] = p
				f.mu.Unlock()
			}
		case fxpClose:
			_, rest, _ := sftpUint32(body)
			if h, _, ok := sftpString(rest); ok {
				f.mu.Lock()
				delete(f.handles, h)
				f.mu.Unlock()
			}
		}
		if _, err := srv.Write(pkt); err != nil {
			return err
		}
	}
}

// fromServer forwards the server's packets to the client, advertising fsync
// and recording the handles of opened files.
func (f *sftpFilter) fromServer(srv io.Reader) error {
	for {
		pkt, err := readSFTPPacket(srv)
		if err != nil {
			return err
		}
		body := pkt[5:]
		switch pkt[4] {
		case fxpVersion:
			pkt = appendSFTPString(pkt, fsyncExtension)
			pkt = appendSFTPString(pkt, "1")
			binary.BigEndian.PutUint32(pkt, uint32(len(pkt)-4))
		case fxpHandle:
			id, rest, ok1 := sftpUint32(body)
			h, _, ok2 := sftpString(rest)
			f.mu.Lock()
			if p, ok := f.opens[id]; ok && ok1 && ok2 {
				f.handles[h] = p
			}
			delete(f.opens, id)
			f.mu.Unlock()
		case fxpStatus: // a failed open
			id, _, _ := sftpUint32(body)
			f.mu.Lock()
			delete(f.opens, id)
			f.mu.Unlock()
		}
		if err := f.write(pkt); err != nil {
			return err
		}
	}
}

// local resolves a client path like pkg/sftp's server does.
func (f *sftpFilter) local(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(f.home, p)
	}
	return p
}

func (f *sftpFilter) write(pkt []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.ch.Write(pkt)
	return err
}

// fsync syncs the file behind the handle at the start of rest and returns
// the SFTP status code.
func (f *sftpFilter) fsync(rest []byte) uint32 {
	h, _, ok := sftpString(rest)
	if !ok {
		return fxFailure
	}
	f.mu.Lock()
	p, ok := f.handles[h]
	f.mu.Unlock()
	if !ok {
		return fxFailure
	}
	p = f.local(p)
	file, err := os.Open(p)
	if errors.Is(err, os.ErrPermission) {
		file, err = os.OpenFile(p, os.O_WRONLY, 0)
	}
	if err != nil {
		return fxFailure
	}
	defer file.Close()
	if file.Sync() != nil {
		return fxFailure
	}
	return fxOK
}

// readSFTPPacket reads one packet, length prefix included.
func readSFTPPacket(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 1 || n > maxSFTPPacket {
		return nil, fmt.Errorf("sftp packet of %d bytes", n)
	}
	pkt := make([]byte, 4+n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, fmt.Errorf("read sftp packet: %w", err)
	}
	return pkt, nil
}

func statusPacket(id, code uint32) []byte {
	pkt := []byte{0, 0, 0, 0, fxpStatus}
	pkt = binary.BigEndian.AppendUint32(pkt, id)
	pkt = binary.BigEndian.AppendUint32(pkt, code)
	msg := "Success"
	if code != fxOK {
		msg = "Failure"
	}
	pkt = appendSFTPString(pkt, msg)
	pkt = appendSFTPString(pkt, "")
	binary.BigEndian.PutUint32(pkt, uint32(len(pkt)-4))
	return pkt
}

func appendSFTPString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func sftpUint32(b []byte) (uint32, []byte, bool) {
	if len(b) < 4 {
		return 0, b, false
	}
	return binary.BigEndian.Uint32(b), b[4:], true
}

func sftpString(b []byte) (string, []byte, bool) {
	n, rest, ok := sftpUint32(b)
	if !ok || uint64(len(rest)) < uint64(n) {
		return "", b, false
	}
	return string(rest[:n]), rest[n:], true
}
