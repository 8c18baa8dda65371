package runner

import (
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// TestStreamerOutlivesAPanickingOracle: a panic inside the oracles'
// stream (here a nil one) stops the stream, not the target: add returns,
// the lock is free for the next event, which is still counted, and the
// trace is left to be judged whole; a panic outside the oracles (the
// tally's, the spool's) is the target's own and goes on up.
func TestStreamerOutlivesAPanickingOracle(t *testing.T) {
	st := &streamer{} // st.st is nil: AddEvent panics on it
	st.add(&trace.Event{Type: trace.Kernel})
	if !st.broken || st.judging {
		t.Fatalf("after a panic in AddEvent: broken %v, judging %v; want the stream stopped", st.broken, st.judging)
	}
	st.add(&trace.Event{Type: trace.Kernel}) // would deadlock were the lock still held
	if st.tally.t.Events != 2 {
		t.Errorf("tally %d events, want 2", st.tally.t.Events)
	}

	st = &streamer{}
	defer func() {
		if recover() == nil {
			t.Errorf("a panic in the spool's writer was swallowed as an oracle's")
		}
		if !st.mu.TryLock() {
			t.Errorf("the lock is still held after a panic")
		}
	}()
	st.add(nil) // the tally reads the event: a panic of the target's own
}
