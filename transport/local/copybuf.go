package local

import (
	"io"
	"sync"
)

// copyBufs are the buffers a command's output pipes are drained through.
// os/exec copies each pipe to its writer with io.Copy, which allocates
// 32 KiB per stream per command unless the writer reads for itself
// (io.ReaderFrom): 64 KiB of garbage a step, half of what a local `true`
// step allocated, which the GC then had to sweep.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// pooled is w reading from a reader through a pooled buffer.
type pooled struct{ w io.Writer }

func (p pooled) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pooled) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// Hide the reader's WriteTo and the writer's ReadFrom, which would
	// take the copy elsewhere (and allocate again): the buffer is used.
	return io.CopyBuffer(struct{ io.Writer }{p.w}, struct{ io.Reader }{r}, *bp)
}
