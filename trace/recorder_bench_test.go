package trace

import (
	"syscall"
	"testing"
)

// BenchmarkRecorderPass: what recording a loop's events and handing them
// over costs a pass, without the engine or the oracles (the events are
// those of target/sim's BenchmarkPipelinePass, about 13 a pass).
func BenchmarkRecorderPass(b *testing.B) {
	const passes = 1000
	info := &DispatchInfo{Size: 64}
	corr := &Corr{Internal: 1}
	payload := []string{MemberSize, MemberDispatchInfo}
	loop := []Event{
		{Type: Callback, Op: OpPass, Phase: PhaseEnter, Kernel: "increment", Label: "d0", Info: info, Corr: corr, Payload: payload, UserData: U64(0), PayloadSize: U64(72)},
		{Type: ToolMemory, Op: OpPass, Phase: PhaseEnter, Buffer: "x", Digest: "0123456789abcdef", Elements: 64},
		{Type: Returned, Op: OpPass, Phase: PhaseEnter, Label: "d0", Payload: payload, UserData: U64(0)},
		{Type: Restore, Bytes: 256},
		{Type: MemRead, Bytes: 256},
		{Type: Kernel, Kernel: "increment", Start: 5, End: 9},
		{Type: Record, Service: KernelTrace, Kernel: "increment", Corr: corr},
		{Type: Callback, Op: OpPass, Phase: PhaseExit, Kernel: "increment", Label: "d0", Info: info, Corr: corr, Payload: payload, UserData: U64(0)},
		{Type: ToolMemory, Op: OpPass, Phase: PhaseExit, Buffer: "x", Digest: "fedcba9876543210", Elements: 64},
		{Type: ToolSignal, Op: OpPass, Phase: PhaseExit, Signal: 3, Value: I64(1)},
		{Type: Returned, Op: OpPass, Phase: PhaseExit, Label: "d0", Payload: payload, UserData: U64(0)},
		{Type: Continue, Result: I64(1), Info: info},
		{Type: MemWrite, Bytes: 256},
	}
	b.ReportAllocs()
	cpu := cpuNow()
	for b.Loop() {
		r := NewRecorder(func() uint64 { return 1 })
		for p := range passes {
			for _, e := range loop {
				e.Pass = U64(uint64(p))
				r.Emit(e)
			}
		}
		if got := r.Take(); len(got) != passes*len(loop) {
			b.Fatalf("took %d events", len(got))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*passes), "ns/pass")
	b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N*passes), "cpu-ns/pass")
}

// cpuNow is the process's CPU time so far in ns (user and system, every
// thread, the collector's included).
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
