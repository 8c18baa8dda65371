package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	"github.com/replayspec/replayspec/report"
)

// The CI examples of docs/ci.md (examples/ci/): linted, and their shell
// run here as the CI systems would run them, shard by shard, then the
// merge, whose result must equal one unsharded run.

const (
	githubWorkflow = "../../examples/ci/github-actions.yml"
	gitlabPipeline = "../../examples/ci/gitlab-ci.yml"
)

// TestGitHubWorkflowLints: actionlint (the workflow linter, as a library)
// finds nothing in the example: syntax, expressions, the actions' inputs,
// and the scripts with shellcheck when it is installed.
func TestGitHubWorkflowLints(t *testing.T) {
	opts := &actionlint.LinterOptions{}
	if p, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = p
	} else {
		t.Log("shellcheck is not installed: the scripts' shell is not linted (apt-get install shellcheck)")
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFile(githubWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", githubWorkflow, e.Line, e.Column, e.Message, e.Kind)
	}
	// And the linter does find a fault in a broken copy (a misspelt input
	// of an action): the test can fail.
	b, err := os.ReadFile(githubWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(b), "merge-multiple: true", "merge-multipel: true", 1)
	if errs, err := l.Lint("broken.yml", []byte(broken), nil); err != nil || len(errs) != 1 {
		t.Errorf("actionlint on a workflow with a misspelt input: %d errors (%v), want 1", len(errs), err)
	}
}

type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any `yaml:"needs"`
		Strategy struct {
			Matrix map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Uses  string            `yaml:"uses"`
			With  map[string]any    `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestGitHubWorkflowShardThenMerge runs the workflow's shard step once per
// entry of its matrix, each in a directory of its own (a runner), gathers
// their out/ as download-artifact's merge-multiple does, runs the merge
// step, and compares the merged result with one unsharded run.
func TestGitHubWorkflowShardThenMerge(t *testing.T) {
	t.Parallel() // it waits on processes: let other tests run meanwhile
	if testing.Short() {
		t.Skip("-short: runs the library five times")
	}
	b, err := os.ReadFile(githubWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	shardJob, mergeJob := wf.Jobs["shards"], wf.Jobs["merge"]
	shards := shardJob.Strategy.Matrix["shard"]
	if len(shards) < 2 {
		t.Fatalf("the shards job's matrix is %v: want shard: [1, ..., n]", shards)
	}
	if mergeJob.Needs != "shards" {
		t.Errorf("the merge job needs %v, want the shards", mergeJob.Needs)
	}
	var shardRun, mergeRun, mergeShell string
	var shardEnv map[string]string
	for _, s := range shardJob.Steps {
		if s.ID == "shard" {
			shardRun, shardEnv = s.Run, s.Env
		}
	}
	for _, s := range mergeJob.Steps {
		if s.ID == "merge" {
			mergeRun, mergeShell = s.Run, s.Shell
		}
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") && s.With["merge-multiple"] != true {
			t.Error("download-artifact must merge the shards' out/ into one (merge-multiple: true)")
		}
	}
	if shardRun == "" || mergeRun == "" {
		t.Fatal("no step with id shard in the shards job, or merge in the merge job")
	}
	if shardEnv["SHARD"] != "${{ matrix.shard }}" || shardEnv["SHARDS"] != "${{ strategy.job-total }}" {
		t.Errorf("the shard step's env is %v: want SHARD from the matrix and SHARDS the job total", shardEnv)
	}
	if mergeShell != "bash" {
		t.Errorf("the merge step's shell is %q, want bash", mergeShell)
	}
	n := len(shards)
	env := []string{"TARGET=" + wf.Env["TARGET"], "SHARDS=" + strconv.Itoa(n)}
	merged := shardThenMerge(t, n,
		func(k int) (string, []string) {
			return shardRun, append(env, "SHARD="+strconv.Itoa(shards[k-1]))
		},
		// GitHub's default shell is bash -e; shell: bash adds pipefail.
		[]string{"bash", "--noprofile", "--norc", "-e", "-c"},
		mergeRun, []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}, env)
	summary, err := os.ReadFile(filepath.Join(merged, "summary.md"))
	if err != nil || !strings.Contains(string(summary), "# Kernel replay compliance") {
		t.Errorf("the step summary does not hold the compliance matrix (%v)", err)
	}
}

// TestGitLabPipelineShardThenMerge: the same with the GitLab pipeline's
// parallel job (CI_NODE_INDEX of CI_NODE_TOTAL) and its report job.
func TestGitLabPipelineShardThenMerge(t *testing.T) {
	t.Parallel() // it waits on processes: let other tests run meanwhile
	if testing.Short() {
		t.Skip("-short: runs the library five times")
	}
	b, err := os.ReadFile(gitlabPipeline)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	type job struct {
		Parallel  int      `yaml:"parallel"`
		Needs     []string `yaml:"needs"`
		Script    []string `yaml:"script"`
		Artifacts struct {
			Paths   []string          `yaml:"paths"`
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	var shard, rep job
	var vars map[string]string
	for name, v := range map[string]any{"replayspec": &shard, "replayspec-report": &rep, "variables": &vars} {
		node, ok := doc[name]
		if !ok {
			t.Fatalf("%s has no %s", gitlabPipeline, name)
		}
		if err := node.Decode(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if shard.Parallel < 2 || len(shard.Script) == 0 || len(rep.Script) == 0 {
		t.Fatalf("want a job replayspec with parallel: n and a script, and a job replayspec-report")
	}
	if !slices.Equal(rep.Needs, []string{"replayspec"}) || rep.Artifacts.Reports["junit"] == "" {
		t.Errorf("the report job needs %v and reports %v: want the parallel job, and JUnit", rep.Needs, rep.Artifacts.Reports)
	}
	n := shard.Parallel
	env := []string{"TARGET=" + vars["TARGET"], "CI_NODE_TOTAL=" + strconv.Itoa(n)}
	// The runner runs a job's script lines in one shell, stopping at the
	// first that fails.
	sh := []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}
	shardThenMerge(t, n,
		func(k int) (string, []string) {
			return strings.Join(shard.Script, "\n"), append(env, "CI_NODE_INDEX="+strconv.Itoa(k))
		}, sh,
		strings.Join(rep.Script, "\n"), sh, env)
}

// shardThenMerge runs the shard script n times, each in its own directory,
// copies every out/ into one, runs the merge script there, and compares
// out/merged.json and out/COMPLIANCE.md with an unsharded run of the same
// target. It returns the merge's directory.
func shardThenMerge(t *testing.T, n int, shard func(k int) (string, []string), shardShell []string,
	merge string, mergeShell, env []string) string {
	t.Helper()
	root := t.TempDir()
	mergeDir := filepath.Join(root, "merge")
	for k := 1; k <= n; k++ {
		dir := filepath.Join(root, "runner-"+strconv.Itoa(k))
		script, senv := shard(k)
		code := runScript(t, dir, shardShell, script, senv)
		if code != exitOK && code != exitFail {
			t.Fatalf("shard %d/%d: exit %d", k, n, code)
		}
		copyTree(t, filepath.Join(dir, "out"), filepath.Join(mergeDir, "out"))
	}
	env = append(env, "GITHUB_STEP_SUMMARY="+filepath.Join(mergeDir, "summary.md"))
	if code := runScript(t, mergeDir, mergeShell, merge, env); code != exitOK {
		t.Fatalf("the merge: exit %d, want 0 (the library passes on sim)", code)
	}

	target := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "TARGET="); ok {
			target = v
		}
	}
	sameAsWhole(t, filepath.Join(mergeDir, "out"), target)
	return mergeDir
}

// wholeRun is one unsharded run of a target, made once for every test that
// compares a merge with it.
type wholeRun struct {
	once    sync.Once
	results []report.JSONResult
	matrix  []string
	err     error
}

var wholeRuns sync.Map // target -> *wholeRun

func wholeOf(t *testing.T, target string) *wholeRun {
	t.Helper()
	v, _ := wholeRuns.LoadOrStore(target, &wholeRun{})
	w := v.(*wholeRun)
	w.once.Do(func() {
		dir, err := os.MkdirTemp("", "replayspec-whole")
		if err != nil {
			w.err = err
			return
		}
		defer os.RemoveAll(dir)
		if code := runScript(t, dir, []string{"bash", "-e", "-c"},
			`replayspec run --target "$TARGET" --format json --matrix whole.md > whole.json`, []string{"TARGET=" + target}); code != exitOK {
			w.err = fmt.Errorf("the unsharded run of %s: exit %d", target, code)
			return
		}
		w.results = results(t, filepath.Join(dir, "whole.json"))
		w.matrix = sortedLines(t, filepath.Join(dir, "whole.md"))
	})
	if w.err != nil {
		t.Fatal(w.err)
	}
	return w
}

// sameAsWhole compares what a merge wrote in dir (merged.json,
// COMPLIANCE.md, report.html, junit.xml) with one unsharded run of target.
func sameAsWhole(t *testing.T, dir, target string) {
	t.Helper()
	whole := wholeOf(t, target)
	got, want := results(t, filepath.Join(dir, "merged.json")), whole.results
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the merged shards differ from one run (-whole +merged):\n%s", d)
	}
	if len(got) < 50 {
		t.Errorf("%d results merged: not the library", len(got))
	}
	if g := sortedLines(t, filepath.Join(dir, "COMPLIANCE.md")); !slices.Equal(g, whole.matrix) {
		t.Errorf("the merged compliance matrix differs from one run's:\n%s", cmp.Diff(whole.matrix, g))
	}
	// The page, with every spec and its timelines, and JUnit for the
	// CI's test view.
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if !bytes.Contains(page, []byte(`<span class="name">`+r.Name+`</span>`)) {
			t.Errorf("the merged page lacks %s", r.Name)
		}
	}
	if bytes.Contains(page, []byte("no trace at hand")) {
		t.Error("the merged page lacks timelines: the shards' traces were not found")
	}
	junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct{} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit, &doc); err != nil || len(doc.Suites) < len(got) {
		t.Errorf("junit.xml: %d suites for %d specs (%v)", len(doc.Suites), len(got), err)
	}
}

// runScript runs a CI script in dir with the test binary as replayspec on
// PATH (TestMain puts it there) and env added; it returns the exit status.
func runScript(t *testing.T, dir string, shell []string, script string, env []string) int {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell[0], append(shell[1:], script)...)
	cmd.Dir = dir
	// Each script its own --last-failed record: tests run it in parallel.
	cmd.Env = append(append(os.Environ(), "REPLAYSPEC_CACHE="+filepath.Join(dir, ".cache")), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if out.Len() > 0 {
		t.Logf("in %s:\n%s", filepath.Base(dir), out.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// results reads a JSON result stream, keeping what a run decided about
// each spec (not its times, nor where its trace went), in name order.
func results(t *testing.T, path string) []report.JSONResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, rs, end, err := report.ReadJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if end.Stopped != "" {
		t.Errorf("%s: %s", path, end.Stopped)
	}
	for i := range rs {
		rs[i].ElapsedMS, rs[i].TraceFile, rs[i].Rerun = 0, "", ""
	}
	slices.SortFunc(rs, func(a, b report.JSONResult) int { return strings.Compare(report.CaseName(a), report.CaseName(b)) })
	return rs
}

func sortedLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	slices.Sort(lines)
	return lines
}

// TestKubernetesIndexedJob: the Indexed Job's pods and the merge Job, run
// here as the cluster would run their containers' scripts: pod i with
// JOB_COMPLETION_INDEX=i, all on one results volume (a directory), then the
// merge. No cluster runs in this test: the manifests' shape is checked,
// and their scripts' result compared with one unsharded run.
func TestKubernetesIndexedJob(t *testing.T) {
	t.Parallel() // it waits on processes: let other tests run meanwhile
	if testing.Short() {
		t.Skip("-short: runs the library five times")
	}
	type container struct {
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
	}
	type manifest struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					RestartPolicy string      `yaml:"restartPolicy"`
					Containers    []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	read := func(file string) []manifest {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var ms []manifest
		dec := yaml.NewDecoder(f)
		for {
			var m manifest
			if err := dec.Decode(&m); err != nil {
				if err.Error() == "EOF" {
					return ms
				}
				t.Fatalf("%s: %v", file, err)
			}
			ms = append(ms, m)
		}
	}
	job := func(ms []manifest) manifest {
		for _, m := range ms {
			if m.Kind == "Job" {
				return m
			}
		}
		t.Fatal("no Job")
		return manifest{}
	}
	shards, merge := job(read("../../examples/k8s/replayspec-shards.yaml")), job(read("../../examples/k8s/replayspec-merge.yaml"))
	envOf := func(c container) (map[string]string, []string) {
		m := map[string]string{}
		var env []string
		for _, e := range c.Env {
			m[e.Name] = e.Value
			env = append(env, e.Name+"="+e.Value)
		}
		return m, env
	}
	if shards.Spec.CompletionMode != "Indexed" || shards.Spec.Template.Spec.RestartPolicy != "Never" || len(shards.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the shards' Job: completionMode %q, restartPolicy %q: want an Indexed Job of one container", shards.Spec.CompletionMode, shards.Spec.Template.Spec.RestartPolicy)
	}
	sc, mc := shards.Spec.Template.Spec.Containers[0], merge.Spec.Template.Spec.Containers[0]
	senv, senvList := envOf(sc)
	menv, menvList := envOf(mc)
	n := shards.Spec.Completions
	if n < 2 || shards.Spec.Parallelism != n || senv["SHARDS"] != strconv.Itoa(n) || menv["SHARDS"] != strconv.Itoa(n) {
		t.Fatalf("completions %d, parallelism %d, SHARDS %q and %q: want them all the same", n, shards.Spec.Parallelism, senv["SHARDS"], menv["SHARDS"])
	}
	script := func(c container) ([]string, string) {
		if len(c.Command) != 2 || c.Command[1] != "-c" || len(c.Args) != 1 {
			t.Fatalf("a container's command is %q %q: want [/bin/sh, -c] and one script", c.Command, c.Args)
		}
		return []string{"sh", "-c"}, c.Args[0]
	}
	root := t.TempDir()
	results := filepath.Join(root, "results") // the shared volume
	sh, s := script(sc)
	for i := range n {
		env := append(slices.Clone(senvList), "RESULTS="+results, "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
		if code := runScript(t, filepath.Join(root, "pod-"+strconv.Itoa(i)), sh, s, env); code != 0 {
			t.Fatalf("pod %d: exit %d, want 0 (a verdict of 1 is the merge's to report)", i, code)
		}
	}
	sh, s = script(mc)
	if code := runScript(t, filepath.Join(root, "merge"), sh, s, append(menvList, "RESULTS="+results)); code != exitOK {
		t.Fatalf("the merge: exit %d", code)
	}
	sameAsWhole(t, results, senv["TARGET"])
}
