package transporttest

import (
	"bytes"
	"path"
	"testing"
)

func init() {
	// A file larger than any packet size a transport may choose (32 KiB,
	// or 128 KiB where an SFTP server says it takes more), of a length no
	// packet divides, written new, read back, then replaced and read again.
	add("LargeFileRoundTrip", func(t *testing.T, f Fixture) {
		p := path.Join(f.Dir, "large.bin")
		for i, n := range []int{3<<20 + 7, 1<<20 + 131071} {
			data := randomBytes(t, n)
			write(t, f.Transport, p, data, 0o640)
			if got := read(t, f.Transport, p); !bytes.Equal(got, data) {
				t.Fatalf("round %d: read back %d bytes differing from the %d written", i, len(got), n)
			}
		}
	})
}
