package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
)

// TestSessionFilesIndex: the files a plan uploads, writes and reads are
// indexed with how, size and host; session_files resolves "this log" to
// the uploaded file, which a later step reads through the variable.
func TestSessionFilesIndex(t *testing.T) {
	h := newHarness(t)
	local := filepath.Join(t.TempDir(), "a.log")
	if err := os.WriteFile(local, []byte("uploaded line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := h.write("app.conf", "port=80\n")
	remote := filepath.Join(h.dir, "a.log")
	p := mustParse(t, fmt.Sprintf(`
steps:
  - tool: upload_file
    parameters: {local_path: %q, remote_path: %q}
  - tool: read_file
    parameters: {file_path: %q}
  - tool: write_file
    parameters: {file_path: %q, content: "x\n"}
  - tool: session_files
    parameters: {action: get, reference: this, file_type: log}
    save_output_as: logf
  - tool: read_file
    parameters: {file_path: "{{logf}}"}
    save_output_as: content
`, local, remote, conf, filepath.Join(h.dir, "notes.txt")))
	e := h.executor(safety.ModeMedium, false, nil)
	sum, err := e.RunPlan(context.Background(), p)
	if err != nil || !sum.Success {
		t.Fatalf("RunPlan: %v %+v", err, sum)
	}
	if v, _ := e.Vars().Get("content"); v != "uploaded line\n" {
		t.Fatalf("content %q", v)
	}
	files := e.Vars().SessionFiles()
	if len(files) != 3 {
		t.Fatalf("index %+v", files)
	}
	up := files[0] // read again last
	if up.Path != remote || up.Local != local || up.Size != 14 || up.Host != "local" ||
		fmt.Sprint(up.Ops) != fmt.Sprint([]execctx.FileEvent{execctx.FileUploaded, execctx.FileRead}) {
		t.Errorf("uploaded file %+v", up)
	}
	if files[1].Path != filepath.Join(h.dir, "notes.txt") || files[1].Ops[0] != execctx.FileWritten || files[2].Path != conf || files[2].Size != 8 {
		t.Errorf("index %+v", files)
	}
}
