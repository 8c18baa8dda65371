package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/internal/corpus"
)

// readResult is what a reader made of a trace: the header it was given,
// the events in order, and how it ended.
type readResult struct {
	Header Header
	Events []Event
	Err    string
}

// readFunc reads data as ReadEach or ReadBatches.
type readFunc func(r io.Reader) readResult

func byReadEach(r io.Reader) readResult {
	var out readResult
	err := ReadEach(r, func(h Header) error { out.Header = h; return nil },
		func(e *Event) error { out.Events = append(out.Events, *e); return nil })
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

func byBatches(workers, chunkSize int) readFunc {
	return func(r io.Reader) readResult {
		var out readResult
		err := readBatches(r, workers, chunkSize, func(h Header) error { out.Header = h; return nil },
			func(es []Event) error { out.Events = append(out.Events, es...); return nil })
		if err != nil {
			out.Err = err.Error()
		}
		return out
	}
}

// diffRead says how read's result on data differs from ReadEach's ("" when
// the same header, events and error).
func diffRead(read readFunc, data []byte, tail error) string {
	in := func() io.Reader {
		if tail != nil {
			return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(tail))
		}
		return bytes.NewReader(data)
	}
	want, got := byReadEach(in()), read(in())
	return quickDiff(want, got)
}

// quickDiff is cmp.Diff(want, got, opts...), told "" by reflect.DeepEqual
// first where it can be: cmp walks long traces through reflection and its
// slice diff, seconds under -race. DeepEqual is the stricter of the two
// (nil and empty lists differ for it), so an equal pair it misses goes to
// cmp, which says "" under opts.
func quickDiff(want, got any, opts ...cmp.Option) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got, opts...)
}

// traceFiles is every trace of the corpus, whole.
func traceFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := corpus.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range files {
		if out[name], err = corpus.Read(name); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// readEdges are traces at the edges of reading: no header, blank lines,
// errors at the first and the last line, each kind of error ReadEach
// gives, lines at the length limit.
func readEdges() map[string]string {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","sources":["tool","sdk","app"]}`
	ev := func(seq int) string { return fmt.Sprintf(`{"seq":%d,"type":"api","call":"create_context"}`, seq) }
	many := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(ev(i) + "\n")
		}
		return b.String()
	}
	// A warning line of exactly n bytes.
	long := func(seq, n int) string {
		s := fmt.Sprintf(`{"seq":%d,"type":"warning","message":""}`, seq)
		return s[:len(s)-2] + strings.Repeat("x", n-len(s)) + `"}`
	}
	return map[string]string{
		"empty":                    "",
		"blank lines":              "\n \n\t\r\n",
		"header only":              head,
		"header after blanks":      "\n\n" + head + "\n\n" + ev(1) + "\n\n\n" + ev(2),
		"bom":                      "\xef\xbb\xbf" + head + "\n" + ev(1),
		"bad header":               `{"trace":"x"}` + "\n" + ev(1),
		"v1":                       `{"trace":"replayspec.trace/v1"}`,
		"crlf":                     head + "\r\n" + ev(1) + "\r\n" + ev(2) + "\r\n",
		"many":                     head + "\n" + many(3000),
		"bad first":                head + "\n{\n" + many(10),
		"bad last":                 head + "\n" + many(1000) + "{\n",
		"bad middle":               head + "\n" + many(500) + `{"seq":501,"type":"api","bogus":1}` + "\n" + many(10),
		"seq back":                 head + "\n" + many(700) + ev(3) + "\n",
		"seq back then bad":        head + "\n" + many(700) + ev(3) + "\n{\n",
		"seq back and unknown":     head + "\n" + many(5) + `{"seq":2,"type":"nope"}` + "\n",
		"unknown type":             head + "\n" + many(5) + `{"seq":6,"type":"nope"}` + "\n",
		"source not reported":      head + "\n" + many(5) + `{"seq":6,"type":"kernel"}` + "\n",
		"no type":                  head + "\n" + many(5) + `{"seq":6}` + "\n",
		"end line":                 head + "\n" + many(5) + `{"end":5}` + "\n",
		"escapes":                  head + "\n" + `{"seq":1,"type":"warning","message":"a\nb\u00e9"}` + "\n",
		"not a count":              head + "\n" + `{"seq":1,"type":"record","counters":[{"name":"X","value":NaN}]}`,
		"line at the limit":        head + "\n" + long(1, maxLine-1) + "\n" + ev(2),
		"line one over":            head + "\n" + long(1, maxLine) + "\n" + ev(2),
		"last line at the limit":   head + "\n" + ev(1) + "\n" + long(2, maxLine),
		"last line over":           head + "\n" + ev(1) + "\n" + long(2, maxLine+1),
		"long line after an error": head + "\n" + "{\n" + long(2, maxLine+10),
	}
}

// TestReadBatchesMatchesReadEach: on every trace of the corpus and every
// edge, cut in chunks of many sizes, read with one worker and with
// several, and read to an error part way, ReadBatches gives what ReadEach
// gives.
func TestReadBatchesMatchesReadEach(t *testing.T) {
	inputs := map[string][]byte{}
	files := traceFiles(t)
	names := slices.Sorted(maps.Keys(files))
	configs := []struct{ workers, chunk int }{{1, 1}, {3, 1}, {2, 200}, {4, 4096}, {2, 256 << 10}}
	if testing.Short() {
		// make test (-short, -race): a spread of the corpus, two ways of
		// cutting it; all in make test-heavy.
		names, configs = everyNth(names, 8), configs[2:4:4]
	}
	for _, name := range names {
		inputs[name] = files[name]
	}
	for name, s := range readEdges() {
		if testing.Short() && len(s) > 1<<20 {
			continue // the lines at the 4 MiB limit: make test-heavy
		}
		inputs[name] = []byte(s)
	}
	boom := errors.New("boom")
	for name, data := range inputs {
		for _, c := range configs {
			for _, tail := range []error{nil, boom} {
				if d := diffRead(byBatches(c.workers, c.chunk), data, tail); d != "" {
					t.Errorf("%s, %d workers, chunks of %d bytes, read error %v (-ReadEach +ReadBatches):\n%s", name, c.workers, c.chunk, tail, d)
				}
			}
		}
	}
}

// TestReadBatchesDiffCatchesPlantedBugs is the test of the test: readers
// each broken in one way are caught.
func TestReadBatchesDiffCatchesPlantedBugs(t *testing.T) {
	var inputs [][]byte
	for _, s := range readEdges() {
		if len(s) < 1<<20 {
			inputs = append(inputs, []byte(s))
		}
	}
	files := traceFiles(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		inputs = append(inputs, files[name])
	}
	for name, broken := range map[string]readFunc{
		"drops a chunk's last event": func(r io.Reader) readResult {
			var out readResult
			err := readBatches(r, 2, 4096, func(h Header) error { out.Header = h; return nil },
				func(es []Event) error { out.Events = append(out.Events, es[:len(es)-1]...); return nil })
			if err != nil {
				out.Err = err.Error()
			}
			return out
		},
		"swaps two chunks": func(r io.Reader) readResult {
			out := byBatches(2, 4096)(r)
			if n := len(out.Events); n > 200 {
				out.Events = append(out.Events[100:200:200], out.Events[:100]...)
			}
			return out
		},
		"numbers lines from 0": func(r io.Reader) readResult {
			out := byBatches(1, 1)(r)
			out.Err = strings.Replace(out.Err, "line ", "line 0", 1)
			return out
		},
	} {
		caught := slices.ContainsFunc(inputs, func(data []byte) bool {
			return !reflect.DeepEqual(byReadEach(bytes.NewReader(data)), broken(bytes.NewReader(data))) // what diffRead tests first
		})
		if !caught {
			t.Errorf("a reader that %s passes the differential test", name)
		}
	}
}

// TestReadBatchesStopsOnError: an error from each or header ends the read
// with that error, soon (not after reading the rest), and ReadBatches does
// not return while its cutter may still read r.
func TestReadBatchesStopsOnError(t *testing.T) {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","sources":["tool"]}` + "\n"
	var b strings.Builder
	b.WriteString(head)
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"type":"api"}`+"\n", i)
	}
	stopErr := errors.New("enough")
	for name, c := range map[string]struct {
		header func(Header) error
		each   func([]Event) error
	}{
		"header": {func(Header) error { return stopErr }, func([]Event) error { return nil }},
		"each":   {func(Header) error { return nil }, func([]Event) error { return stopErr }},
	} {
		r := &watchedReader{r: strings.NewReader(b.String()), t: t}
		err := readBatches(r, 3, 64, c.header, c.each)
		r.returned.Store(true)
		if err != stopErr {
			t.Errorf("%s: ReadBatches returned %v, want the callback's error", name, err)
		}
		if n := r.n.Load(); n > int64(b.Len()/2) { // the scanner's buffer and a few chunks, not the rest
			t.Errorf("%s: ReadBatches read %d bytes of %d after it was told to stop", name, n, b.Len())
		}
	}
}

// watchedReader fails the test when it is read after returned is set.
type watchedReader struct {
	r        io.Reader
	t        *testing.T
	returned atomic.Bool
	n        atomic.Int64 // bytes read
}

func (w *watchedReader) Read(p []byte) (int, error) {
	if w.returned.Load() {
		w.t.Error("r read after ReadBatches returned")
	}
	n, err := w.r.Read(p)
	w.n.Add(int64(n))
	return n, err
}

// FuzzReadBatches: on any input, ReadBatches (in small chunks, so that
// lines of one input fall in several) gives what ReadEach gives.
func FuzzReadBatches(f *testing.F) {
	for _, s := range readSeeds() {
		f.Add([]byte(s))
	}
	for _, s := range readEdges() {
		if len(s) < 1<<20 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := diffRead(byBatches(2, 64), data, nil); d != "" {
			t.Fatalf("(-ReadEach +ReadBatches):\n%s", d)
		}
	})
}
