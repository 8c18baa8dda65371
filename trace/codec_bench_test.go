package trace

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkDecodeEvent decodes every event line of the corpus (the goldens
// and recorded traces), by the fast decoder and by DecodeStrict: ns/op is
// a line's, as are B/op and allocs/op.
func BenchmarkDecodeEvent(b *testing.B) {
	lines := corpusLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte, *Event) error
	}{
		{"fast", new(eventDecoder).decode},
		{"strict", func(l []byte, e *Event) error { *e = Event{}; return DecodeStrict(l, e) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(lines)))
			b.ReportAllocs()
			var e Event
			i := 0
			for b.Loop() {
				_ = c.decode(lines[i], &e)
				if i++; i == len(lines) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkEncodeEvent writes every event of the corpus, by appendEvent and
// by encoding/json as the writer did before it.
func BenchmarkEncodeEvent(b *testing.B) {
	var events []Event
	size := 0
	for _, l := range corpusLines(b) {
		var e Event
		if DecodeStrict(l, &e) == nil {
			events = append(events, e)
			size += len(l)
		}
	}
	for _, c := range []struct {
		name   string
		encode func([]byte, *Event) []byte
	}{
		{"append", appendEvent},
		{"json", func(buf []byte, e *Event) []byte { return append(buf, jsonLine(e)...) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(events)))
			b.ReportAllocs()
			var buf []byte
			i := 0
			for b.Loop() {
				buf = c.encode(buf[:0], &events[i])
				if i++; i == len(events) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkDecodeTrace decodes every event line of the trace that
// $REPLAYSPEC_BENCH_TRACE names (a recorded one, such as `replayspec run
// --trace-out` writes), read into memory outside the timing, on one
// goroutine with one decoder: an op is the whole trace, so that ns/op is
// the decoding of `replayspec check` on it and MB/s its rate; cpu-ms/op
// is the CPU an op took, steadier than ns/op on a busy machine.
func BenchmarkDecodeTrace(b *testing.B) {
	path := os.Getenv("REPLAYSPEC_BENCH_TRACE")
	if path == "" {
		b.Skip("REPLAYSPEC_BENCH_TRACE names no trace")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	for l := range bytes.Lines(data) {
		if l = bytes.TrimSpace(l); len(l) > 0 && !bytes.HasPrefix(l, []byte(`{"trace":`)) {
			lines = append(lines, l)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var e Event
	cpu := cpuNow()
	for b.Loop() {
		var d eventDecoder
		for _, l := range lines {
			if err := d.decode(l, &e); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
