package golden

import (
	"bytes"
	"reflect"
	"sync"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// check.JudgeSpec hands its index's arrays to the next index it or a
// stream's segment makes (check's positions slot): what it judged must not
// depend on which arrays it was given, nor change when another judgement
// takes them after. Every library trace is judged by JudgeSpec on several
// goroutines at once, each in its own order, and held to Judge and
// JudgeExpectations, which build an index of their own and keep none.
func TestJudgeSpecAsFreshIndexes(t *testing.T) {
	type judged struct {
		s        spec.Spec
		t        trace.Trace
		j        check.Judgement
		expected []check.Violation
		unseen   []string
	}
	var all []judged
	for _, s := range library(t) {
		tr, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		s = spec.Defaults(s)
		exp, unseen := check.JudgeExpectations(s, tr)
		all = append(all, judged{s: s, t: tr, j: check.Judge(tr), expected: exp, unseen: unseen})
	}
	workers := 4
	if testing.Short() {
		workers = 2
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := range all {
				at := (k + w*len(all)/workers) % len(all) // each worker its own order
				if w%2 == 1 {
					at = len(all) - 1 - at
				}
				want := &all[at]
				j, exp, unseen := check.JudgeSpec(want.s, want.t)
				if !reflect.DeepEqual(j, want.j) || !reflect.DeepEqual(exp, want.expected) || !reflect.DeepEqual(unseen, want.unseen) {
					t.Errorf("%s: JudgeSpec (arrays reused, worker %d) judged otherwise than a fresh index: %d violations and %d expectations broken, want %d and %d",
						want.s.Name, w, len(j.Violations), len(exp), len(want.j.Violations), len(want.expected))
				}
			}
		})
	}
	wg.Wait()
}
