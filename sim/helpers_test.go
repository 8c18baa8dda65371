package sim

import (
	"encoding/binary"
	"testing"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// newTestRuntime builds a runtime with one agent per kind given and a
// recorder on its clock.
func newTestRuntime(t testing.TB, cfg Config, kinds ...string) (*Runtime, *trace.Recorder) {
	t.Helper()
	for _, k := range kinds {
		cfg.Agents = append(cfg.Agents, AgentConfig{Kind: k})
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(rt.Clock)
	rt.SetRecorder(rec)
	return rt, rec
}

// int32s encodes values as the kernels see them.
func int32s(values ...int32) []byte {
	b := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// buffer allocates device memory on agent 1 holding values.
func buffer(t testing.TB, rt *Runtime, values ...int32) hsa.Allocation {
	t.Helper()
	a, err := rt.Allocate(1, hsa.DeviceCoarse, uint64(4*len(values)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Write(a, 0, int32s(values...)); err != nil {
		t.Fatal(err)
	}
	return a
}

func readInt32s(t testing.TB, rt *Runtime, a hsa.Allocation) []int32 {
	t.Helper()
	b := make([]byte, a.Size)
	if err := rt.Read(a, 0, b); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func dispatch(kernel string, grid uint32, args ...hsa.Arg) hsa.Packet {
	return hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: kernel,
		Grid: hsa.Dim3{X: grid}, Workgroup: hsa.Dim3{X: 64}, Args: args}
}

func buf(a hsa.Allocation) hsa.Arg { return hsa.Arg{Buffer: &a} }

func scalar(v int32) hsa.Arg { return hsa.Arg{Scalar: v} }

func eventsOf(rec *trace.Recorder, typ trace.Type) []trace.Event {
	var out []trace.Event
	for _, e := range rec.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
