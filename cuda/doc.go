// Package cuda implements hsa.Runtime over the NVIDIA CUDA driver API.
//
// The driver (libcuda.so.1) is loaded at run time with purego, so the
// package builds with CGO_ENABLED=0 and a machine without a GPU gets a clear
// "no CUDA driver found: ..." error from Open instead of a link failure.
// Every driver call runs on one goroutine locked to one OS thread, where the
// device's primary context is current; callers may use the Runtime from any
// goroutine. docs/cuda.md describes the mapping from the HSA model.
//
// It sits beside sim/ because it is the same runtime interface over real
// hardware, and it is public for the same reason: a port may run on it.
package cuda
