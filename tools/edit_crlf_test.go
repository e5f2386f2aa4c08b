package tools

import (
	"strings"
	"testing"
)

// TestEditCRLF: a multi-line pattern written with LF matches a file whose
// lines end in CRLF, and the replacement keeps CRLF; a file mixing line
// ends is not guessed at; a pattern not found in a CRLF file says so.
func TestEditCRLF(t *testing.T) {
	file := "[main]\r\ndebug = false\r\nport = 80\r\n"
	got, n, err := Edit(file, "debug = false\nport = 80", "debug = true\nport = 8080", false, 0)
	if err != nil || n != 1 || got != "[main]\r\ndebug = true\r\nport = 8080\r\n" {
		t.Errorf("CRLF file, LF pattern: %q, %d, %v", got, n, err)
	}
	// One line: matches as it is, line ends untouched.
	if got, _, err := Edit(file, "port = 80", "port = 81", false, 0); err != nil || got != "[main]\r\ndebug = false\r\nport = 81\r\n" {
		t.Errorf("one line: %q, %v", got, err)
	}
	// Mixed line ends: no rewrite of the pattern, and the hint.
	mixed := "a\r\nb\nc\r\n"
	if _, _, err := Edit(mixed, "a\nb", "x", false, 0); err == nil || !strings.Contains(err.Error(), "CRLF") {
		t.Errorf("mixed line ends: %v", err)
	}
	if _, _, err := Edit(file, "nothing\nhere", "x", false, 0); err == nil || !strings.Contains(err.Error(), "CRLF") {
		t.Errorf("not found in a CRLF file: %v", err)
	}
	if _, _, err := Edit(file, `debug = false\nport`, "x", true, 0); err == nil || !strings.Contains(err.Error(), `\r?\n`) {
		t.Errorf("a regexp not found in a CRLF file: %v", err)
	}
	if _, _, err := Edit("a\nb\n", "x\ny", "z", false, 0); err == nil || strings.Contains(err.Error(), "CRLF") {
		t.Errorf("an LF file names CRLF: %v", err)
	}
}
