package confine

import (
	"io"
	"os"
)

// BatchedPrefix starts the NEXT of a request that runs only when the
// command before it succeeded (Serve; transport.Batch).
const BatchedPrefix = "?"

// NotRunStatus is the status of a batched request Serve did not run.
const NotRunStatus = "-"

// inputFd is in's descriptor for hungUp, -1 when in is not a file. The
// launcher's standard input is fd 0, not asked of the file: Fd would
// make it blocking again (serveInput).
func inputFd(in io.Reader) int {
	f, ok := in.(*os.File)
	switch {
	case !ok:
		return -1
	case f.Name() == "/dev/stdin":
		return 0
	}
	return int(f.Fd())
}
