// Package simtarget is the target "sim": the reference engine (replay/) on
// the deterministic simulator (sim/), with a spec's tool and application
// played by the harness. It is the default implementation the suite judges
// and the one whose traces golden/ pins byte for byte.
//
// It is public, under target/ beside the interface it implements, so that a
// reader finds every implementation the suite can judge in one folder, and
// so that a Go port author can run the library against the reference in
// their own tests.
package simtarget
