package journal

import "golang.org/x/sys/unix"

// syncFS makes every file written on dir's file system durable: one
// syncfs(2) for a tree's blobs instead of an fsync each.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Syncfs(fd)
}
