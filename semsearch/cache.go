package semsearch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// cacheVersion changes when the cache's layout or the chunking does: an
// index of another version is rebuilt.
const cacheVersion = 1

// index is what is cached for one host and directory: per file, its size
// and mtime when it was indexed, what was decided about it, and its
// passages' vectors for Model.
type index struct {
	Version int                   `json:"version"`
	Host    string                `json:"host"`
	Root    string                `json:"root"`
	Model   string                `json:"model,omitempty"`
	Files   map[string]*fileEntry `json:"files"`
}

type fileEntry struct {
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime"` // unix nanoseconds
	// Skip is why the file has no passages ("binary"); empty for text.
	Skip   string       `json:"skip,omitempty"`
	Chunks []cacheChunk `json:"chunks,omitempty"`
}

type cacheChunk struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Vec   []byte `json:"vec"` // float32s, little-endian
}

// cachePath is where the index of root on host lives under dir.
func cachePath(dir, host, root string) string {
	sum := sha256.Sum256([]byte(host + "\x00" + root))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
}

// loadIndex reads the cached index; a missing, unreadable or foreign one is
// an empty index (it is only a cache), with a note when it was there but
// unusable.
func loadIndex(dir, host, root string) (*index, string) {
	empty := &index{Version: cacheVersion, Host: host, Root: root, Files: map[string]*fileEntry{}}
	if dir == "" {
		return empty, ""
	}
	b, err := os.ReadFile(cachePath(dir, host, root))
	if os.IsNotExist(err) {
		return empty, ""
	}
	var ix index
	if err == nil {
		err = json.Unmarshal(b, &ix)
	}
	if err != nil {
		return empty, fmt.Sprintf("cached index unreadable, rebuilt: %v", err)
	}
	if ix.Version != cacheVersion || ix.Host != host || ix.Root != root || ix.Files == nil {
		return empty, ""
	}
	return &ix, ""
}

// save writes the index atomically (a temporary file renamed over it),
// readable by the user only.
func (ix *index) save(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("search cache: %w", err)
	}
	b, err := json.Marshal(ix)
	if err != nil {
		return fmt.Errorf("search cache: %w", err)
	}
	dst := cachePath(dir, ix.Host, ix.Root)
	f, err := os.CreateTemp(dir, ".index-*")
	if err != nil {
		return fmt.Errorf("search cache: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), dst)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("search cache: %w", werr)
	}
	return nil
}

func packVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func unpackVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
