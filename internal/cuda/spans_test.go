package cuda

import (
	"reflect"
	"testing"
)

func TestDirtySpansCoalescesAndClips(t *testing.T) {
	const b = 100
	got := dirtySpans([]uint32{1, 1, 0, 1, 0, 0, 1, 1}, b, 750)
	want := []span{{0, 200}, {300, 100}, {600, 150}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if n := spanBytes(got); n != 450 {
		t.Errorf("bytes = %d", n)
	}
	if got := dirtySpans([]uint32{0, 0}, b, 200); got != nil {
		t.Errorf("clean region gave %v", got)
	}
}

func TestBlocksFor(t *testing.T) {
	for size, want := range map[uint64]uint64{1: 1, compareBlockBytes: 1, compareBlockBytes + 1: 2, 1 << 30: 16384} {
		if got := blocksFor(size); got != want {
			t.Errorf("blocksFor(%d) = %d, want %d", size, got, want)
		}
	}
}
