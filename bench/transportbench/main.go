// Command transportbench measures agent's SSH transport for bench/run.sh:
// step latency over one connection, SFTP upload/download throughput, and
// peak memory while a command prints a huge output. It prints one line,
// "<mode> seconds=<s> bytes=<n> maxrss_kib=<k>", for the script to compare
// with OpenSSH on the same sshd in the same run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "transportbench:", err)
		os.Exit(1)
	}
}

func run() error {
	host := flag.String("host", "vub", "Host alias from ~/.ssh/config")
	mode := flag.String("mode", "steps", "steps | upload | download | output")
	n := flag.Int("n", 200, "steps: number of `true` commands")
	file := flag.String("file", "", "upload: local file to send; download: remote file to fetch")
	remote := flag.String("remote", "", "upload: remote destination path")
	size := flag.Int64("size", 1<<30, "output: bytes the remote command prints")
	flag.Parse()

	ctx := context.Background()
	cfg, err := sshtr.Resolve(*host, sshtr.ResolveOptions{})
	if err != nil {
		return err
	}
	t, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	if err != nil {
		return err
	}
	defer t.Close()
	if _, err := t.Run(ctx, transport.Command{Command: "true"}); err != nil { // connection warm, as with a ControlMaster
		return err
	}

	var bytes int64
	start := time.Now()
	switch *mode {
	case "steps":
		for i := 0; i < *n; i++ {
			res, err := t.Run(ctx, transport.Command{Command: "true"})
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return fmt.Errorf("true exited %d", res.ExitCode)
			}
		}
	case "upload":
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		if bytes, err = t.WriteFile(ctx, *remote, f, 0o644); err != nil {
			return err
		}
	case "download":
		if bytes, err = t.ReadFile(ctx, *file, io.Discard); err != nil {
			return err
		}
	case "output":
		res, err := t.Run(ctx, transport.Command{Command: fmt.Sprintf("head -c %d /dev/zero", *size)})
		if err != nil {
			return err
		}
		if bytes = res.StdoutBytes; bytes != *size {
			return fmt.Errorf("got %d bytes of output, want %d", bytes, *size)
		}
	default:
		return fmt.Errorf("unknown mode %q", *mode)
	}
	secs := time.Since(start).Seconds()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("%s seconds=%.4f bytes=%d maxrss_kib=%d\n", *mode, secs, bytes, ru.Maxrss)
	return nil
}
