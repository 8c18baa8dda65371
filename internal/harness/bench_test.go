package harness

import (
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// BenchmarkHarnessPass is target/sim's BenchmarkPipelinePass without the
// oracles: one fixed loop of 1000 passes over a 64-element buffer, the
// tool copying memory at each PASS ENTER and EXIT, the events recorded and
// handed to a sink that drops them. What it measures is the harness, the
// engine and the simulator a pass (and the recorder's Emit), the part of
// the pipeline that is not judging.
func BenchmarkHarnessPass(b *testing.B) {
	const passes = 1000
	s := timedLoop("pass", 64)
	s.Tool.Plan.Passes = "1000"
	s.Application.Buffers[0].Fill = 1
	s = spec.Defaults(s)
	b.ReportAllocs()
	cpu := cpuTime()
	events := 0
	for b.Loop() {
		runKeeping(b, s, func(*trace.Event) { events++ })
	}
	if events < 13*passes*b.N {
		b.Fatalf("%d events in %d runs: want 13 a pass at least", events, b.N)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*passes), "cpu-ns/pass")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*passes), "ns/pass")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
