package logstore

import "testing"

// TestUndoStaysOffUntilGapDurable checks E21's overflow rule: once the
// journal overflowed, a completed Flush turns it back on only if it made
// durable every change made while it was off.
func TestUndoStaysOffUntilGapDurable(t *testing.T) {
	lg := &Log{}
	var k [16]byte
	for i := 0; i <= undoMax; i++ {
		lg.appended++
		lg.journalLocked(&k, 0, 0)
	}
	if !lg.undoOff {
		t.Fatal("the journal did not overflow")
	}
	mark := lg.appended // a Flush takes its mark here...
	lg.appended++
	lg.journalLocked(&k, 0, 0) // ...a change lands, not journaled, while it runs
	lg.durableLocked(mark)
	if !lg.undoOff {
		t.Fatal("the journal came back on although a change made while it was off is not durable")
	}
	lg.durableLocked(lg.appended)
	if lg.undoOff {
		t.Fatal("the journal stayed off after every change was durable")
	}
	lg.appended++
	lg.journalLocked(&k, 0, 0)
	if len(lg.undo) != 1 {
		t.Fatalf("journal holds %d changes after it came back on, want 1", len(lg.undo))
	}
}
