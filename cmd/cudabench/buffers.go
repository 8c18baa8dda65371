package main

import (
	"encoding/binary"

	"github.com/replayspec/replayspec/hsa"
)

func (b *bench) alloc(bytes uint64) (hsa.Allocation, error) {
	return b.rt.Allocate(b.q.Agent(), hsa.DeviceCoarse, bytes)
}

// upload allocates device memory holding v.
func (b *bench) upload(v []int32) (hsa.Allocation, error) {
	a, err := b.alloc(uint64(4 * len(v)))
	if err != nil {
		return a, err
	}
	buf := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], uint32(x))
	}
	return a, b.rt.Write(a, 0, buf)
}

// download reads n int32 elements from offset (in elements).
func (b *bench) download(a hsa.Allocation, offset, n uint64) ([]int32, error) {
	buf := make([]byte, 4*n)
	if err := b.rt.Read(a, 4*offset, buf); err != nil {
		return nil, err
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return out, nil
}

// launch runs kernel over grid work items and waits for it.
func (b *bench) launch(kernel string, grid uint32, args ...hsa.Arg) error {
	return b.q.Submit(1, hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: kernel,
		Grid: hsa.Dim3{X: grid}, Workgroup: hsa.Dim3{X: 256}, Args: args})
}

func arg(a hsa.Allocation) hsa.Arg { return hsa.Arg{Buffer: &a} }
