package trace

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// reference is the digest as docs/trace.md defines it, through hash/fnv.
func reference(bufs ...[]byte) string {
	h := fnv.New64a()
	var n [8]byte
	for _, b := range bufs {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func TestDigestIsFNV1aOverLengthAndBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][][]byte{nil, {nil}, {{}}, {{0}}, {{1, 2, 3}, {}}, {make([]byte, 4096)}}
	for range 200 {
		var bufs [][]byte
		for range r.IntN(3) + 1 {
			b := make([]byte, r.IntN(300))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			bufs = append(bufs, b)
		}
		cases = append(cases, bufs)
	}
	for i, bufs := range cases {
		if got, want := Digest(bufs...), reference(bufs...); got != want {
			t.Errorf("case %d: Digest = %s, FNV-1a 64 over lengths and bytes = %s", i, got, want)
		}
	}
	// A value with leading zero digits keeps all sixteen.
	if got := hex16(0xab); got != "00000000000000ab" {
		t.Errorf("hex16(0xab) = %q", got)
	}
}

// DigestRuns of the runs of some buffers is Digest of their bytes.
func TestDigestRunsIsDigestOfTheBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		var bufs [][]byte
		var runs [][]Run
		for range r.IntN(3) + 1 {
			b := make([]byte, 4*r.IntN(50))
			for i := 0; i < len(b); i += 4 {
				binary.LittleEndian.PutUint32(b[i:], uint32(r.IntN(3)-1)) // long runs, negative values
			}
			bufs, runs = append(bufs, b), append(runs, RunsOf(b))
		}
		if got, want := DigestRuns(runs...), Digest(bufs...); got != want {
			t.Fatalf("DigestRuns = %s, Digest of the bytes = %s", got, want)
		}
	}
}

// BenchmarkDigest1MiB: the digest of one 1 MiB buffer (MB/s counts the
// bytes hashed).
func BenchmarkDigest1MiB(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		Digest(buf)
	}
}

// BenchmarkDigestReference1MiB: the same through hash/fnv, side by side.
func BenchmarkDigestReference1MiB(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		reference(buf)
	}
}

// BenchmarkCopy1MiB: one plain copy of the same bytes, the memory's pace
// (MB/s counts the bytes read).
func BenchmarkCopy1MiB(b *testing.B) {
	src, dst := make([]byte, 1<<20), make([]byte, 1<<20)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(dst, src)
	}
}
