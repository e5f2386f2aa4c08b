package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/autoshell/agent/testenv"
)

// ttySession is agent running on a real pseudo-terminal: stdin, stdout,
// stderr and /dev/tty are the pty, as for a person at a terminal.
type ttySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	tty  *os.File // the terminal's own side, held open (see status)
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
	read chan struct{} // closed when the pty reader ends
}

// ttyEnd is written to the terminal's own side once agent has exited: when
// it is read from the pty, everything agent wrote before it has been read.
const ttyEnd = "\x00agent-test-end-of-output\x00"

// ttyEnv is a clean operator environment for agent on a terminal: its own
// home, state and config, the scripted model, no CI (so a person may be
// asked), and NO_COLOR unless color is wanted.
func ttyEnv(t *testing.T, srv *testenv.LLMServer, extra ...string) (env []string, home string) {
	home = t.TempDir()
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CI", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "AGENT_BASE_URL", "AGENT_MODEL", "AGENT_API_KEY",
			"NO_COLOR", "TERM", "DEEPSEEK_API_KEY", "OPENAI_API_KEY":
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"AGENT_BASE_URL="+srv.URL, "AGENT_MODEL=gpt-4o-mini", "TERM=xterm")
	return append(env, extra...), home
}

func startTTY(t *testing.T, env []string, args ...string) *ttySession {
	t.Helper()
	return startTTYWith(t, env, nil, args...)
}

// startTTYWith is startTTY with stdout going to w instead (nil: the pty).
func startTTYWith(t *testing.T, env []string, stdout io.Writer, args ...string) *ttySession {
	t.Helper()
	bin, err := exec.LookPath("agent") // placePlainAgent put it there
	if err != nil {
		t.Fatalf("agent is not in PATH: %v", err)
	}
	s := &ttySession{t: t, cmd: exec.Command(bin, args...), done: make(chan error, 1), read: make(chan struct{})}
	s.cmd.Env = env
	s.cmd.Dir = t.TempDir()
	// The terminal is opened here, not by pty.Start, so that the test keeps
	// its own side open: once every holder of that side has closed it, Linux
	// may answer a read of the pty with EIO while agent's last output is
	// still in the kernel's buffer (a summary line went missing so in CI).
	if s.pty, s.tty, err = pty.Open(); err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(s.pty, &pty.Winsize{Rows: 50, Cols: 160}); err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = s.tty, s.tty, s.tty
	if stdout != nil {
		s.cmd.Stdout = stdout
	}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true} // Ctty 0: stdin, the terminal
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.read)
		buf := make([]byte, 4096)
		for {
			n, err := s.pty.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.pty.Close()
		s.tty.Close()
		if t.Failed() {
			t.Logf("terminal output:\n%q", s.output())
		}
	})
	return s
}

// drain writes ttyEnd on the terminal's own side and waits until the pty
// has given it back: what agent wrote before it has then been read. The
// mark is taken out of the output.
func (s *ttySession) drain() {
	s.t.Helper()
	if _, err := s.tty.Write([]byte(ttyEnd)); err != nil {
		s.t.Errorf("the terminal's end mark: %v", err)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		b := s.out.Bytes()
		if i := bytes.Index(b, []byte(ttyEnd)); i >= 0 {
			rest := append([]byte(nil), b[i+len(ttyEnd):]...)
			s.out.Truncate(i)
			s.out.Write(rest)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case <-s.read:
			s.t.Error("the pty ended before the terminal's end mark")
			return
		default:
		}
		if time.Now().After(deadline) {
			s.t.Error("the terminal's output did not end")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *ttySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits until the output after offset from matches re and returns
// the offset just past the match.
func (s *ttySession) waitFor(from int, re string) int {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out := s.output()
		if loc := rx.FindStringIndex(out[min(from, len(out)):]); loc != nil {
			return from + loc[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("no %q on the terminal after offset %d", re, from)
	return 0
}

func (s *ttySession) send(text string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(text)); err != nil {
		s.t.Fatal(err)
	}
}

// exit waits for agent to end and returns its status.
func (s *ttySession) exit() int {
	s.t.Helper()
	select {
	case err := <-s.done:
		return s.status(err)
	case <-time.After(20 * time.Second):
		s.t.Fatal("agent did not exit")
		return -1
	}
}

// status is agent's exit status from Wait's err, once the terminal's
// output has been read to its end.
func (s *ttySession) status(err error) int {
	s.t.Helper()
	s.drain()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

// answerUntilExit answers the questions on the terminal until agent exits
// and returns its status: each match of question, in order, gets
// reply(match) typed in; an empty reply means "not yet", and the same
// question is offered again on the next look at the screen.
func (s *ttySession) answerUntilExit(question *regexp.Regexp, reply func(match []string) string) int {
	s.t.Helper()
	answered := 0
	deadline := time.After(60 * time.Second)
	for {
		select {
		case err := <-s.done:
			return s.status(err)
		case <-deadline:
			s.t.Fatalf("agent did not finish; %d questions answered", answered)
		case <-time.After(20 * time.Millisecond):
		}
		qs := question.FindAllStringSubmatch(s.output(), -1)
		for answered < len(qs) {
			a := reply(qs[answered])
			if a == "" {
				break
			}
			s.send(a)
			answered++
		}
	}
}

var spinnerGlyph = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)

// TestREPLTerminal drives the REPL on a real terminal: the prompt, Ctrl-C
// clearing a line at the prompt, Ctrl-C cancelling a running `sleep` (and
// killing it) with the REPL still there, the approval prompt answered at
// the REPL's own prompt (spinner stopped first), the next task seeing the
// variable saved before, exit, and the history file.
func TestREPLTerminal(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Calls(
			testenv.ToolCall{Name: "execute_command", Arguments: `{"command":"echo tty-hello","save_output_as":"greeting"}`},
			testenv.ToolCall{Name: "execute_command", Arguments: `{"command":"sleep 37"}`}),
		testenv.Calls(testenv.ToolCall{Name: "write_file", Arguments: `{"file_path":"~/note.txt","content":"{{greeting}}"}`}),
		testenv.Text("Written."),
	)
	env, home := ttyEnv(t, srv, "NO_COLOR=1")
	s := startTTY(t, env, "--mode", "react")
	at := s.waitFor(0, `Agent > `)

	// Ctrl-C at the prompt drops the line; the prompt comes back.
	s.send("half a line")
	at = s.waitFor(at, `half a line`)
	s.send("\x03")
	at = s.waitFor(at, `Agent > `)

	// Ctrl-C while the sleep runs cancels the task, and the sleep is gone.
	s.send("sleep for a while\r")
	at = s.waitFor(at, `\[2\] execute_command: sleep 37`)
	at = s.waitFor(at, `Executing…`)
	s.send("\x03")
	at = s.waitFor(at, `task interrupted`)
	at = s.waitFor(at, `Agent > `)
	if out, err := exec.Command("pgrep", "-fx", "sleep 37").Output(); err == nil {
		t.Errorf("sleep 37 still runs after Ctrl-C: pid %s", out)
	}

	// A write asks for approval at the REPL's prompt; y runs it.
	s.send("write the greeting\r")
	at = s.waitFor(at, `MEDIUM risk: write_file`)
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
	time.Sleep(3 * spinnerTick) // a spinner left running would draw now
	if rest := s.output()[at:]; spinnerGlyph.MatchString(rest) {
		t.Errorf("the spinner runs while the approval question is on screen: %q", rest)
	}
	s.send("y\r")
	at = s.waitFor(at, `→ Written\.`)
	at = s.waitFor(at, `Agent > `)
	if b, err := os.ReadFile(filepath.Join(home, "note.txt")); err != nil || string(b) != "tty-hello\n" {
		t.Errorf("note.txt: %q %v", b, err)
	}

	s.send("exit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	out := s.output()
	if !regexp.MustCompile(`2 tasks this session; LLM: 3 calls, \d+ prompt \+ \d+ completion tokens`).MatchString(out) {
		t.Errorf("no session total at exit")
	}
	if strings.Contains(out, "\x1b[3") { // NO_COLOR: no SGR colours (the spinner's erase codes are not colours)
		t.Errorf("colours despite NO_COLOR: %q", out)
	}
	for _, want := range []string{`Thinking…`, `Observing…`} {
		if !strings.Contains(out, want) {
			t.Errorf("the spinner never said %s", want)
		}
	}
	hist, err := os.ReadFile(filepath.Join(home, "state", "agent", "repl_history"))
	if err != nil || !strings.Contains(string(hist), "sleep for a while\nwrite the greeting\n") || strings.Contains(string(hist), "half a line") {
		t.Errorf("history: %q %v", hist, err)
	}
	if fi, err := os.Stat(filepath.Join(home, "state", "agent", "repl_history")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("history mode %v", fi.Mode())
	}
	srv.CheckNoRejections(t)
}

// TestApprovalPromptTerminal is agent -c on a real terminal with the
// default approval mode (ask): the [y/N] question on /dev/tty shows the
// resolved step; y runs it, n (and Enter) refuses it with exit 4.
func TestApprovalPromptTerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		code   int
		want   string
	}{{"y\n", 0, "changed\n"}, {"n\n", 4, "original\n"}, {"\n", 4, "original\n"}} {
		t.Run(strings.TrimSpace(tc.answer+"-"), func(t *testing.T) {
			srv := testenv.StartLLMServer(t,
				testenv.Calls(testenv.ToolCall{Name: "write_file", Arguments: `{"file_path":"~/data.txt","content":"changed\n"}`}),
				testenv.Text("Done."),
			)
			env, home := ttyEnv(t, srv)
			if err := os.WriteFile(filepath.Join(home, "data.txt"), []byte("original\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := startTTY(t, env, "--mode", "react", "-c", "change data.txt")
			at := s.waitFor(0, `MEDIUM risk: write_file on local`)
			at = s.waitFor(at, `file: .*data\.txt`)
			at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
			time.Sleep(3 * spinnerTick)
			if rest := s.output()[at:]; spinnerGlyph.MatchString(rest) {
				t.Errorf("the spinner runs while the question is on screen: %q", rest)
			}
			s.send(tc.answer)
			if code := s.exit(); code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			if b, _ := os.ReadFile(filepath.Join(home, "data.txt")); string(b) != tc.want {
				t.Errorf("data.txt = %q, want %q", b, tc.want)
			}
			out := s.output()
			if tc.code == 0 && !strings.Contains(out, "\x1b[32msuccess") {
				t.Errorf("no green success on a colour terminal: %q", out)
			}
			if !strings.Contains(out, "LLM: 2 calls") {
				t.Errorf("no LLM usage in the summary: %q", out)
			}
		})
	}
}

// TestJSONOnTerminal: with --json and stdout redirected, stdout holds JSON
// lines only, and the terminal on stderr gets no spinner.
func TestJSONOnTerminal(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Calls(testenv.ToolCall{Name: "execute_command", Arguments: `{"command":"echo json-hello"}`}),
		testenv.Text("Done."),
	)
	env, _ := ttyEnv(t, srv)
	var stdout syncBuffer
	s := startTTYWith(t, env, &stdout, "--mode", "react", "--json", "-c", "say hello")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit status %d\nstdout: %s", code, stdout.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["event"] == nil {
			t.Errorf("not a JSON event line: %q (%v)", l, err)
		}
	}
	if !strings.Contains(stdout.String(), `"output":"json-hello\n"`) {
		t.Errorf("the step's output is not in the JSON:\n%s", stdout.String())
	}
	if out := s.output(); spinnerGlyph.MatchString(out) || strings.Contains(out, "Thinking") {
		t.Errorf("spinner on the terminal with --json: %q", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine exec starts.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestREPLTerminalCtrlCAtApproval: Ctrl-C while the model thinks, and at
// the REPL's approval question, cancels the task (nothing written) and
// returns to the prompt.
func TestREPLTerminalCtrlCAtApproval(t *testing.T) {
	asked := make(chan struct{}) // the server holds the slow request
	slow := testenv.Respond(func(*testenv.ChatRequest) testenv.Reply {
		close(asked)
		return testenv.Reply{Content: "too late", Delay: time.Minute}
	})
	srv := testenv.StartLLMServer(t, slow,
		testenv.Calls(testenv.ToolCall{Name: "write_file", Arguments: `{"file_path":"~/note.txt","content":"x"}`}),
	)
	env, home := ttyEnv(t, srv, "NO_COLOR=1")
	s := startTTY(t, env, "--mode", "react")
	at := s.waitFor(0, `Agent > `)
	s.send("think long\r")
	at = s.waitFor(at, `Thinking…`)
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never asked")
	}
	s.send("\x03")
	at = s.waitFor(at, `task interrupted`)
	at = s.waitFor(at, `Agent > `)
	s.send("write a note\r")
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
	s.send("\x03")
	at = s.waitFor(at, `task interrupted`)
	s.waitFor(at, `Agent > `)
	s.send("\x04") // Ctrl-D leaves
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if _, err := os.Stat(filepath.Join(home, "note.txt")); err == nil {
		t.Error("note.txt was written")
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (none after an interrupt)", n)
	}
}

// TestREPLTerminalInputOnly: stdin is a terminal but stdout is redirected
// (agent | tee log): the prompt goes to stderr, tasks and the approval's
// answer are read from the same terminal lines, and stdout gets the task
// output only.
func TestREPLTerminalInputOnly(t *testing.T) {
	srv := testenv.StartLLMServer(t,
		testenv.Calls(testenv.ToolCall{Name: "write_file", Arguments: `{"file_path":"~/note.txt","content":"x"}`}),
		testenv.Text("Written."),
		testenv.Text("Second."),
	)
	env, home := ttyEnv(t, srv, "NO_COLOR=1")
	var stdout syncBuffer
	s := startTTYWith(t, env, &stdout, "--mode", "react")
	at := s.waitFor(0, `Agent > `)
	s.send("write a note\n")
	at = s.waitFor(at, `Run it\? \[y/N/a=always\] `)
	s.send("y\n")
	at = s.waitFor(at, `Agent > `)
	s.send("second task\n")
	s.waitFor(at, `Agent > `)
	s.send("exit\n")
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if b, err := os.ReadFile(filepath.Join(home, "note.txt")); err != nil || string(b) != "x" {
		t.Errorf("note.txt: %q %v", b, err)
	}
	out := stdout.String()
	if !strings.Contains(out, "→ Written.") || !strings.Contains(out, "→ Second.") || strings.Contains(out, "Agent >") || strings.Contains(out, "Run it?") {
		t.Errorf("stdout:\n%s", out)
	}
}

// TestSetLLMTerminal answers `agent config set-llm` at a real terminal: the
// pasted key is not echoed, it is stored in the file, which is mode 0600,
// and the connection was tested with it.
func TestSetLLMTerminal(t *testing.T) {
	const key = "sk-typed-at-terminal-0123456789wxyz"
	srv := testenv.StartLLMServer(t).RequireKey(key)
	env, home := ttyEnv(t, srv)
	s := startTTY(t, env, "config", "set-llm")
	at := s.waitFor(0, `Choice \[1\]: `)
	s.send("4\n")
	at = s.waitFor(at, `Base URL: `)
	s.send(srv.URL + "\n")
	at = s.waitFor(at, `Model: `)
	s.send("tty-model\n")
	at = s.waitFor(at, `API key \(input hidden`)
	at = s.waitFor(at, `environment variable\): `)
	s.send(key + "\n")
	at = s.waitFor(at, `Testing connection to .*… OK`)
	s.waitFor(at, `✓ Configuration saved to `)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if strings.Contains(s.output(), "typed-at-terminal") {
		t.Errorf("the key was echoed: %q", s.output())
	}
	path := filepath.Join(home, "config", "agent", "config.yaml")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "api_key: "+key) || !strings.Contains(string(b), "model: tty-model") {
		t.Errorf("config: %q %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode: %v %v", fi.Mode(), err)
	}
}
