package check

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// byPass keeps what a map keyed by the pass keeps, whatever passes a
// trace names: those of the loop, one past its last, those a part of a
// loop leaves out, and passes far past any loop's.
func TestByPassAsAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 23))
	for round := range 200 {
		d := &dispatchView{id: 1, passEnter: make([]int, r.IntN(6))}
		x := &index{}
		if round%2 == 1 {
			lo := uint64(r.IntN(4))
			x.cut = elision{dispatch: 1, lo: lo, hi: lo + 1 + uint64(r.IntN(300))}
		}
		b := newByPass[int](x, d)
		want := map[uint64]int{}
		for k := range 40 {
			var p uint64
			switch r.IntN(4) {
			case 0:
				p = uint64(r.IntN(8))
			case 1:
				p = x.cut.lo + uint64(r.IntN(8)) // about the part's cut
			case 2:
				p = x.cut.hi + uint64(r.IntN(8))
			default:
				p = r.Uint64()
			}
			if got := b.get(p); got != want[p] {
				t.Fatalf("round %d: pass %d reads %d, the map %d", round, p, got, want[p])
			}
			b.set(p, k+1)
			want[p] = k + 1
		}
		got := map[uint64]int{}
		b.each(func(v int) bool { return v == 0 }, func(p uint64, v int) {
			if _, dup := got[p]; dup {
				t.Fatalf("round %d: pass %d visited twice", round, p)
			}
			got[p] = v
		})
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: each visits %v, the map holds %v", round, got, want)
		}
	}
}

// The passes of a loop's part land in the slice, not the map: a part of a
// long loop is judged fast only so.
func TestByPassKeepsALoopsPassesInPlace(t *testing.T) {
	d := &dispatchView{id: 7, passEnter: make([]int, 5)}
	x := &index{cut: elision{dispatch: 7, lo: 2, hi: 1000}}
	b := newByPass[int](x, d)
	for _, p := range []uint64{0, 1, 1000, 1001, 1002, 1003} {
		b.set(p, 1)
	}
	if b.other != nil {
		t.Errorf("passes of the part went to the map: %v", b.other)
	}
}
