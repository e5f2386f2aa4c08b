package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schollz/progressbar/v3"
)

func TestProgressOnlyOnTerminal(t *testing.T) {
	if progressFunc(&bytes.Buffer{}, false) != nil {
		t.Error("progress drawn to a buffer")
	}
}

func TestTransferProgress(t *testing.T) {
	var out bytes.Buffer
	p := &transferProgress{w: &out, bars: map[string]*progressbar.ProgressBar{}}
	p.update("upload_file", "/tmp/small", 10, 100) // below progressMin: no bar
	if out.Len() != 0 || len(p.bars) != 0 {
		t.Fatalf("a bar for a small file: %q", out.String())
	}
	for _, done := range []int64{0, 1 << 20, 3 << 20, 4 << 20} {
		p.update("upload_file", "/data/big.iso", done, 4<<20)
	}
	if !strings.Contains(out.String(), "upload_file big.iso") {
		t.Errorf("bar output %q", out.String())
	}
	if len(p.bars) != 0 {
		t.Errorf("finished bar not forgotten")
	}
}
