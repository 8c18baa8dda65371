package check

// byPass files one value per pass of a loop: the passes the index shows
// (0 up to one past the last, less those a part of a loop leaves out) in a
// slice, any other pass a broken trace names in a map. Oracles looked
// passes up in maps keyed by the pass, several a pass of every loop: a
// map's hashing and growth cost more than the rest of their judging. The
// zero value of T is "none".
type byPass[T any] struct {
	dense []T
	// lo, hi: the passes [lo, hi) the part leaves out (none when hi <= lo);
	// those at or past hi are kept hi-lo places down.
	lo, hi uint64
	other  map[uint64]T
}

// newByPass makes d's: slots for each pass the index shows and one more
// (what comes after the last pass, a restore that ends the loop).
func newByPass[T any](x *index, d *dispatchView) byPass[T] {
	return newByPassIn(x, d, make([]T, len(d.passEnter)+1))
}

// newByPassIn is newByPass keeping the passes in dense, emptied, of
// len(d.passEnter)+1.
func newByPassIn[T any](x *index, d *dispatchView, dense []T) byPass[T] {
	clear(dense)
	b := byPass[T]{dense: dense}
	if n, from := x.elided(d); n > 0 {
		b.lo, b.hi = from, from+uint64(n)
	}
	return b
}

// positionsByPass is newByPass of lists of positions, its slots taken from
// the index's kept array of them (x.lists): a loop's records, kernels
// and restores are filed by pass, each a slot a pass.
func (x *index) positionsByPass(d *dispatchView) byPass[[]int] {
	n := len(d.passEnter) + 1
	return newByPassIn(x, d, x.lists.take(n)[:n])
}

// slot is where p is kept in dense, -1 when in other.
func (b *byPass[T]) slot(p uint64) int {
	if b.hi > b.lo && p >= b.lo {
		if p < b.hi {
			return -1
		}
		p -= b.hi - b.lo
	}
	if p < uint64(len(b.dense)) {
		return int(p)
	}
	return -1
}

// get is p's value, the zero value when none.
func (b *byPass[T]) get(p uint64) T {
	if k := b.slot(p); k >= 0 {
		return b.dense[k]
	}
	return b.other[p] // a nil map reads as empty
}

// set stores v as p's value.
func (b *byPass[T]) set(p uint64, v T) {
	if k := b.slot(p); k >= 0 {
		b.dense[k] = v
		return
	}
	if b.other == nil {
		b.other = map[uint64]T{}
	}
	b.other[p] = v
}

// each calls f for every pass with a value (a non-zero one for dense
// passes; whatever other holds), dense passes first in order, then the
// others in no fixed order.
func (b *byPass[T]) each(isZero func(T) bool, f func(p uint64, v T)) {
	for k, v := range b.dense {
		if isZero(v) {
			continue
		}
		p := uint64(k)
		if b.hi > b.lo && p >= b.lo {
			p += b.hi - b.lo
		}
		f(p, v)
	}
	for p, v := range b.other {
		f(p, v)
	}
}
