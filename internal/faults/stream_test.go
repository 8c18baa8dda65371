package faults

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// judgementDiff is cmp.Diff(want, got), "" when they are equal; equal
// judgements are told by reflect.DeepEqual first, since cmp walks every
// violation through reflection and its slice diff: a fifth of this
// package's time under -race, over thousands of equal pairs.
func judgementDiff(want, got check.Judgement) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

// streamTally counts what a cross-check of check.Stream saw.
type streamTally struct{ traces, separable, cut, loops, expecting, expectCut int }

// sameAsStream fails t when tr judged as a stream (check.JudgeStream) says
// it could be judged apart yet concludes something else than check.Judge
// over the whole trace: verdicts, instances and violations must be equal;
// and likewise spec s's expectations judged with the stream (Stream.Expect)
// and by check.JudgeSpec.
func (n *streamTally) sameAsStream(t *testing.T, name string, s spec.Spec, tr trace.Trace) {
	t.Helper()
	n.traces++
	n.sameExpectations(t, name, s, tr)
	got, segments, ok := check.JudgeStream(tr)
	if !ok {
		return
	}
	n.separable++
	if segments > 1 {
		n.cut++
	}
	want := check.Judge(tr)
	if d := judgementDiff(want, got); d != "" {
		t.Errorf("%s: judged as a stream of %d segments, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, d)
	}
	// Again with every indefinite loop alone in its segment cut at every
	// pass (check/loop.go).
	got, segments, cuts, ok := check.JudgeStreamLoops(tr, 1)
	if !ok || cuts == 0 {
		return
	}
	n.loops++
	if d := judgementDiff(want, got); d != "" {
		t.Errorf("%s: judged as a stream of %d segments, its loop cut %d times, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, cuts, d)
	}
}

// sameExpectations fails t when spec s's expectations judged with tr as a
// stream cut at every chance differ from JudgeSpec's over the whole trace.
func (n *streamTally) sameExpectations(t *testing.T, name string, s spec.Spec, tr trace.Trace) {
	t.Helper()
	if !check.HasExpectations(s) {
		return
	}
	j, exp, unseen, segments, ok := check.JudgeStreamSpec(s, tr, 0)
	if !ok {
		return
	}
	n.expecting++
	if segments > 1 {
		n.expectCut++
	}
	wj, wexp, wunseen := check.JudgeSpec(s, tr)
	if !reflect.DeepEqual(exp, wexp) || !reflect.DeepEqual(unseen, wunseen) {
		t.Errorf("%s: its expectations judged as a stream of %d segments differ from the whole trace's (-whole +stream):\n%s%s", name, segments, cmp.Diff(wexp, exp), cmp.Diff(wunseen, unseen))
	}
	if d := judgementDiff(wj, j); d != "" {
		t.Errorf("%s: judged with its expectations as a stream of %d segments, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, d)
	}
}

// TestStreamJudgesAsWhole: the library with every planted fault, and
// generated specs under free threads, at every profile. A streamed
// judgement that differs from the whole trace's, on a correct trace or on
// a broken one, fails. Under -short: the library without faults and 12
// generated specs.
func TestStreamJudgesAsWhole(t *testing.T) {
	specs := library(t)
	faults := replay.AllFaults()
	nGen := 300
	if testing.Short() {
		// Under the race detector: the library without faults at the
		// three profiles and a dozen generated specs; all of it in make
		// test-heavy.
		faults, nGen = faults[:0], 12
	}
	var n streamTally
	eachProfileAndFault(specs, faults, func(name string, s spec.Spec, tr trace.Trace) { n.sameAsStream(t, name, s, tr) })
	for i := range nGen {
		caps := specgen.SimCaps
		if i%2 == 1 {
			caps = specgen.CUDACaps
		}
		seed := 31001 + i
		s := spec.Defaults(specgen.Example(specgen.Config{Caps: caps, Name: fmt.Sprintf("gen-%06d", seed)}, seed))
		for _, parallel := range []bool{false, true} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			tr, err := simtarget.Sim{Parallel: parallel}.Run(ctx, s, target.Options{})
			cancel()
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
				continue
			}
			for name, sources := range threeProfiles {
				seen := tr
				if sources != nil {
					seen = tr.Only(sources)
				}
				n.sameAsStream(t, fmt.Sprintf("%s (replayspec gen --seed %d --count 1) free threads %v at %s", s.Name, seed, parallel, name), s, seen)
			}
		}
	}
	t.Logf("%d traces: %d judged as a stream, %d of them in more than one segment; %d judged with a loop cut between passes; %d judged with their spec's expectations as a stream, %d of them in more than one segment",
		n.traces, n.separable, n.cut, n.loops, n.expecting, n.expectCut)
	if n.cut == 0 || n.expectCut == 0 {
		t.Error("no trace (or no trace with expectations) was judged in more than one segment: the comparison compared nothing")
	}
}

// threeProfiles are what the full, black-box and runtime profiles report.
var threeProfiles = map[string][]trace.Source{"full": nil, "black-box": profileSources["black-box"], "runtime": profileSources["runtime"]}

// eachProfileAndFault runs specs with no fault and with each of faults
// alone, at the three profiles, and hands each trace to f with a name
// that says which.
func eachProfileAndFault(specs []spec.Spec, faults []replay.Fault, f func(name string, s spec.Spec, tr trace.Trace)) {
	for name, sources := range threeProfiles {
		for _, fault := range append([]replay.Fault{""}, faults...) {
			var fs replay.Faults
			if fault != "" {
				fs = replay.Faults{fault: true}
			}
			for k, o := range RunAt(context.Background(), specs, fs, 2, sources) {
				f(fmt.Sprintf("%s with %q at %s", o.Spec, fault, name), specs[k], o.Result.Trace)
			}
		}
	}
}
