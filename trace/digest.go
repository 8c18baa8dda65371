package trace

import "strconv"

// FNV-1a 64 (the trace contract's digest, docs/trace.md).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Digest is the digest of a list of buffers that kernel events (mem_in,
// mem_out) and application reads (digest) share: FNV-1a 64 over each
// buffer's length (8 bytes little-endian) and bytes, in order.
//
// FNV-1a takes one byte per step and each step waits for the previous
// multiply, so it runs at about one byte per 4 cycles (~1 GB/s) whatever
// the loop; a word-wise hash would need a new trace schema (docs/benchmarks.md).
func Digest(bufs ...[]byte) string {
	h := uint64(fnvOffset64)
	for _, b := range bufs {
		n := uint64(len(b))
		for range 8 {
			h = (h ^ (n & 0xff)) * fnvPrime64
			n >>= 8
		}
		h = fnv1a(h, b)
	}
	return hex16(h)
}

// fnv1a folds b into h.
func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h
}

// hex16 formats h as 16 lower-case hex digits.
func hex16(h uint64) string {
	var buf [16]byte
	s := strconv.AppendUint(buf[:0], h, 16)
	if len(s) == 16 {
		return string(s)
	}
	var out [16]byte
	for i := range out {
		out[i] = '0'
	}
	copy(out[16-len(s):], s)
	return string(out[:])
}

// DigestRuns is Digest of the buffers that runs describe (32-bit elements,
// little-endian, as RunsOf writes them), computed from the runs without
// expanding them into memory.
func DigestRuns(bufs ...[]Run) string {
	h := uint64(fnvOffset64)
	for _, runs := range bufs {
		n := CountOf(runs) * 4
		for range 8 {
			h = (h ^ (n & 0xff)) * fnvPrime64
			n >>= 8
		}
		for _, r := range runs {
			v := uint32(int32(r.Value))
			b0, b1, b2, b3 := uint64(v&0xff), uint64(v>>8&0xff), uint64(v>>16&0xff), uint64(v>>24)
			for range r.Count {
				h = (h ^ b0) * fnvPrime64
				h = (h ^ b1) * fnvPrime64
				h = (h ^ b2) * fnvPrime64
				h = (h ^ b3) * fnvPrime64
			}
		}
	}
	return hex16(h)
}
