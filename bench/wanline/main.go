// Command wanline joins this network namespace to another one through a
// pair of TUN devices and delays every packet each way: a WAN for
// benchmarks on one machine (this kernel has no netem). Root only.
//
//	ip netns add wanhosts
//	wanline -netns wanhosts -delay 10ms &   # 20 ms round trip
//	ip netns exec wanhosts sshd -f … -o ListenAddress=198.18.0.2
//
// Addresses are from 198.18.0.0/15, the range RFC 2544 sets aside for
// benchmarks. Here the device wanA holds -local, in the namespace wanB holds -remote
// (and the namespace's lo is brought up); each packet read from one is
// written to the other -delay later, in order. It prints "ready" on
// stdout when both ends are up and runs until killed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	netns := flag.String("netns", "", "the other end's network namespace (a name under /run/netns)")
	delay := flag.Duration("delay", 10*time.Millisecond, "the delay each way")
	local := flag.String("local", "198.18.0.1", "this end's address")
	remote := flag.String("remote", "198.18.0.2", "the other end's address")
	flag.Parse()
	if *netns == "" || flag.NArg() > 0 || *delay < 0 {
		fmt.Fprintln(os.Stderr, "usage: wanline -netns NAME [-delay 10ms] [-local ADDR] [-remote ADDR]")
		os.Exit(2)
	}
	if err := run(*netns, *delay, *local, *remote); err != nil {
		fmt.Fprintln(os.Stderr, "wanline:", err)
		os.Exit(1)
	}
}

func run(netns string, delay time.Duration, local, remote string) error {
	a, err := openTun("wanA")
	if err != nil {
		return err
	}
	var b *os.File
	if err := inNetns(netns, func() error {
		b, err = openTun("wanB")
		return err
	}); err != nil {
		return err
	}
	for _, c := range [][]string{
		{"ip", "addr", "add", local, "peer", remote, "dev", "wanA"},
		{"ip", "link", "set", "wanA", "up"},
		{"ip", "netns", "exec", netns, "ip", "addr", "add", remote, "peer", local, "dev", "wanB"},
		{"ip", "netns", "exec", netns, "ip", "link", "set", "wanB", "up"},
		{"ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v: %s", c, err, out)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errs := make(chan error, 2)
	go func() { errs <- pump(a, b, delay) }()
	go func() { errs <- pump(b, a, delay) }()
	fmt.Println("ready")
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// pump moves each packet read from src to dst delay after it was read.
func pump(src, dst *os.File, delay time.Duration) error {
	type packet struct {
		b   []byte
		due time.Time
	}
	q := make(chan packet, 1<<16)
	go func() {
		for p := range q {
			if d := time.Until(p.due); d > 0 {
				time.Sleep(d)
			}
			dst.Write(p.b) // a packet the other side cannot take is lost, as on a wire
		}
	}()
	buf := make([]byte, 65536)
	for {
		n, err := src.Read(buf)
		if err != nil {
			close(q)
			return fmt.Errorf("read %s: %w", src.Name(), err)
		}
		q <- packet{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(delay)}
	}
}

// openTun creates the TUN device name (IP packets, no header) in this
// thread's network namespace.
func openTun(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var req [unix.IFNAMSIZ + 64]byte
	copy(req[:], name)
	*(*uint16)(unsafe.Pointer(&req[unix.IFNAMSIZ])) = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// inNetns runs f on a thread moved into the named network namespace and
// moves the thread back after.
func inNetns(name string, f func() error) error {
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	other, err := os.Open("/run/netns/" + name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("network namespace %q: %w", name, err)
	}
	defer other.Close()
	if err := unix.Setns(int(other.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter %q: %w", name, err)
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked: Go ends it with this goroutine.
		return errors.Join(ferr, fmt.Errorf("return from %q: %w", name, err))
	}
	runtime.UnlockOSThread()
	return ferr
}
