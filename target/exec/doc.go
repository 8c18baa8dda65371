// Package exectarget is the target "exec:CMD": an external port (in any
// language) started as a program that speaks the driver protocol
// (driver/, docs/driver-protocol.md). It reaches the port only through its
// standard streams, so nothing the port does can touch the judge.
//
// It is public for the same reason as target/sim: every implementation the
// suite judges lives under target/.
package exectarget
