//go:build unix

package main

import "syscall"

// noCoreDumps keeps a crash (SIGABRT, see mainProcess) from writing a core
// file of a process that may hold gigabytes.
func noCoreDumps() { _ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}) }
