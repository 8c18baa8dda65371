package rocprof

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Where the output goes, as rocprofv3 decides it: the output directory is
// -d (rocprofv3.py passes the current directory when it is not given), the
// file prefix -o (the tool library's default "%hostname%/%pid%",
// output_config.hpp), so a default run writes ./<host>/<pid>_results.json;
// every file is DIR/PREFIX_NAME.EXT (output_stream.cpp
// get_output_filename), application replay's runs in DIR/pass_N.
const (
	DefaultOutputDir  = "."
	DefaultOutputFile = "%hostname%/%pid%"
)

// expandKeys replaces the output keys this model has (output_key.cpp):
// %pid%, %p and %hostname%.
func expandKeys(s string) string {
	return strings.NewReplacer("%pid%", strconv.Itoa(PID), "%hostname%", Hostname, "%p", strconv.Itoa(PID)).Replace(s)
}

func joinWords(ws []string) string { return strings.Join(ws, ", ") }

// OutputDir is the directory a run writes to, before its pass_N.
func (cfg Config) OutputDir() string {
	d := cfg.Values.str("output_directory")
	if d == "" {
		d = DefaultOutputDir
	}
	return expandKeys(d)
}

// FilePrefix is what every file name starts with (-o).
func (cfg Config) FilePrefix() string {
	f := cfg.Values.str("output_file")
	if f == "" {
		f = DefaultOutputFile
	}
	return expandKeys(f)
}

// Files renders every output file of the session, by path relative to
// the output directory (each run's pass_N included).
func (r *Result) Files() map[string][]byte {
	out := map[string][]byte{}
	for _, run := range r.Runs {
		for rel, data := range run.Files(r.Spec.Name) {
			out[rel] = data
		}
	}
	return out
}

// Files renders the run's files, by path relative to its output directory.
// Like tool.cpp, a run that produced no record writes no data file
// (config.json excepted); with CSV output agent_info.csv comes along, and
// with --stats kernel_stats.csv and domain_stats.csv.
func (run *AppRun) Files(specName string) map[string][]byte {
	out := map[string][]byte{}
	cfg := run.Config
	name := func(suffix string) string {
		return filepath.Join(cfg.Dir, cfg.FilePrefix()+"_"+suffix)
	}
	if cfg.Values.on("output_config") {
		out[name("config.json")] = run.ConfigJSON(specName, cfg.OutputDir())
	}
	if len(run.Counters) == 0 && len(run.Kernels) == 0 {
		return out
	}
	if cfg.Format("json") {
		out[name("results.json")] = run.JSON(specName, cfg.OutputDir())
	}
	if !cfg.Format("csv") {
		return out
	}
	out[name("agent_info.csv")] = run.AgentInfoCSV()
	if len(run.Counters) > 0 {
		out[name("counter_collection.csv")] = run.CounterCSV()
	}
	if len(run.Kernels) > 0 {
		out[name("kernel_trace.csv")] = run.KernelTraceCSV()
		if cfg.Stats() {
			out[name("kernel_stats.csv")] = run.KernelStatsCSV()
			out[name("domain_stats.csv")] = run.DomainStatsCSV()
		}
	}
	return out
}

// Write writes every run's files under its output directory and returns
// the paths written, sorted.
func (r *Result) Write() ([]string, error) {
	var paths []string
	for _, run := range r.Runs {
		base := run.Config.OutputDir()
		for rel, data := range run.Files(r.Spec.Name) {
			path := filepath.Join(base, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, path)
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// Under returns the plan with every run's output directory moved into
// sub: the folder of one case of a spec with a matrix.
func (p *Plan) Under(sub string) *Plan {
	out := &Plan{Warnings: p.Warnings}
	for _, cfg := range p.Runs {
		v := cloneValues(cfg.Values)
		dir := v.str("output_directory")
		if dir == "" {
			dir = DefaultOutputDir
		}
		from := v["output_directory"].From
		v["output_directory"] = value{Str: filepath.Join(dir, sub), From: from}
		cfg.Values = v
		out.Runs = append(out.Runs, cfg)
	}
	return out
}

// namesPid reports whether the run's file names carry the process id
// (-o's default %hostname%/%pid% does): a new rocprofv3 process never
// writes over an older one's files then.
func (cfg Config) namesPid() bool {
	f := cfg.Values.str("output_file")
	if f == "" {
		f = DefaultOutputFile
	}
	return strings.Contains(f, "%pid%") || strings.Contains(f, "%p")
}

// Collisions lists the files the session would write over whose names
// carry the process id. rocprofv3 runs as a new process each time, so its
// default names never meet an older run's; the simulated process always
// has pid 1000, so prof refuses rather than write over them silently. A
// name without the pid (-o NAME) is written over, as rocprofv3 does.
func (r *Result) Collisions() []string {
	var out []string
	for _, run := range r.Runs {
		if !run.Config.namesPid() {
			continue
		}
		base := run.Config.OutputDir()
		for rel := range run.Files(r.Spec.Name) {
			path := filepath.Join(base, rel)
			if _, err := os.Lstat(path); err == nil {
				out = append(out, path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CheckOutputDirs reports an output directory that cannot be one: a path
// that exists and is not a directory, or one under a file.
func (p *Plan) CheckOutputDirs() error {
	seen := map[string]bool{}
	for _, cfg := range p.Runs {
		dir := filepath.Join(cfg.OutputDir(), cfg.Dir)
		for d := dir; !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if fi, err := os.Stat(d); err == nil {
				if !fi.IsDir() {
					return &Diagnostic{Msg: fmt.Sprintf("output directory %s: %s is a file, not a directory: give -d a directory (it is created when missing)", dir, d)}
				}
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return nil
}
