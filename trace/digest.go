package trace

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Digest is the digest of a list of buffers that kernel events (mem_in,
// mem_out) and application reads (digest) share: FNV-1a 64 over each
// buffer's length (8 bytes little-endian) and bytes, in order.
func Digest(bufs ...[]byte) string {
	h := fnv.New64a()
	var n [8]byte
	for _, b := range bufs {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
