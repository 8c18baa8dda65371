//go:build race

package simtarget_test

const raceEnabled = true
