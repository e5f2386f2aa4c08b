package local

import "syscall"

// readFD is one read(2) of fd, EINTR retried.
func readFD(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, b)
		if err != syscall.EINTR {
			return n, err
		}
	}
}
