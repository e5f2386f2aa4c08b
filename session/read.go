package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrDamaged marks a session file that cannot be read past some point:
// a line that is not a record, with more after it.
var ErrDamaged = errors.New("session file damaged")

// maxLine bounds one record; a longer line is damage.
const maxLine = 8 << 20

// Parse reads a session file's records. A torn last line (agent was
// killed while writing it, or the file was cut short) is ignored: the
// records before it are the session. A bad line with records after it is
// ErrDamaged, naming the line: what ran after it cannot be told, so the
// session is not resumed from a guess. The first record must be a start.
func Parse(r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var recs []Record
	var bad error // the last line that did not parse
	for line := 1; ; line++ {
		b, err := readLine(br)
		if len(b) > 0 || err == nil {
			if bad != nil {
				return recs, bad
			}
			var rec Record
			if perr := decode(b, &rec); perr != nil {
				bad = fmt.Errorf("%w: line %d: %v", ErrDamaged, line, perr)
			} else {
				if len(recs) == 0 && rec.R != RecStart {
					return nil, fmt.Errorf("%w: line %d: the first record is %q, not start", ErrDamaged, line, rec.R)
				}
				recs = append(recs, rec)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return recs, err
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no start record", ErrDamaged)
	}
	return recs, nil
}

// readLine returns the next line without its newline; io.EOF with the
// last bytes when the input ends without one.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		b, err := br.ReadSlice('\n')
		out = append(out, b...)
		if len(out) > maxLine {
			// Skip to the line's end: too long to be ours.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				return []byte("\x00too long"), nil
			}
			return []byte("\x00too long"), err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			return out[:len(out)-1], nil
		}
		return out, err
	}
}

func decode(b []byte, rec *Record) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty line")
	}
	if err := json.Unmarshal(b, rec); err != nil {
		return err
	}
	switch {
	case rec.R == "":
		return errors.New(`no "r" key`)
	case rec.R == RecStart && rec.Start == nil:
		return errors.New("start record without start")
	case rec.Step < 0 || rec.Phase < 0:
		return errors.New("negative step or phase")
	}
	return nil
}

// ReadFile parses the session file at path.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := Parse(f)
	if err != nil {
		return recs, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
