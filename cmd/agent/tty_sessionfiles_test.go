package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestREPLSessionFiles drives session_files in the REPL on a real
// terminal: the index spans tasks, so a second task's "previous" and
// "this" resolve the files the first task read and wrote, and the second
// task's model request carries the "Files of this session" summary.
func TestREPLSessionFiles(t *testing.T) {
	srv := testenv.StartLLMServer(t)
	env, home := ttyEnv(t, srv, "NO_COLOR=1")
	conf := filepath.Join(home, "app.conf")
	if err := os.WriteFile(conf, []byte("port = 8080\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(home, "notes.log")
	srv.Push(
		// task 1: read the config, write a log
		testenv.Calls(testenv.Call("read_file", `{"file_path":"`+conf+`"}`)),
		testenv.Calls(testenv.Call("write_file", `{"file_path":"`+notes+`","content":"checked port\n"}`)),
		testenv.Text("The port is 8080; noted in notes.log."),
		// task 2: which files was that?
		testenv.Calls(testenv.Call("session_files", `{"action":"list","reference":"all"}`)),
		testenv.Calls(testenv.Call("session_files", `{"action":"get","reference":"this","file_type":"config"}`)),
		testenv.Text("Those were app.conf and notes.log."),
	)
	s := startTTY(t, env, "--mode", "react", "--approve", "medium")
	at := s.waitFor(0, `Agent > `)
	s.send("what port does the app use? note it\r")
	at = s.waitFor(at, `noted in notes\.log\.`)
	at = s.waitFor(at, `Agent > `)

	s.send("which files did you touch?\r")
	at = s.waitFor(at, `session_files`)
	at = s.waitFor(at, `app\.conf`)
	at = s.waitFor(at, `Those were app\.conf and notes\.log\.`)
	s.waitFor(at, `Agent > `)
	s.send("exit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}

	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	// The second task's first request already lists both files.
	first2 := string(reqs[3].Body)
	if !strings.Contains(first2, "Files of this session") || !strings.Contains(first2, "app.conf") || !strings.Contains(first2, "notes.log") {
		t.Errorf("task 2's request does not carry the session's files:\n%s", first2)
	}
	// The tool's replies resolve them: the list names both, "this config" is app.conf.
	replies := toolReplies(reqs[5]) // task 1's three, then task 2's two
	if len(replies) < 2 {
		t.Fatalf("last request has tool replies %q", replies)
	}
	list, get := replies[len(replies)-2], replies[len(replies)-1]
	for _, name := range []string{conf, notes} {
		if !strings.Contains(list, name) {
			t.Errorf("session_files list does not name %s:\n%s", name, list)
		}
	}
	if !strings.Contains(get, conf) || strings.Contains(get, notes) {
		t.Errorf("session_files get this config = %q, want %s only", get, conf)
	}
	srv.CheckNoRejections(t)
}
