package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/autoshell/agent/tools"
)

// progressMin is the size from which a transfer shows a progress bar.
const progressMin = 1 << 20

// transferProgress draws a progress bar on a terminal for each large
// upload_file or download_file (the tools report progress; only cmd prints).
type transferProgress struct {
	w    io.Writer
	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
}

// progressFunc returns the tools.ProgressFunc for a run, or nil when w is
// not a terminal or the output is JSON: then nothing is drawn.
func progressFunc(w io.Writer, json bool) tools.ProgressFunc {
	f, ok := w.(*os.File)
	if json || !ok || !isTerminal(f) {
		return nil
	}
	p := &transferProgress{w: w, bars: map[string]*progressbar.ProgressBar{}}
	return p.update
}

func (p *transferProgress) update(tool, file string, done, total int64) {
	key := tool + "\x00" + file
	p.mu.Lock()
	defer p.mu.Unlock()
	bar, ok := p.bars[key]
	if !ok {
		if total >= 0 && total < progressMin {
			return
		}
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%s %s", tool, path.Base(file))),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		p.bars[key] = bar
	}
	bar.Set64(done)
	if total >= 0 && done >= total {
		bar.Finish()
		delete(p.bars, key)
	}
}
