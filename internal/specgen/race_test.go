//go:build race

package specgen_test

const raceEnabled = true
