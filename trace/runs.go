package trace

import (
	"encoding/binary"
	"fmt"
)

// RunsOf encodes a buffer of little-endian 32-bit elements as runs of equal
// values (docs/trace.md, "Buffers, whole"). A trailing partial element is
// ignored: buffers are whole elements.
func RunsOf(data []byte) []Run {
	var runs []Run
	for i := 0; i+4 <= len(data); i += 4 {
		v := int64(int32(binary.LittleEndian.Uint32(data[i:])))
		if k := len(runs) - 1; k >= 0 && runs[k].Value == v {
			runs[k].Count++
			continue
		}
		runs = append(runs, Run{Value: v, Count: 1})
	}
	return runs
}

// Elements calls f for each element of runs in order, with its index,
// until f returns false. It walks runs without expanding them, so a whole
// buffer of any size is judged in time linear in its runs.
func Elements(runs []Run, f func(i uint64, v int64) bool) {
	var i uint64
	for _, r := range runs {
		for k := uint64(0); k < r.Count; k++ {
			if !f(i, r.Value) {
				return
			}
			i++
		}
	}
}

// CountOf is the number of elements runs describe.
func CountOf(runs []Run) uint64 {
	var n uint64
	for _, r := range runs {
		n += r.Count
	}
	return n
}

// BytesOf expands runs back into the buffer's bytes. It refuses more than
// limit elements, so that a hostile trace cannot make a reader allocate
// without bound.
func BytesOf(runs []Run, limit uint64) ([]byte, error) {
	n := CountOf(runs)
	if n > limit {
		return nil, fmt.Errorf("buffer of %d elements exceeds the limit of %d", n, limit)
	}
	out := make([]byte, 0, n*4)
	var w [4]byte
	for _, r := range runs {
		binary.LittleEndian.PutUint32(w[:], uint32(int32(r.Value)))
		for k := uint64(0); k < r.Count; k++ {
			out = append(out, w[:]...)
		}
	}
	return out, nil
}
