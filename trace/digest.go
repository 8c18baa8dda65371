package trace

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/zeebo/xxh3"
)

// A DigestAlgorithm names the hash every digest of a trace is made with
// (mem_in, mem_out, digest). The header names it (v3), so that a port and the
// oracles agree on it; a v2 trace's is FNV-1a (docs/trace.md, "Digests").
type DigestAlgorithm string

const (
	// DigestXXH3 is XXH3-64 (seed 0): word-wise, at memory bandwidth. What
	// this package's writers use (trace v3).
	DigestXXH3 DigestAlgorithm = "xxh3-64"
	// DigestFNV1a is FNV-1a 64: one byte per multiply, ~1 GB/s. v2's only
	// digest; a v3 trace may still name it (a port that keeps it).
	DigestFNV1a DigestAlgorithm = "fnv1a-64"
)

// DigestAlgorithms lists the algorithms a trace may name.
var DigestAlgorithms = []DigestAlgorithm{DigestXXH3, DigestFNV1a}

// Known reports whether a is one of DigestAlgorithms.
func (a DigestAlgorithm) Known() bool { return a == DigestXXH3 || a == DigestFNV1a }

// Digest is the digest of a list of buffers that kernel events (mem_in,
// mem_out) and application reads (digest) share: the hash of each buffer's
// length (8 bytes little-endian) then its bytes, in order, all as one
// stream, written as 16 lower-case hex digits. It is the digest of this
// package's writers: XXH3-64.
func Digest(bufs ...[]byte) string { return DigestXXH3.Digest(bufs...) }

// DigestRuns is Digest of the buffers that runs describe (32-bit elements,
// little-endian, as RunsOf writes them), computed from the runs without
// expanding them into memory.
func DigestRuns(bufs ...[]Run) string { return DigestXXH3.DigestRuns(bufs...) }

// Digest is the digest of bufs by algorithm a (see the function Digest). An
// unknown algorithm digests to "": trace.Read refuses a header naming one,
// so no digest of a read trace ever equals it.
func (a DigestAlgorithm) Digest(bufs ...[]byte) string {
	switch a {
	case DigestXXH3:
		var h xxh3.Hasher
		for _, b := range bufs {
			h.Write(le64(uint64(len(b))))
			h.Write(b)
		}
		return hex16(h.Sum64())
	case DigestFNV1a:
		h := uint64(fnvOffset64)
		for _, b := range bufs {
			h = fnv1a(h, le64(uint64(len(b))))
			h = fnv1a(h, b)
		}
		return hex16(h)
	}
	return ""
}

// DigestRuns is a.Digest of the buffers that runs describe, from the runs.
func (a DigestAlgorithm) DigestRuns(bufs ...[]Run) string {
	switch a {
	case DigestXXH3:
		// A run is fed as chunks of its value repeated: the stream hashed
		// is the buffer's bytes, never the whole buffer in memory.
		var h xxh3.Hasher
		var chunk [runChunk]byte
		for _, runs := range bufs {
			h.Write(le64(CountOf(runs) * 4))
			for _, r := range runs {
				// Only as much of the chunk as the run needs: a buffer of
				// short runs must not fill 4 KiB a run.
				fill(chunk[:min(r.Count, runChunk/4)*4], uint32(int32(r.Value)))
				for n := r.Count; n > 0; {
					k := min(n, runChunk/4)
					h.Write(chunk[:k*4])
					n -= k
				}
			}
		}
		return hex16(h.Sum64())
	case DigestFNV1a:
		h := uint64(fnvOffset64)
		for _, runs := range bufs {
			h = fnv1a(h, le64(CountOf(runs)*4))
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
	return ""
}

// runChunk is the bytes of a run fed to XXH3 at a time: a multiple of its
// 1 KiB block, small enough for the stack.
const runChunk = 4096

// fill writes v little-endian into every 4 bytes of b.
func fill(b []byte, v uint32) {
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], v)
	}
}

// FNV-1a 64's constants.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// le64 is n as 8 bytes little-endian (a buffer's length in the stream).
func le64(n uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n)
	return b[:]
}

// fnv1a folds b into h. FNV-1a takes one byte per step and each step waits
// for the previous multiply: about one byte per 4 cycles whatever the loop,
// which is why v3 names XXH3 (docs/benchmarks.md).
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

// checkDigest says what is wrong with the digest algorithm a header of
// version v names, or nil: v2's is FNV-1a (named or not); v3 names one.
func checkDigest(v string, a DigestAlgorithm) error {
	switch {
	case v == v2 && (a == "" || a == DigestFNV1a):
		return nil
	case v == v2:
		return fmt.Errorf("header: a %s trace's digests are %s, but it names %q: write %s with \"digest\":%q, or leave \"digest\" out", v2, DigestFNV1a, a, Version, a)
	case a == "":
		return fmt.Errorf("header: no \"digest\": a %s header names the algorithm of its digests, %q or %q (docs/trace.md, Digests)", Version, DigestXXH3, DigestFNV1a)
	case !a.Known():
		return fmt.Errorf("header: unknown digest algorithm %q: want %q or %q (docs/trace.md, Digests)", a, DigestXXH3, DigestFNV1a)
	}
	return nil
}

// DigestAlgorithm is the algorithm of the trace's digests: the one its
// header names, FNV-1a for a v2 header that names none.
func (h Header) DigestAlgorithm() DigestAlgorithm {
	switch {
	case h.Digest != "":
		return h.Digest
	case h.Trace == v2:
		return DigestFNV1a
	}
	return DigestXXH3 // a header made in memory, before it is written
}
