//go:build !race

package simtarget_test

const raceEnabled = false
