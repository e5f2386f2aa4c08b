package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// scriptTimeout bounds a password script (a client of a secret store may
// hang on a lost network; a run must not).
const scriptTimeout = 60 * time.Second

// maxPasswordFile bounds a password file or script output.
const maxPasswordFile = 1 << 20

// PasswordFromFile reads a vault password the way Ansible's
// --vault-password-file does: an executable file is run and its stdout,
// without trailing line breaks, is the password; any other file's
// content, without surrounding white space, is. An empty password is an
// error.
func PasswordFromFile(ctx context.Context, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("vault password file: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("vault password file %s: is a directory", path)
	}
	var pw []byte
	if fi.Mode()&0o111 != 0 {
		pw, err = runPasswordScript(ctx, path)
		if err != nil {
			return nil, err
		}
		pw = bytes.TrimRight(pw, "\r\n")
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("vault password file: %w", err)
		}
		defer f.Close()
		pw, err = io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
		if err != nil {
			return nil, fmt.Errorf("vault password file %s: %w", path, err)
		}
		if len(pw) > maxPasswordFile {
			return nil, fmt.Errorf("vault password file %s: larger than %d bytes", path, maxPasswordFile)
		}
		pw = bytes.TrimSpace(pw)
	}
	if len(pw) == 0 {
		return nil, fmt.Errorf("vault password file %s: the password is empty", path)
	}
	return pw, nil
}

func runPasswordScript(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	var out, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: maxPasswordFile}
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	cmd.Stdin = os.Stdin // a script may ask on the terminal, as Ansible lets it
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("vault password script %s: no answer within %s", path, scriptTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("vault password script %s: %v: %s", path, err, msg)
		}
		return nil, fmt.Errorf("vault password script %s: %w", path, err)
	}
	return out.Bytes(), nil
}

// limitWriter keeps the first n bytes and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// ParseID splits a --vault-id argument, [ID@]SOURCE, where SOURCE is a
// password file or "prompt". Without ID the id is DefaultID.
func ParseID(arg string) (id, source string) {
	if i := strings.IndexByte(arg, '@'); i >= 0 {
		id, source = arg[:i], arg[i+1:]
		if id == "" {
			id = DefaultID
		}
		return id, source
	}
	return DefaultID, arg
}
