package confine

import "golang.org/x/sys/unix"

// hungUp reports whether Serve's input, a pipe or socket, has hung up:
// whoever sent the requests is gone (sshd closed the session when the
// controller went away), so a batch's later commands must not start: no
// one would record them. Requests already read are not looked at.
func (s *server) hungUp() bool {
	if s.inFd < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(s.inFd), Events: unix.POLLIN | unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) != 0
}
