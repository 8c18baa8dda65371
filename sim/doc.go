// Package sim is a deterministic simulated HSA runtime: agents of three
// kinds with their counter blocks, byte-addressable device memory with
// dirty-page tracking, a small library of int32 kernels with real side
// effects, a virtual clock, and a cooperative scheduler for application
// threads. It implements hsa.Runtime and hsa.LockProvider.
//
// It is public so that a Go port of the SDK side can run on it: the same
// spec gives the same trace, byte for byte, which makes a port's failures
// reproducible without a GPU.
//
// Wiring a trace: create the runtime first, then a recorder stamped by the
// runtime's virtual clock, and hand it back:
//
//	rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}}, Scheduled: true})
//	rec := trace.NewRecorder(rt.Clock)
//	rt.SetRecorder(rec)
//
// Without a recorder the runtime emits nothing and computes no digests,
// which keeps a bare dispatch free of allocations.
//
// Threads: rt.Go registers an application thread and rt.Wait runs them.
// With Config.Scheduled exactly one application thread runs at a time; the
// baton passes at yield points (after every kernel the hardware runs, at
// rt.Yield (the harness's application calls it inside each launch), and when a thread blocks on a lock from NewLock, in WaitUntil
// or in Signal.WaitBelow) to the next runnable thread id in round-robin
// order. Same program, same interleaving, same virtual times, same trace.
// Code that holds a sync.Mutex must not reach a yield point.
//
// No hang: when every live thread is blocked the scheduler records a
// deadlock (ErrDeadlock, returned by Wait and listed by Faults) and aborts
// waiting: every pending and later wait returns false, and a Lock that
// cannot be taken returns without holding the lock. rt.Cancel does the
// same on request (an application that waits for a completion that never
// comes, CMP-4).
package sim
