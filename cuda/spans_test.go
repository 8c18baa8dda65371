package cuda

import (
	"reflect"
	"testing"
)

func TestDirtySpansCoalescesAndClips(t *testing.T) {
	const b = 100
	got := dirtySpans([]byte{1, 1, 0, 1, 0, 0, 1, 1}, b, 750)
	want := []span{{0, 200}, {300, 100}, {600, 150}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if n := spanBytes(got); n != 450 {
		t.Errorf("bytes = %d", n)
	}
	if got := dirtySpans([]byte{0, 0}, b, 200); got != nil {
		t.Errorf("clean region gave %v", got)
	}
}

func TestBlocksFor(t *testing.T) {
	for size, want := range map[uint64]uint64{1: 1, compareBlockBytes: 1, compareBlockBytes + 1: 2, 1 << 30: 262144} {
		if got := blocksFor(size); got != want {
			t.Errorf("blocksFor(%d) = %d, want %d", size, got, want)
		}
	}
}

func TestChunkEntriesSplitLongSpans(t *testing.T) {
	g := &savedRegion{alloc: allocation{}, dev: 0x9000_0000, learned: []span{{0, 4096}, {1 << 20, copyChunkBytes + 100}}}
	g.alloc.Handle = 0x1000_0000
	got := chunkEntries([]*savedRegion{g})
	want := []uint64{
		0x1000_0000, 0x9000_0000, 4096,
		0x1000_0000 + 1<<20, 0x9000_0000 + 1<<20, copyChunkBytes,
		0x1000_0000 + 1<<20 + copyChunkBytes, 0x9000_0000 + 1<<20 + copyChunkBytes, 100,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#x\nwant %#x", got, want)
	}
}

func TestDirtySpansSkipsCleanWords(t *testing.T) {
	f := make([]byte, 21)
	f[9], f[17], f[18], f[20] = 1, 1, 1, 1
	got := dirtySpans(f, 10, 205)
	want := []span{{90, 10}, {170, 20}, {200, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
