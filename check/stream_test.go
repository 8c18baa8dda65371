package check

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/trace"
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
