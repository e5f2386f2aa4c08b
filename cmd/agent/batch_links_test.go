package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchHostLinksDenied: a plan run on every host of an inventory (two
// over real sshd, one local) is rated on where the symbolic links already
// on each host lead: `cat DIR/k`, with k a link to a key file, is denied
// on every host without a terminal and prints nothing of the key, while
// a link to a plain file is read.
func TestBatchHostLinksDenied(t *testing.T) {
	f := newBatchFixture(t)
	key := "KEY-MATERIAL-" + filepath.Base(f.dir)
	for name, content := range map[string]string{"deploy.key": key + "\n", "notes.txt": "plain notes\n"} {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"k": f.dir + "/deploy.key", "n": f.dir + "/notes.txt"} {
		if err := os.Symlink(target, filepath.Join(f.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	inv := f.inventory(fmt.Sprintf("\n[ctl]\nctl1 ansible_connection=local ansible_host=127.0.0.1 ansible_port=%d\n", closedPort(t)))
	read := f.writeFile("read.yaml", "steps:\n  - tool: execute_command\n    parameters: {command: \"cat {{dir}}/k\"}\n")
	out, errOut, code := f.agent("run", read, "-i", inv, "--limit", "web01:db01:ctl1")
	if code == 0 || strings.Contains(out+errOut, key) {
		t.Fatalf("exit %d, want the step denied on each host and the key unread\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := strings.Count(out, "reads sensitive file"); n < 3 {
		t.Errorf("the denial says why %d times, want once a host at least\nstdout:\n%s", n, out)
	}
	if !strings.Contains(out, "3 hosts: 0 ok, 3 failed") {
		t.Errorf("summary:\n%s\nstderr:\n%s", out, errOut)
	}
	plain := f.writeFile("plain.yaml", "steps:\n  - tool: execute_command\n    parameters: {command: \"cat {{dir}}/n\"}\n")
	out, errOut, code = f.agent("run", plain, "-i", inv, "--limit", "web01:db01:ctl1")
	if code != 0 || !strings.Contains(out, "3 hosts: 3 ok") {
		t.Errorf("a link to a plain file: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
