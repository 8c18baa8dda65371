// Package rocprof is a rocprofv3-like tool on the reference engine: it
// plays the application part of a spec on the simulator under the counter
// collection that rocprofv3 configures, with kernel replay
// (--replay-mode kernel --kernel-replay-beta-enabled) or application
// replay, and writes rocprofv3's JSON and CSV output as the real writers
// lay it out. It also validates rocprofv3 output, ours or a real one,
// against rules RPV-3, RPV-5, RPV-6, RPV-8 and RPV-9 (ValidateJSON,
// ValidateCSVFile, ValidateDir).
//
// It is public, at the top level, because rocprofv3's integration is half
// of the specification (RPV-1..9): a user compares real rocprofv3 output
// with ours through ValidateDir, and a tool author reads how a rocprofv3-like
// tool drives replay (docs/architecture.md says why it is not internal).
//
// The way through: ParseArgs reads rocprofv3's grammar, every option of it
// (a *UsageError is argparse's exit status 2); Command.Plan reads an input
// file, splits the work into runs as rocprofv3.py does and applies its
// rules for combining options, with a warning for each option whose effect
// the simulator cannot produce (a *Diagnostic is a fatal error, exit status
// 1); Run plays each run; Result.Files renders the output;
// ApplicationExpect is the part of a spec's expect block that holds under
// rocprofv3's tool. docs/rocprofv3.md cites the upstream file behind every
// rule.
//
// What the tool does, rule by rule:
//   - RPV-1, RPV-7: Plan refuses kernel replay without counters or the beta
//     flag, and with thread trace, PC sampling or SPM; kernel trace and
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
//   - RPV-6: every JSON counter record carries replay_pass (0 when the
//     dispatch was not replayed); the CSV never has a Replay_Pass column.
//   - RPV-9: the files are laid out as the reference writer lays them out
//     (format.go, csvout.go, jsonout.go write them; writerform.go checks
//     any file that claims to be rocprofv3's).
//
// The tool records what it does in the run's trace as any tool does (api,
// callback, pass_count and record events), so the rule oracles and a
// spec's expect block read a prof run like any other.
package rocprof
