package redact

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"io"
	"path"
	"strings"
)

// Archives and compressed files a step unpacks (`unzip -p x.zip`,
// `tar xOf x.tar`, `bzcat x.bz2`, `zcat x.gz`) show the files inside
// them: HarvestData reads what they hold, each member as a file of its
// own name, at most MaxHarvest bytes of members in all and two levels
// deep (a .tar.gz, a .zip holding a .gz). xz, zstd and 7z are not read
// (no decoder in Go's standard library).

// maxArchiveDepth is how deep archives inside archives are read.
const maxArchiveDepth = 2

// maxMembers bounds the members of one archive read.
const maxMembers = 256

// unpacked is data's members when data is an archive or a compressed
// file (gzip, bzip2, tar, zip), each with its path below name; nil when
// it is none, or past the budget of MaxHarvest bytes.
func unpacked(name string, data []byte) []member {
	budget := MaxHarvest
	switch {
	case len(data) > 18 && data[0] == 0x1f && data[1] == 0x8b:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil
		}
		return decompressed(strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".tgz"), zr, budget)
	case len(data) > 10 && string(data[:3]) == "BZh" && data[3] >= '1' && data[3] <= '9':
		return decompressed(strings.TrimSuffix(name, ".bz2"), bzip2.NewReader(bytes.NewReader(data)), budget)
	case len(data) >= 512 && string(data[257:262]) == "ustar":
		return tarMembers(name, data, budget)
	case len(data) > 22 && string(data[:4]) == "PK\x03\x04":
		return zipMembers(name, data, budget)
	}
	return nil
}

// member is a file inside an archive.
type member struct {
	name string
	data []byte
}

// decompressed is what r decompresses to, at most budget bytes of it (a
// file cut there is still read: its lines up to the cut hold secrets).
func decompressed(name string, r io.Reader, budget int) []member {
	var out bytes.Buffer
	_, err := io.Copy(&limitWriter{w: &out, n: budget}, r)
	if err != nil && out.Len() == 0 {
		return nil
	}
	return []member{{name, out.Bytes()}}
}

func tarMembers(name string, data []byte, budget int) []member {
	var out []member
	tr := tar.NewReader(bytes.NewReader(data))
	for len(out) < maxMembers {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Typeflag != tar.TypeReg || h.Size <= 0 || h.Size > int64(budget) {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			break
		}
		budget -= len(b)
		out = append(out, member{path.Join(name, h.Name), b})
	}
	return out
}

func zipMembers(name string, data []byte, budget int) []member {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil
	}
	var out []member
	for _, f := range zr.File {
		if len(out) == maxMembers {
			break
		}
		if f.FileInfo().IsDir() || f.UncompressedSize64 > uint64(budget) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			continue
		}
		var b bytes.Buffer
		_, err = io.Copy(&limitWriter{w: &b, n: budget}, rc)
		rc.Close()
		if err != nil && b.Len() == 0 {
			continue
		}
		budget -= b.Len()
		out = append(out, member{path.Join(name, f.Name), b.Bytes()})
	}
	return out
}
