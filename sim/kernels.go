package sim

import (
	"encoding/binary"
	"sort"
)

// KernelInfo describes a kernel of the library: its arguments are Buffers
// buffers, then one int32 scalar when Scalar is set. A spec validator can
// check a dispatch's arguments against it.
type KernelInfo struct {
	Name    string
	Buffers int
	Scalar  bool
	Effect  string // what one work item i does, for people
}

// kernelDef is a kernel with its effect and its cost model.
type kernelDef struct {
	KernelInfo
	nsPerWave   uint64 // virtual duration per wave
	valuPerItem uint64 // vector instructions per work item
	// run applies the kernel to items elements; grid is the launch size
	// (atomic_counter counts every work item, in range or not).
	run func(bufs [maxBuffers][]byte, scalar int32, items, grid uint64)
	// writes is how many leading buffers the kernel writes (0 means 1):
	// the pages it dirties, which a restore must bring back.
	writes int
}

// maxBuffers is the most buffer arguments a library kernel takes; a fixed
// array, passed by value, keeps dispatch free of allocations.
const maxBuffers = 2

var library = map[string]*kernelDef{
	"increment": {KernelInfo: KernelInfo{Name: "increment", Buffers: 1, Effect: "x[i] += 1"},
		nsPerWave: 40, valuPerItem: 3,
		run: func(b [maxBuffers][]byte, _ int32, items, _ uint64) {
			x := b[0][:4*items]
			// Two elements a step, one in each half of a 64-bit word:
			// each half adds and wraps on its own (the low half's
			// carry never reaches the high one). Half the steps of one
			// element at a time, in the loop every replayed pass runs.
			j := 0
			for ; j+8 <= len(x); j += 8 {
				w := x[j : j+8 : j+8]
				v := le.Uint64(w)
				le.PutUint64(w, (v>>32+1)<<32|uint64(uint32(v)+1))
			}
			if j+4 <= len(x) { // an odd element count: the last alone
				w := x[j : j+4 : j+4]
				le.PutUint32(w, le.Uint32(w)+1)
			}
		}},
	"accumulate": {KernelInfo: KernelInfo{Name: "accumulate", Buffers: 2, Effect: "y[i] += x[i]"},
		nsPerWave: 60, valuPerItem: 4,
		run: func(b [maxBuffers][]byte, _ int32, items, _ uint64) {
			y, x := b[0][:4*items], b[1][:4*items]
			for j := 0; j+4 <= len(y) && j+4 <= len(x); j += 4 {
				w := y[j : j+4 : j+4]
				le.PutUint32(w, le.Uint32(w)+le.Uint32(x[j:j+4:j+4]))
			}
		}},
	"atomic_counter": {KernelInfo: KernelInfo{Name: "atomic_counter", Buffers: 1, Effect: "atomic c[0] += 1"},
		nsPerWave: 80, valuPerItem: 2,
		run: func(b [maxBuffers][]byte, _ int32, _, grid uint64) {
			set(b[0], 0, get(b[0], 0)+int32(uint32(grid))) // one atomic add per work item, wrapping
		}},
	"fill": {KernelInfo: KernelInfo{Name: "fill", Buffers: 1, Scalar: true, Effect: "x[i] = scalar"},
		nsPerWave: 30, valuPerItem: 2,
		run: func(b [maxBuffers][]byte, s int32, items, _ uint64) {
			x := b[0][:4*items]
			for j := 0; j+4 <= len(x); j += 4 {
				le.PutUint32(x[j:j+4:j+4], uint32(s))
			}
		}},
	"saxpy": {KernelInfo: KernelInfo{Name: "saxpy", Buffers: 2, Scalar: true, Effect: "y[i] = a*x[i] + y[i]"},
		nsPerWave: 70, valuPerItem: 5,
		run: func(b [maxBuffers][]byte, a int32, items, _ uint64) {
			y, x := b[0][:4*items], b[1][:4*items]
			for j := 0; j+4 <= len(y) && j+4 <= len(x); j += 4 {
				w := y[j : j+4 : j+4]
				le.PutUint32(w, uint32(a)*le.Uint32(x[j:j+4:j+4])+le.Uint32(w)) // int32 arithmetic wraps as uint32 does
			}
		}},
	// The one kernel that writes several buffers: a restore must bring
	// back each of them (MEM-2), and the application reads each back.
	"increment_pair": {KernelInfo: KernelInfo{Name: "increment_pair", Buffers: 2, Effect: "x[i] += 1; y[i] += 1"},
		nsPerWave: 50, valuPerItem: 4, writes: 2,
		run: func(b [maxBuffers][]byte, _ int32, items, _ uint64) {
			x, y := b[0][:4*items], b[1][:4*items]
			for j := 0; j+4 <= len(x) && j+4 <= len(y); j += 4 {
				w, v := x[j:j+4:j+4], y[j:j+4:j+4]
				le.PutUint32(w, le.Uint32(w)+1) // in this order: x and y may be one buffer
				le.PutUint32(v, le.Uint32(v)+1)
			}
		}},
}

// Kernels lists the kernel library, sorted by name.
func Kernels() []KernelInfo {
	out := make([]KernelInfo, 0, len(library))
	for _, k := range library {
		out = append(out, k.KernelInfo)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HasKernel implements hsa.Runtime.
func (r *Runtime) HasKernel(name string) bool {
	_, ok := library[name]
	return ok
}

// The kernels walk their buffers four bytes at a time, little-endian, in
// place: a loop the compiler checks once, not per element.
var le = binary.LittleEndian

func get(b []byte, i uint64) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }

func set(b []byte, i uint64, v int32) { binary.LittleEndian.PutUint32(b[4*i:], uint32(v)) }
