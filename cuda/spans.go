package cuda

import "encoding/binary"

// span is a byte range [off, off+n) of a region.
type span struct{ off, n uint64 }

// dirtySpans turns per-block dirty flags into the byte ranges to copy back:
// runs of adjacent dirty blocks become one span (one copy instead of many),
// and the last block is clipped to the region's size.
func dirtySpans(flags []byte, blockBytes, size uint64) []span {
	var out []span
	for i := 0; i < len(flags); {
		if i%8 == 0 && i+8 <= len(flags) && binary.LittleEndian.Uint64(flags[i:]) == 0 {
			i += 8 // eight clean pages at once: most of a large region
			continue
		}
		if flags[i] == 0 {
			i++
			continue
		}
		j := i
		for j < len(flags) && flags[j] != 0 {
			j++
		}
		off := uint64(i) * blockBytes
		end := min(uint64(j)*blockBytes, size)
		if off < end {
			out = append(out, span{off, end - off})
		}
		i = j
	}
	return out
}

func spanBytes(spans []span) uint64 {
	var n uint64
	for _, s := range spans {
		n += s.n
	}
	return n
}

// blocksFor is the number of restore blocks covering size bytes.
func blocksFor(size uint64) uint64 { return (size + compareBlockBytes - 1) / compareBlockBytes }
