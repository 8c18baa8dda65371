//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileID is a file's identity (device and inode): two paths with the same
// one are the same file.
func fileID(fi os.FileInfo) (any, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true
}
