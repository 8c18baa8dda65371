//go:build !unix

package main

func noCoreDumps() {}
