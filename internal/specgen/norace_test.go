//go:build !race

package specgen_test

const raceEnabled = false
