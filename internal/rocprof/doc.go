// Package rocprof is a rocprofv3-like tool on the reference engine: it plays
// the application part of a spec on the simulator under the counter
// collection that rocprofv3 configures, with kernel replay
// (--replay-mode kernel --kernel-replay-beta-enabled) or application replay,
// and writes rocprofv3's JSON and CSV output. It also validates rocprofv3
// output, ours or a real one, against rules RPV-3, RPV-5, RPV-6 and RPV-8
// (ValidateJSON, ValidateCSV, ValidateDir).
//
// What the tool does, rule by rule:
//   - RPV-1, RPV-7: Options.Check refuses kernel replay without --pmc or the
//     beta flag, and with thread trace, PC sampling or SPM; kernel trace and
//     stats are allowed with a warning.
//   - RPV-2: the KERNEL_REPLAY subscription lives on a context of its own,
//     created only under kernel replay.
//   - RPV-3: replay_pass_count returns the number of counter groups
//     collectable on the dispatch's agent (Groups).
//   - RPV-4: the tool never sets replay_continue and never calls the local
//     context functions; the pass index reaches the counter callback through
//     per-thread state published at PASS ENTER and cleared at PASS EXIT.
//   - RPV-5: without kernel replay, several --pmc groups run the whole
//     application once per group on a fresh simulator, output in pass_N.
//   - RPV-6: JSON counter records carry replay_pass under kernel replay; the
//     CSV never has a Replay_Pass column.
package rocprof
