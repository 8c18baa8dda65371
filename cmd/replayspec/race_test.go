//go:build race

package main

// raceDetector is true under -race, where the engine runs about ten times
// slower: tests that spend the default pass budget of 10000 skip.
const raceDetector = true
