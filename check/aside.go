package check

import (
	"sync"

	"github.com/replayspec/replayspec/trace"
)

// judgeAside judges a Stream's closed segments on a goroutine of its own,
// one at a time and in the order they were closed, while the stream takes
// the events of the next: on two cores, judging and assembling (and
// decoding, for replayspec check) overlap. What each judgement adds to the
// totals is added in the same order as inline, so the judgement is the
// same (TestStreamAsideAsInline; every test through JudgeStream judges
// aside).
type judgeAside struct {
	jobs    chan segJob
	free    chan segBufs   // judged segments' slices, for the next ones
	pending sync.WaitGroup // jobs sent and not yet judged
}

// JudgeAside has closed segments judged on a goroutine of the stream's own
// while it takes the next events. Close (or Finish) stops it. A segment
// in which a loop was cut is judged inline: what it finds decides how the
// stream goes on.
func (s *Stream) JudgeAside() {
	if s.aside != nil || !s.separable {
		return
	}
	a := &judgeAside{jobs: make(chan segJob, 1), free: make(chan segBufs, 3)}
	s.aside = a
	go func() {
		for j := range a.jobs {
			s.judgeSegment(j, nil)
			select {
			case a.free <- segBufs{j.ev, j.cols}:
			default:
			}
			a.pending.Done()
		}
	}()
}

// submit hands j to the judging goroutine (waiting while one is queued
// already: about three segments are held) and returns a slice to hold the
// next segment in: a judged one's, or a new one of j's size (not grown
// from nothing, copied at each doubling).
func (a *judgeAside) submit(j segJob) ([]trace.Event, columns) {
	a.pending.Add(1)
	a.jobs <- j
	select {
	case b := <-a.free:
		b.cols.kc = j.cols.kc
		return b.ev, b.cols
	default:
		return make([]trace.Event, 0, cap(j.ev)), columns{kc: j.cols.kc}
	}
}

// segBufs are a judged segment's slices.
type segBufs struct {
	ev   []trace.Event
	cols columns
}

// drain waits until every segment handed aside is judged: then what
// judgeSegment writes may be read and written here.
func (s *Stream) drain() {
	if s.aside != nil {
		s.aside.pending.Wait()
	}
}

// Close waits for the segments being judged aside and stops the judging
// goroutine; the stream judges inline from then on. A stream that is let
// go before Finish must be closed if it judges aside.
func (s *Stream) Close() {
	if s.aside == nil {
		return
	}
	s.drain()
	close(s.aside.jobs)
	s.aside = nil
}
