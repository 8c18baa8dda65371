package main

import (
	"bufio"
	"os"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// BenchmarkCheckStreamed reads and judges the NDJSON trace named by
// $REPLAYSPEC_BENCH_TRACE as replayspec check does when it judges a trace
// as it is read (judgeAsRead: cutting, decoding, judging aside), each
// iteration from the file: MB/s is the trace's bytes a second. Skipped
// without the variable (docs/benchmarks.md makes such traces with
// scripts/bigspec.sh).
func BenchmarkCheckStreamed(b *testing.B) {
	path := os.Getenv("REPLAYSPEC_BENCH_TRACE")
	if path == "" {
		b.Skip("REPLAYSPEC_BENCH_TRACE names no trace")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		_, got, err := judgeAsRead(bufio.NewReaderSize(f, 1<<20), func(h trace.Header) spec.Spec { return spec.Spec{Name: h.Spec} })
		f.Close()
		if err != nil || got == nil {
			b.Fatalf("%s: not judged as a stream: %v", path, err)
		}
	}
}
