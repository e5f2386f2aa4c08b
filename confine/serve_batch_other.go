//go:build !linux

package confine

// hungUp is Linux's alone (serve_batch_linux.go).
func (s *server) hungUp() bool { return false }
