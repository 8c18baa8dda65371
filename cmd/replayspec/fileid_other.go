//go:build !unix

package main

import "os"

// fileID: no identity here; checkPaths compares with os.SameFile.
func fileID(fi os.FileInfo) (any, bool) { return nil, false }
