package executor

import (
	"testing"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
)

// TestUndoFileCapIsTheJournals: the classifier rates a command that grows
// a file past what the journal saves by the journal's own cap.
func TestUndoFileCapIsTheJournals(t *testing.T) {
	if safety.UndoFileCap != journal.DefaultMaxBytes {
		t.Fatalf("safety.UndoFileCap %d, journal.DefaultMaxBytes %d", safety.UndoFileCap, journal.DefaultMaxBytes)
	}
}
