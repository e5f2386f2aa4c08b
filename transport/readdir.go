package transport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// DirReader is implemented by transports that list directories (local,
// and SSH through SFTP): ReadDir describes the entries of the directory at
// path, without following symbolic links (a link is a link), in no
// particular order. Errors are as the file methods'.
type DirReader interface {
	ReadDir(ctx context.Context, path string) ([]fs.FileInfo, error)
}

// ErrNoReadDir: the transport cannot list directories.
var ErrNoReadDir = errors.New("this transport cannot list directories")

// ReadDir lists the directory at path through tr, or a transport tr wraps.
func ReadDir(ctx context.Context, tr Transport, path string) ([]fs.FileInfo, error) {
	if dr, ok := As[DirReader](tr); ok {
		return dr.ReadDir(ctx, path)
	}
	return nil, fmt.Errorf("read directory %s: %w", path, ErrNoReadDir)
}
