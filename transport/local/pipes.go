package local

import (
	"errors"
	"io"
	"os"
	"time"
)

// maxDrain bounds what is read from a pipe still held open once waitDelay
// passed after the command ended: what a pipe's buffer holds at most by
// default (fs.pipe-max-size), so that a process that left the group and
// writes on does not hold the step.
const maxDrain = 1 << 20

// outPipe is an output pipe of a command started through os/exec, read
// by agent rather than by os/exec's own copy: os/exec's WaitDelay closes
// a pipe its copy has not finished reading by then, and a copy behind on
// a loaded machine lost what the command had already written (the
// output's end, cut in the middle of a line).
type outPipe struct {
	r, w *os.File // w: the command's end, closed once it started
	done chan struct{}
}

func newOutPipe() (*outPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &outPipe{r: r, w: w, done: make(chan struct{})}, nil
}

// start closes the command's end (it has its own now) and copies the pipe
// to dst until its end, or until finish ends the wait.
func (p *outPipe) start(dst io.Writer) {
	p.w.Close()
	go func() {
		defer close(p.done)
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		for {
			n, err := p.r.Read(*bp)
			if n > 0 {
				dst.Write((*bp)[:n])
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.drain(dst, *bp)
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

// drain reads what the pipe holds now, at most maxDrain bytes, without
// waiting for more.
func (p *outPipe) drain(dst io.Writer, buf []byte) {
	if p.r.SetReadDeadline(time.Time{}) != nil {
		return
	}
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool { // the descriptor is non-blocking (the poller's)
		for got := 0; got < maxDrain; {
			n, err := readFD(int(fd), buf)
			if n <= 0 || err != nil {
				break
			}
			dst.Write(buf[:n])
			got += n
		}
		return true
	})
}

// finish waits for the copy to reach the pipe's end, until deadline; then
// the copy reads what the pipe holds and stops.
func (p *outPipe) finish(deadline time.Time) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.r.SetReadDeadline(time.Now())
		<-p.done
	}
	p.r.Close()
}

// abandon closes both ends (the command did not start).
func (p *outPipe) abandon() {
	p.w.Close()
	p.r.Close()
}
