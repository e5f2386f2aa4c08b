package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Problem is the first line of a log whose chain does not hold.
type Problem struct {
	File   string
	Line   int // 1-based; one past the last line when lines are missing at the end
	Reason string
}

func (p *Problem) Error() string { return fmt.Sprintf("%s: line %d: %s", p.File, p.Line, p.Reason) }

// Summary is what Verify read of an intact file.
type Summary struct {
	File      string
	Lines     int
	FirstSeq  uint64
	LastSeq   uint64
	FirstPrev string // the hash the first line names (a rotated file's last)
	LastHash  string
	Previous  string // the file a rotate record names as the one before
	HeadLags  bool   // the head names an earlier line (not synced before a crash)
}

// Verify checks the chain of each file (in order: a rotated file before
// the one that follows it) and returns their summaries, or the first
// broken line as a *Problem: a line that is not a chained record, a
// sequence number out of order (lines removed or reordered), a line whose
// hash is not the one the next line names (the line was changed), a file
// that does not start where the one before ends, or a last line the head
// file does not know (changed, or lines removed from the end).
func Verify(files ...string) ([]Summary, error) {
	var out []Summary
	for i, f := range files {
		s, err := verifyFile(f)
		if err != nil {
			return out, err
		}
		if i > 0 && s.Lines > 0 {
			prev := out[i-1]
			if s.FirstPrev != prev.LastHash || s.FirstSeq != prev.LastSeq+1 {
				return out, &Problem{File: f, Line: 1, Reason: fmt.Sprintf("does not continue %s (record %d, hash %.12s…, follows record %d, hash %.12s…)",
					prev.File, s.FirstSeq, s.FirstPrev, prev.LastSeq, prev.LastHash)}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// maxLineBytes bounds one line Verify reads.
const maxLineBytes = 64 << 20

func verifyFile(path string) (Summary, error) {
	s := Summary{File: path}
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	h, hasHead, err := readHead(path)
	if err != nil {
		return s, err
	}
	headLine := 0
	br := bufio.NewReaderSize(f, 64<<10)
	var prev []byte
	for n := 1; ; n++ {
		line, err := readWhole(br)
		if err == io.EOF {
			break
		}
		if errors.Is(err, errTorn) {
			return s, &Problem{File: path, Line: n, Reason: "not a whole line (a torn write, or the file was cut)"}
		}
		if err != nil {
			return s, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return s, &Problem{File: path, Line: n, Reason: "not a JSON record (changed)"}
		}
		if r.Seq == 0 {
			return s, &Problem{File: path, Line: n, Reason: "no sequence number: not a chained record"}
		}
		if n == 1 {
			if (r.Seq != 1 || r.Prev != "") && r.Event != "rotate" {
				return s, &Problem{File: path, Line: 1, Reason: fmt.Sprintf("record %d starts the file, which is neither the first record nor a rotation's: lines removed from the start", r.Seq)}
			}
			s.FirstSeq, s.FirstPrev, s.Previous = r.Seq, r.Prev, r.Previous
		} else {
			switch {
			case r.Seq > s.LastSeq+1:
				return s, &Problem{File: path, Line: n, Reason: fmt.Sprintf("record %d where record %d belongs: lines removed or reordered before it", r.Seq, s.LastSeq+1)}
			case r.Seq <= s.LastSeq:
				return s, &Problem{File: path, Line: n, Reason: fmt.Sprintf("record %d after record %d: lines reordered or repeated", r.Seq, s.LastSeq)}
			case r.Prev != lineHash(prev):
				return s, &Problem{File: path, Line: n - 1, Reason: fmt.Sprintf("changed: its hash is not the one line %d (record %d) names for it", n, r.Seq)}
			}
		}
		s.Lines, s.LastSeq, s.LastHash = n, r.Seq, lineHash(line)
		if hasHead && r.Seq == h.seq {
			headLine = n
			if s.LastHash != h.hash {
				return s, &Problem{File: path, Line: n, Reason: "changed: its hash is not the one the head file names"}
			}
		}
		prev = line
	}
	if hasHead {
		switch {
		case h.seq > s.LastSeq || (h.seq > 0 && headLine == 0 && s.Lines == 0):
			return s, &Problem{File: path, Line: s.Lines + 1, Reason: fmt.Sprintf("missing: the head file names record %d, the log ends at record %d (lines removed from the end)", h.seq, s.LastSeq)}
		case h.seq < s.LastSeq:
			s.HeadLags = true
		}
	}
	return s, nil
}

var errTorn = errors.New("torn line")

// readWhole reads one line without its newline; a last line without one
// is errTorn.
func readWhole(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLineBytes {
			return nil, fmt.Errorf("a line of more than %d bytes", maxLineBytes)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errTorn
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}

// Read calls fn with each record of the file at path, in order; a line
// that is not a record is an error naming it.
func Read(path string, fn func(line int, r Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := readWhole(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("%s: line %d: not a JSON record", path, n)
		}
		if err := fn(n, r); err != nil {
			return err
		}
	}
}
