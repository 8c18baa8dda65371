package trace

import (
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
