package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestSHA256: the launcher's own SHA-256 is crypto/sha256's, at every
// length around the block and padding boundaries and for writes split
// anywhere.
func TestSHA256(t *testing.T) {
	b := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\x00\xff", 10))
	for n := 0; n <= len(b); n++ {
		for _, split := range []int{0, n / 3, n / 2, n} {
			d := newSHA256()
			d.Write(b[:split])
			d.Write(b[split:n])
			if got, want := d.Sum(), sha256.Sum256(b[:n]); got != want {
				t.Fatalf("%d bytes split at %d: %x, want %x", n, split, got, want)
			}
		}
	}
	// The published test vector ("abc").
	d := newSHA256()
	d.Write([]byte("abc"))
	if got := d.Sum(); hexString(got[:]) != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("sha256(abc) = %x", got)
	}
	if got := hexString([]byte{0, 0x0f, 0xa0, 0xff}); got != hex.EncodeToString([]byte{0, 0x0f, 0xa0, 0xff}) {
		t.Errorf("hexString = %q", got)
	}
}

func FuzzSHA256(f *testing.F) {
	f.Add([]byte("abc"), 1)
	f.Add(make([]byte, 119), 64)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		if split < 0 || split > len(b) {
			split = len(b) / 2
		}
		d := newSHA256()
		d.Write(b[:split])
		first := d.Sum() // Sum leaves d as it was
		d.Write(b[split:])
		if got, want := d.Sum(), sha256.Sum256(b); got != want {
			t.Fatalf("%x", b)
		}
		if want := sha256.Sum256(b[:split]); first != want {
			t.Fatalf("prefix of %x", b)
		}
		if hexString(b) != hex.EncodeToString(b) {
			t.Fatalf("hexString(%x)", b)
		}
	})
}
