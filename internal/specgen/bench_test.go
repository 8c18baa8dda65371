package specgen_test

import (
	"testing"

	"github.com/replayspec/replayspec/internal/specgen"
)

// BenchmarkCheckGeneratedSpec draws one spec and checks every property on
// it (validate, read back, two runs on the simulator, every oracle): the
// generator's throughput, reported as specs a minute (docs/benchmarks.md).
func BenchmarkCheckGeneratedSpec(b *testing.B) {
	gen := specgen.Spec(specgen.Config{})
	seed := 0
	for b.Loop() {
		s := gen.Example(seed)
		seed++
		if err := Holds(s); err != nil {
			b.Fatalf("seed %d: %v", seed-1, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "specs/min")
}
