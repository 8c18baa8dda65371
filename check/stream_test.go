package check

import (
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/trace"
	"pgregory.net/rapid"
)

// sameJudgement fails t when judging tr as a stream, where it says it can,
// does not give what Judge gives over the whole trace.
func sameJudgement(t *testing.T, name string, tr trace.Trace) (segments int, ok bool) {
	t.Helper()
	got, segments, ok := JudgeStream(tr)
	if !ok {
		return segments, false
	}
	want := Judge(tr)
	if d := judgementDiff(want, got); d != "" {
		t.Errorf("%s: judged as a stream of %d segments, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, d)
	}
	return segments, true
}

// judgementDiff is cmp.Diff(want, got), "" when they are equal; equal
// judgements are told by reflect.DeepEqual first, since cmp walks every
// violation through reflection and its slice diff: seconds under -race
// over the goldens.
func judgementDiff(want, got Judgement) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

func readAny(t *testing.T, path string) trace.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	tr, err := trace.Read(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// TestStreamMatchesJudge: every golden trace and every recorded trace of
// check's tests judged as a stream gives Judge's judgement, or says it
// cannot.
func TestStreamMatchesJudge(t *testing.T) {
	var files []string
	for _, glob := range []string{"../golden/*.ndjson", "../golden/*/*.ndjson", "testdata/*.ndjson", "testdata/*.ndjson.gz"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 50 {
		t.Fatalf("found %d traces, want the goldens and check's own", len(files))
	}
	separable, cut := 0, 0
	for _, f := range files {
		segs, ok := sameJudgement(t, f, readAny(t, f))
		if ok {
			separable++
			if segs > 1 {
				cut++
			}
		} else {
			t.Logf("%s: not separable", f)
		}
	}
	t.Logf("%d traces: %d judged as a stream, %d of them in more than one segment", len(files), separable, cut)
}

// loopTraces are the traces TestStreamCutsLoopsAsJudge cuts: every golden
// and recorded trace, and a never-ending loop of 40 passes alone
// (testdata/loop-forever-alone.yaml) with one pass broken in ways no
// engine fault breaks one pass alone.
func loopTraces(t *testing.T) map[string]trace.Trace {
	var files []string
	for _, glob := range []string{"../golden/*.ndjson", "../golden/*/*.ndjson", "testdata/*.ndjson", "testdata/*.ndjson.gz"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	out := map[string]trace.Trace{}
	for _, f := range files {
		out[f] = readAny(t, f)
	}
	forever := readAny(t, "testdata/loop-forever-alone.ndjson.gz")
	isPass := func(e *trace.Event, k uint64) bool { p, ok := e.PassOf(); return ok && p == k }
	edits := map[string]func(e *trace.Event, k uint64) bool{
		"pass k not restored": func(e *trace.Event, k uint64) bool { return !(e.Type == trace.Restore && isPass(e, k)) },
		"pass k's PASS ENTER names pass k+1": func(e *trace.Event, k uint64) bool {
			if e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && isPass(e, k) {
				p := k + 1
				e.Pass = &p
			}
			return true
		},
		"pass k's PASS EXIT missing": func(e *trace.Event, k uint64) bool {
			return !(e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseExit && isPass(e, k))
		},
		"continue after pass k answered 0": func(e *trace.Event, k uint64) bool {
			if e.Type == trace.Continue && isPass(e, k) {
				zero := int64(0)
				e.Result = &zero
			}
			return true
		},
		"pass k's kernel_trace record missing": func(e *trace.Event, k uint64) bool { return !(e.Type == trace.Record && isPass(e, k)) },
		"pass k's copy of x at EXIT differs": func(e *trace.Event, k uint64) bool {
			if e.Type == trace.ToolMemory && e.Phase == trace.PhaseExit && isPass(e, k) {
				e.Digest = "0000000000000000"
			}
			return true
		},
	}
	for name, edit := range edits {
		for _, k := range []uint64{1, 2, 7, 20, 39} {
			b := trace.Trace{Header: forever.Header}
			for _, e := range forever.Events {
				if edit(&e, k) {
					b.Events = append(b.Events, e)
				}
			}
			for i := range b.Events {
				b.Events[i].Seq = uint64(i + 1)
			}
			out[fmt.Sprintf("loop-forever-alone, %s (k=%d)", name, k)] = b
		}
	}
	return out
}

// cutLoops judges every trace of loopTraces as a stream with its loop cut
// every so many passes (blind: without telling the oracles what a part
// leaves out), and returns how many judgements differ from Judge's and
// how many traces had a loop cut; report (nil: none) is told how each
// differs.
func cutLoops(t *testing.T, traces map[string]trace.Trace, everys []int, blind bool, report func(string)) (differ, loops, cuts int) {
	for name, tr := range traces {
		var want *Judgement
		for _, every := range everys {
			s := NewStream(tr.Header)
			s.SegmentsOfAtLeast(0)
			s.CutLoopsEvery(every)
			s.blindLoops = blind
			for i := range tr.Events {
				s.Add(tr.Events[i])
			}
			got, ok := s.Finish()
			if !ok {
				continue
			}
			if s.LoopCuts() > 0 {
				loops++
				cuts += s.LoopCuts()
			}
			if want == nil {
				j := Judge(tr)
				want = &j
			}
			if report == nil {
				if !reflect.DeepEqual(*want, got) {
					differ++ // only counted: no diff is made
				}
				continue
			}
			if d := judgementDiff(*want, got); d != "" {
				differ++
				report(fmt.Sprintf("%s: judged as a stream of %d segments, its loop cut %d times every %d passes, the judgement differs from the whole trace's (-whole +stream):\n%s", name, s.Segments(), s.LoopCuts(), every, d))
			}
		}
	}
	return differ, loops, cuts
}

// TestStreamCutsLoopsAsJudge: a loop cut between passes (loop.go) is
// judged as Judge judges the whole trace, over every trace of loopTraces.
func TestStreamCutsLoopsAsJudge(t *testing.T) {
	traces := loopTraces(t)
	_, loops, cuts := cutLoops(t, traces, []int{1, 4}, false, func(msg string) { t.Error(msg) })
	t.Logf("%d traces, at 1 and 4 passes a part: %d judgements with a loop cut (%d cuts)", len(traces), loops, cuts)
	if loops == 0 {
		t.Error("no loop was cut: the comparison compared nothing")
	}
}

// TestLoopCutsMustTellTheOracles: the test of the test. A stream that
// cuts loops without telling the oracles which passes a part leaves out,
// and that the loop goes on, must make TestStreamCutsLoopsAsJudge's
// comparison fail.
func TestLoopCutsMustTellTheOracles(t *testing.T) {
	traces := loopTraces(t)
	for name := range traces {
		if !strings.HasPrefix(name, "loop-forever-alone") || strings.Contains(name, "k=") && !strings.Contains(name, "k=7)") {
			delete(traces, name)
		}
	}
	differ, loops, _ := cutLoops(t, traces, []int{5}, true, nil)
	t.Logf("blind cuts: %d judgements with a loop cut, %d differ from Judge's", loops, differ)
	if differ == 0 {
		t.Error("cutting loops without telling the oracles changed no judgement: the comparison cannot see a wrong cut")
	}
}

// TestIDRanges: the set of closed dispatch ids answers as a plain set
// would, whatever order ids come in.
func TestIDRanges(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var r idRanges
		want := map[uint64]bool{}
		for range rapid.IntRange(0, 20).Draw(rt, "batches") {
			ids := rapid.SliceOf(rapid.Uint64Range(1, 60)).Draw(rt, "ids")
			for _, id := range ids {
				want[id] = true
			}
			r.add(slices.Clone(ids))
			for k := 1; k < len(r); k++ {
				if r[k-1].hi+1 >= r[k].lo {
					rt.Fatalf("ranges %v overlap or touch", r)
				}
			}
		}
		for id := uint64(0); id <= 61; id++ {
			if r.has(id) != want[id] {
				rt.Fatalf("has(%d) = %v, want %v; ranges %v", id, r.has(id), want[id], r)
			}
		}
	})
}

// TestStreamMatchesJudgeOnRecordedTraces: every trace under the directory
// $REPLAYSPEC_STREAM_TRACES (make port-c-check records the C port's, under
// free threads, there) judged as a stream gives Judge's judgement, or says
// it cannot. Skipped without the variable.
func TestStreamMatchesJudgeOnRecordedTraces(t *testing.T) {
	dir := os.Getenv("REPLAYSPEC_STREAM_TRACES")
	if dir == "" {
		t.Skip("REPLAYSPEC_STREAM_TRACES names no directory of traces (make port-c-check sets it)")
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".ndjson") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("%s holds %d traces, want the recorded runs' (at least 100)", dir, len(files))
	}
	separable, cut := 0, 0
	for _, f := range files {
		if segs, ok := sameJudgement(t, f, readAny(t, f)); ok {
			separable++
			if segs > 1 {
				cut++
			}
		}
	}
	t.Logf("%d traces: %d judged as a stream, %d of them in more than one segment", len(files), separable, cut)
	if cut == 0 {
		t.Error("no trace was judged in more than one segment: the comparison compared nothing")
	}
}

// TestOpenCounts holds openCounts to the map of counts it replaced: a
// thread is listed while it has something open, over random opens and
// closes on a few threads (closes of nothing open included).
func TestOpenCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 8))
	var o openCounts
	m := map[uint64]int{}
	for step := range 2000 {
		th, up := uint64(rng.IntN(5)), rng.IntN(2) == 0
		o.count(th, up)
		switch {
		case up:
			m[th]++
		case m[th] > 1:
			m[th]--
		default:
			delete(m, th)
		}
		if len(o) != len(m) {
			t.Fatalf("step %d: %d threads listed, want %d", step, len(o), len(m))
		}
		for _, c := range o {
			if m[c.thread] != c.n {
				t.Fatalf("step %d: thread %d has %d open, want %d", step, c.thread, c.n, m[c.thread])
			}
		}
	}
}

// TestTimeSeamsSpanAfterCut: the span a dispatch's records make in a
// segment is the segment's own, after a cut too (span keeps the last one
// asked for).
func TestTimeSeamsSpanAfterCut(t *testing.T) {
	var ts timeSeams
	pass := &trace.Event{Type: trace.Callback, Op: trace.OpPass, Phase: trace.PhaseEnter, Dispatch: 7}
	rec := func(start, end uint64) *trace.Event {
		return &trace.Event{Type: trace.Record, Service: trace.KernelTrace, Dispatch: 7, Agent: 1, Start: start, End: end}
	}
	for _, seg := range [][2]uint64{{10, 20}, {30, 40}} {
		ts.add(pass, ekCallback)
		ts.add(rec(seg[0], seg[1]), ekRecord)
		if sp := ts.spans[7]; sp == nil || !sp.loop || sp.lo != seg[0] || sp.hi != seg[1] {
			t.Fatalf("segment of records %v: the span of dispatch 7 is %+v, want a loop's from %d to %d", seg, sp, seg[0], seg[1])
		}
		ts.cut()
	}
}
