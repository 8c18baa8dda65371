package check

import (
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// TestMain has every index built over a stream's columns (segment.Push,
// a cut, a loop's kept head and last pass, a part's prefix, a segment
// judged aside) check them against columns made from its events, in
// every test of the package (TestStreamMatchesJudge, TestStreamCutsLoopsAsJudge,
// TestStreamAsideAsInline...): a column filled wrong, or not moved with its
// event, panics there. Benchmarks run without the check.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		verifyColumns = true
	}
	os.Exit(m.Run())
}

// TestStreamColumnsAsIndexed: a stream's columns, filled as its events
// arrive, are those the index makes from the events, through a cut, a
// loop's keep and a stream judged aside; and the check TestMain turns on
// sees a wrong one.
func TestStreamColumnsAsIndexed(t *testing.T) {
	if !verifyColumns {
		t.Skip("columns are not verified while benchmarking")
	}
	cuts, aside := 0, 0
	var tr trace.Trace
	for _, f := range []string{"testdata/loop-forever-alone.ndjson.gz", "../golden/concurrent-same-agent-waits.ndjson", "../golden/fixed-three-passes.ndjson"} {
		tr = readAny(t, f)
		for _, judgeAside := range []bool{false, true} {
			s := NewStream(tr.Header)
			s.SegmentsOfAtLeast(0)
			s.CutLoopsEvery(2)
			if judgeAside {
				s.JudgeAside()
			}
			for i := range tr.Events {
				s.Add(tr.Events[i])
			}
			if _, ok := s.Finish(); !ok {
				t.Fatalf("%s: not separable", f)
			}
			cuts += s.LoopCuts()
			aside += s.judgedAside
		}
	}
	if cuts == 0 || aside == 0 {
		t.Fatalf("%d loop cuts, %d segments judged aside: the traces no longer exercise them", cuts, aside)
	}
	// A wrong column is seen.
	c := columnsOf(tr.Events)
	c.rows[len(c.rows)/2].thread++
	defer func() {
		if recover() == nil {
			t.Error("an index over a wrong column did not panic: the stream's columns go unchecked")
		}
	}()
	newIndexCols(tr, &c)
}

// TestSegmentColumns: the open segment's columns, plain and packed past
// plainEvents, through keep, are those of what all gives back.
func TestSegmentColumns(t *testing.T) {
	ev := func(seq int) trace.Event {
		e := trace.Event{Seq: uint64(seq), Type: trace.Callback, Op: trace.OpPass, Phase: trace.PhaseEnter,
			Thread: uint64(seq % 3), Dispatch: uint64(seq / 5), Pass: trace.U64(uint64(seq % 7))}
		if seq%4 == 0 {
			e.Type, e.Pass, e.Payload = trace.Kernel, nil, []string{"x"}
		}
		if seq%6 == 0 {
			e.Payload = []string{"y"}
		}
		return e
	}
	sizes := []int{5, plainEvents + 9}
	for _, n := range sizes {
		var g segment
		for round := range 2 {
			g.begin([]trace.Event{ev(-1 - round), ev(-7)})
			for i := range n {
				e := ev(i)
				g.Push(&e)
			}
			all := g.all()
			if want := columnsOf(all); g.cols.diff(&want) != "" {
				t.Fatalf("%d events, round %d: columns %s", n, round, g.cols.diff(&want))
			}
			g.keep(2, n-3)
			e := ev(1000)
			g.Push(&e)
			if want := columnsOf(g.all()); g.cols.diff(&want) != "" {
				t.Fatalf("%d events, round %d, after keep: columns %s", n, round, g.cols.diff(&want))
			}
		}
		g.release()
	}
}

// TestPassPayloadKept: passPayload's kept answer is the answer for the
// list asked about: a list shared by many callbacks, another list of the
// same length, a shorter list over the same elements, an empty one. (Kept
// by length alone, or by where the elements lie alone, it answers wrong.)
func TestPassPayloadKept(t *testing.T) {
	all := []string{trace.MemberReplayStartContext, trace.MemberReplayStopContext, trace.MemberReplayPassCount}
	other := []string{trace.MemberReplayStartContext, trace.MemberReplayContinue, trace.MemberReplayStopContext}
	lists := [][]string{all, all, all[:2], all[:2], other, all, all[:1], nil, all[:0], other[:2], other[:2], all}
	var x index
	for k, p := range lists {
		set, lacks := x.passPayload(p)
		wantSet := intersect(p, passForbidden)
		var wantLacks []string
		for _, f := range passRequired {
			if !slices.Contains(p, f) {
				wantLacks = append(wantLacks, f)
			}
		}
		if !slices.Equal(set, wantSet) || !slices.Equal(lacks, wantLacks) {
			t.Fatalf("list %d %v: set %v lacks %v, want set %v lacks %v", k, p, set, lacks, wantSet, wantLacks)
		}
	}
}
