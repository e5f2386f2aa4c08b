package ssh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// longCommand is a command of about n bytes that prints "ok N" with the
// sha256 of its standard input: the input after the request line must
// reach it whole.
func longCommand(n int) string {
	pad := strings.Repeat("x", n)
	return ": '" + pad + "'\nprintf 'ok %s\\n' \"$(sha256sum | cut -c1-64)\""
}

func runLong(t *testing.T, tr *Transport, n int, stdin []byte) (transport.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tr.Run(ctx, transport.Command{Command: longCommand(n), Stdin: strings.NewReader(string(stdin))})
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A command whose exec request would be over Dropbear's limit reaches a
// server that ends the connection past 9,000 bytes (as Dropbear does) on
// standard input, its own input after it intact, on the session path and
// on the worker's.
func TestLongCommandUnderDropbearLimit(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{MaxExec: 9000})
	var w warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: w.warn})
	in := []byte(strings.Repeat("input line\n", 20000))
	for _, n := range []int{100, 7000, 9000, 20000, 100000} {
		res, err := runLong(t, tr, n, in)
		if err != nil {
			t.Fatalf("%d-byte command on stdin: %v", n, err)
		}
		if want := "ok " + sumOf(in) + "\n"; res.Stdout != want || res.ExitCode != 0 {
			t.Fatalf("%d-byte command: exit %d, stdout %q, stderr %q; want %q", n, res.ExitCode, res.Stdout, res.Stderr, want)
		}
		// Without stdin: the worker takes it (a request line, no exec).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err = tr.Run(ctx, transport.Command{Command: longCommand(n)})
		cancel()
		if err != nil || res.Stdout != "ok "+sumOf(nil)+"\n" {
			t.Fatalf("%d-byte command on the worker: %v, %q %q", n, err, res.Stdout, res.Stderr)
		}
	}
	if w.String() != "" {
		t.Errorf("warnings on a host within its limit: %s", w.String())
	}
}

// A server whose limit is lower than agent's (4 KiB) and ends the
// connection there: the error names the request's length and agent's
// limit, is said once, and the next command goes on standard input.
func TestExecLimitLowerThanOursDrops(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{MaxExec: 4096})
	var w warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: w.warn})
	in := []byte("some input\n")
	_, err := runLong(t, tr, 6000, in)
	if err == nil {
		t.Fatal("a 6,000-byte exec request to a server that drops past 4 KiB: no error")
	}
	for _, want := range []string{"ended the connection at an exec request of 6", "8192", "Dropbear", "run it again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, transport.ErrConnection) {
		t.Errorf("error %v is not a connection error", err)
	}
	for range 2 {
		res, err := runLong(t, tr, 6000, in)
		if err != nil || res.Stdout != "ok "+sumOf(in)+"\n" {
			t.Fatalf("after the drop, the same command: %v, %q %q", err, res.Stdout, res.Stderr)
		}
	}
	if n := strings.Count(w.String(), "exec request"); n != 1 {
		t.Errorf("warned %d times, want once: %s", n, w.String())
	}
}

// A server that refuses (a false reply) exec requests over its limit:
// nothing ran, so the command is sent again on standard input at once.
func TestExecLimitLowerThanOursRefuses(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{MaxExec: -4096})
	var w warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: w.warn})
	in := []byte("x\n")
	for range 2 {
		res, err := runLong(t, tr, 6000, in)
		if err != nil || res.Stdout != "ok "+sumOf(in)+"\n" {
			t.Fatalf("6,000-byte command on a server refusing past 4 KiB: %v, %q %q", err, res.Stdout, res.Stderr)
		}
	}
	if n := strings.Count(w.String(), "refused an exec request of 6"); n != 1 {
		t.Errorf("warned %d times, want once: %q", n, w.String())
	}
}

// A server whose limit is below even the piped request: a clear error,
// not a retry loop.
func TestExecLimitBelowPiped(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{MaxExec: -300})
	tr := dial(t, hostConfig(srv.Host), Options{})
	_, err := runLong(t, tr, 6000, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("refused an exec request of %d bytes", len(pipedCommand))) {
		t.Fatalf("error %v; want the piped request's refusal named with its length", err)
	}
}

// The guard refuses an exec request over MaxExec before it reaches the
// host, naming the limit.
func TestStartExecGuard(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	tr := dial(t, hostConfig(srv.Host), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, sess, err := tr.session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	err = startExec(sess, "echo "+strings.Repeat("y", MaxExec))
	if !errors.Is(err, ErrExecTooLong) || !strings.Contains(err.Error(), "8192") || !strings.Contains(err.Error(), "standard input") {
		t.Fatalf("startExec of %d bytes: %v", MaxExec+5, err)
	}
	if err := startExec(sess, "true"); err != nil {
		t.Fatalf("the session after a refused request: %v", err)
	}
}

// Every exec request of the package goes through startExec: no other
// function calls Start, Run, Output, CombinedOutput or Shell on a
// session.
func TestOneExecRoute(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]bool{}
		for _, im := range file.Imports {
			imports[strings.Trim(im.Path.Value, `"`)] = true
		}
		if imports["os/exec"] && !imports["golang.org/x/crypto/ssh"] {
			continue // local processes only (Match exec, ProxyCommand)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if ok && fn.Name.Name == "startExec" {
				return false
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "Start", "Run", "Output", "CombinedOutput", "Shell":
					if len(call.Args) <= 1 {
						if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "t" || id.Name == "tr") {
							return true // Transport.Run
						}
						t.Errorf("%s: %s.%s: an exec outside startExec", fset.Position(call.Pos()), types(sel.X), sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return fmt.Sprintf("%T", e)
}
