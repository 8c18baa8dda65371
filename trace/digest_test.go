package trace

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// referenceFNV is the FNV-1a digest as docs/trace.md defines it, through
// hash/fnv: FNV-1a 64 over each buffer's length (8 bytes little-endian)
// and bytes.
func referenceFNV(bufs ...[]byte) string {
	h := fnv.New64a()
	for _, b := range bufs {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// referenceXXH3 is the XXH3 digest as docs/trace.md defines it: the one-shot
// XXH3-64 of the stream of lengths and bytes, laid out whole in memory.
func referenceXXH3(bufs ...[]byte) string {
	var stream []byte
	for _, b := range bufs {
		stream = binary.LittleEndian.AppendUint64(stream, uint64(len(b)))
		stream = append(stream, b...)
	}
	return fmt.Sprintf("%016x", xxh3.Hash(stream))
}

// digestCases are lists of buffers: edge cases, then random ones, some
// longer than XXH3's 1 KiB block and its 240-byte short-input path.
func digestCases() [][][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][][]byte{nil, {nil}, {{}}, {{0}}, {{1, 2, 3}, {}}, {make([]byte, 4096)}, {make([]byte, 1025), make([]byte, 7)}}
	for range 200 {
		var bufs [][]byte
		for range r.IntN(3) + 1 {
			b := make([]byte, r.IntN(3000))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			bufs = append(bufs, b)
		}
		cases = append(cases, bufs)
	}
	return cases
}

func TestDigestIsXXH3OverLengthAndBytes(t *testing.T) {
	for i, bufs := range digestCases() {
		if got, want := Digest(bufs...), referenceXXH3(bufs...); got != want {
			t.Errorf("case %d: Digest = %s, XXH3-64 over lengths and bytes = %s", i, got, want)
		}
		if got, want := DigestFNV1a.Digest(bufs...), referenceFNV(bufs...); got != want {
			t.Errorf("case %d: DigestFNV1a.Digest = %s, FNV-1a 64 over lengths and bytes = %s", i, got, want)
		}
	}
	// The two are different hashes: a reader that judged a v2 trace by
	// XXH3 would find every digest wrong.
	if DigestXXH3.Digest([]byte{1}) == DigestFNV1a.Digest([]byte{1}) {
		t.Error("XXH3 and FNV-1a agree on a buffer")
	}
	// A value with leading zero digits keeps all sixteen.
	if got := hex16(0xab); got != "00000000000000ab" {
		t.Errorf("hex16(0xab) = %q", got)
	}
	// Known values, so that a change of either algorithm (or of the
	// stream's layout) is noticed here and not by every golden.
	for _, c := range []struct {
		alg  DigestAlgorithm
		want string
	}{{DigestXXH3, "74e58f02cc35ad03"}, {DigestFNV1a, "210b5f019b24556e"}} {
		if got := c.alg.Digest([]byte{1, 0, 0, 0, 2, 0, 0, 0}); got != c.want {
			t.Errorf("%s of one two-element buffer = %s, want %s", c.alg, got, c.want)
		}
	}
	if got := DigestAlgorithm("md5").Digest([]byte{1}); got != "" {
		t.Errorf("an unknown algorithm digests to %q, want \"\"", got)
	}
}

// DigestRuns of the runs of some buffers is Digest of their bytes, by
// either algorithm, for runs shorter and longer than a chunk.
func TestDigestRunsIsDigestOfTheBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		var bufs [][]byte
		var runs [][]Run
		for range r.IntN(3) + 1 {
			// Runs of every length: most short, some longer than a chunk
			// (1,024 elements), so that DigestRuns feeds a run in pieces.
			var b []byte
			for n := r.IntN(4); n >= 0; n-- {
				k := 1 + r.IntN(8)
				if r.IntN(4) == 0 {
					k = 1000 + r.IntN(1500)
				}
				v := uint32(r.IntN(3) - 1) // negative values too
				if r.IntN(10) == 0 {
					v = r.Uint32()
				}
				for range k {
					b = binary.LittleEndian.AppendUint32(b, v)
				}
			}
			bufs, runs = append(bufs, b), append(runs, RunsOf(b))
		}
		for _, alg := range DigestAlgorithms {
			if got, want := alg.DigestRuns(runs...), alg.Digest(bufs...); got != want {
				t.Fatalf("%s: DigestRuns = %s, Digest of the bytes = %s", alg, got, want)
			}
		}
		if got, want := DigestRuns(runs...), Digest(bufs...); got != want {
			t.Fatalf("DigestRuns = %s, Digest of the bytes = %s", got, want)
		}
	}
}

// A header names its digest: v3 must, v2 may name only FNV-1a, and what a
// trace's digests are judged by follows.
func TestHeaderDigest(t *testing.T) {
	for _, c := range []struct {
		head string
		alg  DigestAlgorithm
		err  string
	}{
		{`{"trace":"` + Version + `","digest":"xxh3-64","sources":[]}`, DigestXXH3, ""},
		{`{"trace":"` + Version + `","digest":"fnv1a-64","sources":[]}`, DigestFNV1a, ""},
		{`{"trace":"` + v2 + `","sources":[]}`, DigestFNV1a, ""},
		{`{"trace":"` + v2 + `","digest":"fnv1a-64","sources":[]}`, DigestFNV1a, ""},
		{`{"trace":"` + Version + `","sources":[]}`, "", `no "digest"`},
		{`{"trace":"` + Version + `","digest":"md5","sources":[]}`, "", `unknown digest algorithm "md5"`},
		{`{"trace":"` + v2 + `","digest":"xxh3-64","sources":[]}`, "", "digests are fnv1a-64"},
	} {
		tr, err := Read(strings.NewReader(c.head + "\n"))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.head, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.head, err, c.err)
		case c.err == "" && tr.Header.DigestAlgorithm() != c.alg:
			t.Errorf("%s: algorithm %s, want %s", c.head, tr.Header.DigestAlgorithm(), c.alg)
		}
	}
	// What this package writes names XXH3, and reads back.
	var b strings.Builder
	if err := Write(&b, Trace{Header: Header{Sources: []Source{}}}); err != nil || !strings.Contains(b.String(), `"digest":"xxh3-64"`) {
		t.Fatalf("Write: %v, %q", err, b.String())
	}
}

// BenchmarkDigest: the digest of one 1 MiB buffer by each algorithm, a
// plain copy of the same bytes (the memory's pace) and hash/fnv beside them,
// as sub-benchmarks of one run so that they share the machine's load
// (-count N interleaves them N times). MB/s counts the bytes hashed.
//
//	go test ./trace -run '^$' -bench '^BenchmarkDigest$' -benchmem -count 5
func BenchmarkDigest(b *testing.B) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	dst := make([]byte, len(buf))
	for _, c := range []struct {
		name string
		f    func()
	}{
		{string(DigestXXH3), func() { DigestXXH3.Digest(buf) }},
		{string(DigestFNV1a), func() { DigestFNV1a.Digest(buf) }},
		{"hash-fnv", func() { referenceFNV(buf) }},
		{"copy", func() { copy(dst, buf) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				c.f()
			}
		})
	}
}

// BenchmarkDigestRuns: the digest of a 1 MiB buffer of 16 runs from its
// runs, by each algorithm (MB/s counts the buffer's bytes).
func BenchmarkDigestRuns(b *testing.B) {
	runs := make([]Run, 16)
	for i := range runs {
		runs[i] = Run{Value: int64(i), Count: 1 << 14}
	}
	for _, alg := range DigestAlgorithms {
		b.Run(string(alg), func(b *testing.B) {
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				alg.DigestRuns(runs)
			}
		})
	}
}
