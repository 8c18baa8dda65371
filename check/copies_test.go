package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCopiedBuffersFind holds find (names compared in turn in a small copy,
// a binary search in a large one) to a binary search over the sorted
// names, for every name present and for names between and around them, and
// addFirst to keeping the copy sorted with each name once.
func TestCopiedBuffersFind(t *testing.T) {
	for n := 0; n <= 12; n++ {
		var c copiedBuffers
		for k := n - 1; k >= 0; k-- { // added out of order, twice
			c.addFirst(fmt.Sprintf("b%02d", 2*k+1), k, "")
			c.addFirst(fmt.Sprintf("b%02d", 2*k+1), -1, "")
		}
		if len(c) != n || !slices.IsSortedFunc(c, func(a, b copiedBuffer) int { return strings.Compare(a.name, b.name) }) {
			t.Fatalf("%d buffers added: %v", n, c)
		}
		for k := 0; k <= 2*n+1; k++ {
			name := fmt.Sprintf("b%02d", k)
			want, wantOK := slices.BinarySearchFunc(c, name, func(b copiedBuffer, name string) int { return strings.Compare(b.name, name) })
			if got, ok := c.find(name); got != want || ok != wantOK {
				t.Errorf("%d buffers: find(%s) = %d, %v; want %d, %v", n, name, got, ok, want, wantOK)
			}
			if ok := k%2 == 1 && k < 2*n; wantOK != ok {
				t.Fatalf("%d buffers: %s there: %v", n, name, wantOK)
			}
		}
	}
}
