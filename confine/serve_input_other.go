//go:build !linux

package confine

import "os"

func serveInput() *os.File { return os.Stdin }
