package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestTransfer(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			var last atomic.Int64
			reg := Default(testPolicy(), WithProgress(func(_, _ string, done, total int64) { last.Store(done) }))
			src := filepath.Join(t.TempDir(), "src.bin")
			data := strings.Repeat("0123456789abcdef", 200_000) // 3.2 MB, beyond the read cap
			writeFile(t, src, data, 0o640)
			remote := filepath.Join(tg.dir, "up.bin")
			out, err := reg.Run(ctxT(t), tg.tr, UploadFileName, map[string]any{"local_path": src, "remote_path": remote})
			if err != nil || out.IsError || readFile(t, remote) != data || last.Load() != int64(len(data)) {
				t.Fatalf("upload %+v %v", out, err)
			}
			back := filepath.Join(t.TempDir(), "back.bin")
			out, err = reg.Run(ctxT(t), tg.tr, DownloadFileName, map[string]any{"local_path": back, "remote_path": remote})
			if err != nil || out.IsError || readFile(t, back) != data {
				t.Fatalf("download %+v %v", out, err)
			}
			out, _ = reg.Run(ctxT(t), tg.tr, DownloadFileName, map[string]any{"local_path": back, "remote_path": filepath.Join(tg.dir, "nope")})
			if !out.IsError || !strings.Contains(out.Observation, "no such file") {
				t.Fatalf("%+v", out)
			}
			out, _ = reg.Run(ctxT(t), tg.tr, UploadFileName, map[string]any{"local_path": filepath.Join(t.TempDir(), "nope"), "remote_path": remote})
			if !out.IsError {
				t.Fatalf("%+v", out)
			}
			if _, err := os.Stat(back); err != nil {
				t.Fatal(err)
			}
		})
	}
}
