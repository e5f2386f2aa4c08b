package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	sshtr "github.com/autoshell/agent/transport/ssh"
)

// terminalPrompter asks on the controlling terminal (/dev/tty), like ssh, so
// that prompts work even when stdin and stdout are redirected.
type terminalPrompter struct{}

// newTerminalPrompter returns a prompter, or nil when there is no terminal
// (then nothing can be asked, and what needs an answer is refused).
func newTerminalPrompter() sshtr.Prompter {
	if os.Getenv("CI") == "true" {
		return nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer tty.Close()
	if !isTerminal(tty) {
		return nil
	}
	return terminalPrompter{}
}

func (terminalPrompter) Confirm(ctx context.Context, question string) (bool, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("open terminal: %w", err)
	}
	defer tty.Close()
	for {
		fmt.Fprint(tty, question+" ")
		line, err := readLine(ctx, tty)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "yes":
			return true, nil
		case "no", "":
			return false, nil
		}
		fmt.Fprint(tty, "Please type 'yes' or 'no': ")
	}
}

func (terminalPrompter) Passphrase(ctx context.Context, prompt string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open terminal: %w", err)
	}
	defer tty.Close()
	fmt.Fprint(tty, prompt)
	type answer struct {
		b   []byte
		err error
	}
	fd := int(tty.Fd())
	saved, err := term.GetState(fd) // ReadPassword turns echo off
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	ch := make(chan answer, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		ch <- answer{b, err}
	}()
	select {
	case a := <-ch:
		fmt.Fprintln(tty)
		return a.b, a.err
	case <-ctx.Done():
		// Ctrl-C while asking: put echo back before agent exits, since the
		// read that would restore it never returns.
		term.Restore(fd, saved)
		fmt.Fprintln(tty)
		return nil, ctx.Err()
	}
}

func readLine(ctx context.Context, f *os.File) (string, error) {
	ch := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(f).ReadString('\n')
		if err != nil && line == "" {
			errc <- errors.New("no answer from the terminal")
			return
		}
		ch <- line
	}()
	select {
	case l := <-ch:
		return l, nil
	case err := <-errc:
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
