//go:build unix

package main

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

// BenchmarkHTMLLibrary is the HTML page of the whole library beyond the
// run itself: each spec's record and timelines (HTMLPage.Add, as run
// --html calls it when the spec finishes) and the page written at the end.
// docs/benchmarks.md has the figures.
func BenchmarkHTMLLibrary(b *testing.B) {
	specs, err := loadSpecs(context.Background(), []string{library}, spec.MaxBytes)
	if err != nil {
		b.Fatal(err)
	}
	tg, err := openTarget("sim", nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	results := runner.RunAll(context.Background(), specs, runner.Options{Target: tg}, nil)
	outcomes := report.Outcomes(results)
	events := 0
	for _, r := range results {
		events += len(r.Trace.Events)
	}
	size := 0
	cpu0 := cpuTime()
	for b.Loop() {
		page := htmlPage(tg, "replayspec run --html report.html specs/", "", runner.Baseline{})
		for _, o := range outcomes {
			page.Add(report.Record(o, report.Options{}), &o.Result.Trace)
		}
		w := &countWriter{}
		if err := page.Write(w, report.End{}); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(specs)), "specs")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(size)/(1<<20), "page-MiB")
}

// cpuTime is the process's CPU time so far (user and system, every
// thread: the collector's too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
