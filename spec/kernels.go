package spec

// Kernel describes one kernel the simulated application can launch: how
// many buffer arguments it takes and whether it takes a scalar.
type Kernel struct {
	Name    string
	Buffers int
	Scalar  bool
}

// Kernels is the format's list of kernels, in documentation order.
var Kernels = []Kernel{
	{Name: "increment", Buffers: 1},
	{Name: "accumulate", Buffers: 2},
	{Name: "atomic_counter", Buffers: 1},
	{Name: "fill", Buffers: 1, Scalar: true},
	{Name: "saxpy", Buffers: 2, Scalar: true},
	{Name: "increment_pair", Buffers: 2},
}

// LookupKernel finds a kernel by name.
func LookupKernel(name string) (Kernel, bool) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return Kernel{}, false
}

func kernelNames() []string {
	names := make([]string, len(Kernels))
	for i, k := range Kernels {
		names[i] = k.Name
	}
	return names
}
