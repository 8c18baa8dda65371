package trace

import "testing"

// Small optional numbers share a pointer and cost no allocation; others
// are their own.
func TestSmallNumbersShare(t *testing.T) {
	if U64(3) != U64(3) || *U64(3) != 3 || I64(-1) != I64(-1) || *I64(-1) != -1 || *I64(1021) != 1021 {
		t.Errorf("small values: %d %d", *U64(3), *I64(-1))
	}
	if U64(1<<40) == U64(1<<40) || *U64(1 << 40) != 1<<40 || *I64(-2) != -2 || *I64(5000) != 5000 {
		t.Errorf("large values")
	}
	if n := testing.AllocsPerRun(100, func() { U64(7); I64(7) }); n != 0 {
		t.Errorf("U64/I64 of small values allocate %v times", n)
	}
}
