package check

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
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
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: judged as a stream of %d segments, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, d)
	}
	return segments, true
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

// TestStreamCutsLoopsAsJudge: every golden and recorded trace judged as a
// stream with every loop alone in its segment cut at every pass, and at
// every other pass, gives Judge's judgement, or says it cannot.
func TestStreamCutsLoopsAsJudge(t *testing.T) {
	var files []string
	for _, glob := range []string{"../golden/*.ndjson", "../golden/*/*.ndjson", "testdata/*.ndjson", "testdata/*.ndjson.gz"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	for _, every := range []int{1, 2} {
		separable, loops, cuts := 0, 0, 0
		for _, f := range files {
			tr := readAny(t, f)
			got, segments, n, ok := JudgeStreamLoops(tr, every)
			if !ok {
				continue
			}
			separable++
			if n > 0 {
				loops++
				cuts += n
			}
			if d := cmp.Diff(Judge(tr), got); d != "" {
				t.Errorf("%s: judged as a stream of %d segments, loops cut %d times every %d passes, the judgement differs from the whole trace's (-whole +stream):\n%s", f, segments, n, every, d)
			}
		}
		t.Logf("every %d passes: %d traces, %d judged as a stream, %d with a loop cut (%d cuts)", every, len(files), separable, loops, cuts)
		if loops == 0 {
			t.Errorf("every %d passes: no loop was cut: the comparison compared nothing", every)
		}
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
