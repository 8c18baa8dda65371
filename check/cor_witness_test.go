package check

import (
	"maps"
	"path/filepath"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// apiWitnessesByThread is apiWitnesses as it was written first: every
// event of every thread walked, the calls open on it kept.
func (x *index) apiWitnessesByThread() map[uint64]apiWitness {
	if !x.has(trace.APICall) {
		return nil
	}
	anchor := x.captureAnchors()
	out := map[uint64]apiWitness{}
	for th, pos := range x.byThread {
		var open []apiFrame
		for _, i := range pos {
			e := &x.ev[i]
			if x.col[i].kind == ekAPICall && e.Corr != nil {
				switch {
				case e.Phase == trace.PhaseEnter:
					open = append(open, apiFrame{call: e.Call, id: e.Corr.Internal, enter: i})
				case e.Phase == trace.PhaseExit:
					for k := len(open) - 1; k >= 0; k-- {
						if open[k].id == e.Corr.Internal {
							open = open[:k]
							break
						}
					}
				}
				continue
			}
			id, ok := anchor[i]
			if !ok || len(open) == 0 {
				continue
			}
			w := apiWitness{thread: th, at: i, inner: open[len(open)-1]}
			if n := len(open); n > 1 {
				outer := open[n-2]
				w.outer = &outer
			}
			out[id] = w
		}
	}
	return out
}

// The witnesses found walking only the calls and the anchors are those a
// walk of every thread finds, on every golden and recorded trace.
func TestAPIWitnessesAsAWalk(t *testing.T) {
	var files []string
	for _, glob := range []string{"../golden/*.ndjson", "../golden/*/*.ndjson", "testdata/*.ndjson", "testdata/*.ndjson.gz"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	witnessed := 0
	for _, f := range files {
		x := newIndex(readAny(t, f))
		got, want := x.apiWitnesses(), x.apiWitnessesByThread()
		if !maps.EqualFunc(got, want, func(a, b apiWitness) bool {
			return a.thread == b.thread && a.at == b.at && a.inner == b.inner && (a.outer == nil) == (b.outer == nil) && (a.outer == nil || *a.outer == *b.outer)
		}) {
			t.Errorf("%s: witnesses %v, a walk finds %v", f, got, want)
		}
		witnessed += len(want)
	}
	if witnessed == 0 {
		t.Error("no trace has a witness: the comparison shows nothing")
	}
}
