package local

import "sync"

// copyBufs are the buffers a command's output pipes are drained through
// (spawn_linux.go's reads, pipes.go's copies): io.Copy would allocate
// 32 KiB per stream per command, 64 KiB of garbage a step, half of what
// a local `true` step allocated, which the GC then had to sweep.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
