package cuda

import (
	"fmt"

	"github.com/replayspec/replayspec/internal/hsa"
)

// A CUDA device exposes no AMD-style counter blocks, and reading NVIDIA's
// (CUPTI) is out of scope. The agent advertises two blocks whose counters are
// deterministic functions of the kernel and the grid, the same functions the
// simulator uses, so that counter-collection specs run unchanged and their
// values can be checked exactly. docs/cuda.md lists the definitions.

// waveSize is the work items per wave in the counter model (an AMD
// wavefront), not the CUDA warp size: the values match the simulator's.
const waveSize = 64

var counterBlocks = []hsa.CounterBlock{
	{Name: "SQ", Registers: 2, Counters: []string{"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU"}},
	{Name: "GRBM", Registers: 1, Counters: []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE"}},
}

// counterValue is a counter's value for one dispatch of kernel over grid
// work items.
func counterValue(kernel string, grid uint64, counter string) (uint64, error) {
	k, ok := findKernel(kernel)
	if !ok {
		return 0, fmt.Errorf("%w: %q", hsa.ErrUnknownKernel, kernel)
	}
	waves := (grid + waveSize - 1) / waveSize
	switch counter {
	case "SQ_WAVES":
		return waves, nil
	case "SQ_INSTS_VALU":
		return grid * k.valu, nil
	case "SQ_INSTS_SALU":
		return waves * uint64(len(k.params)+1), nil // one scalar load per argument, n included
	case "GRBM_COUNT":
		return grid, nil
	case "GRBM_GUI_ACTIVE":
		return waves, nil
	}
	return 0, fmt.Errorf("cuda: unknown counter %q", counter)
}

// countersFor fills a profile's requested values.
func countersFor(kernel string, grid uint64, names []string) (map[string]uint64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	vals := make(map[string]uint64, len(names))
	for _, n := range names {
		v, err := counterValue(kernel, grid, n)
		if err != nil {
			return nil, err
		}
		vals[n] = v
	}
	return vals, nil
}
