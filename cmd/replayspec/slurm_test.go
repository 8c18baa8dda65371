//go:build unix

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlurmArrayShardThenMerge runs examples/slurm for real: a one-node
// Slurm (Debian's slurmctld, slurmd and munge) started in a scratch
// directory, submit.sh's job array of shards and its dependent merge, and
// the merged result compared with one unsharded run. It skips, saying why,
// where the daemons are not installed or do not start.
func TestSlurmArrayShardThenMerge(t *testing.T) {
	t.Parallel() // it waits on daemons and jobs: let other tests run meanwhile
	if testing.Short() {
		t.Skip("-short: starts a Slurm cluster")
	}
	for _, bin := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scontrol"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed: apt-get install slurmctld slurmd slurm-client munge (.ci/run does)", bin)
		}
	}
	// munge's socket path must fit a Unix socket's 108 bytes.
	dir, err := os.MkdirTemp("", "rs-slurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	c := startSlurm(t, ctx, dir)

	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	const shards = 3
	submit, err := filepath.Abs("../../examples/slurm/submit.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.command(ctx, work, submit, fmt.Sprint(shards)).CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	t.Logf("submit.sh: %s", out)
	jobs, err := os.ReadFile(filepath.Join(work, "out", "slurm-jobs"))
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(jobs))
	if len(ids) != 2 {
		t.Fatalf("out/slurm-jobs holds %q: want the array's job and the merge's", jobs)
	}
	// Wait for the queue to empty; the merge's state and exit code are
	// then read back.
	for {
		q, err := c.command(ctx, work, "squeue", "-h", "-o", "%i %T %r").Output()
		if err != nil {
			c.dump(t)
			t.Fatalf("squeue: %v", err)
		}
		if strings.TrimSpace(string(q)) == "" {
			break
		}
		select {
		case <-ctx.Done():
			c.dump(t)
			t.Fatalf("the jobs did not finish: %s", q)
		case <-time.After(time.Second):
		}
	}
	info, err := c.command(ctx, work, "scontrol", "show", "job", ids[1]).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", ids[1], err)
	}
	if !strings.Contains(string(info), "JobState=COMPLETED") || !strings.Contains(string(info), "ExitCode=0:0") {
		c.dump(t)
		logs, _ := filepath.Glob(filepath.Join(work, "out", "slurm-*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
		t.Fatalf("the merge job did not complete with exit code 0:\n%s", info)
	}
	for k := 1; k <= shards; k++ {
		if _, err := os.Stat(filepath.Join(work, "out", fmt.Sprintf("shard-%d.json", k))); err != nil {
			t.Errorf("array task %d wrote no results: %v", k, err)
		}
	}

	sameAsWhole(t, filepath.Join(work, "out"), "sim")
}

// slurm is a one-node cluster of the test's own processes.
type slurm struct {
	dir, conf string
}

// command runs a Slurm client (or a script calling them) against it, with
// the test binary as replayspec on PATH.
func (c slurm) command(ctx context.Context, dir string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf, "REPLAYSPEC_CACHE="+filepath.Join(c.dir, ".cache"))
	return cmd
}

func (c slurm) dump(t *testing.T) {
	for _, f := range []string{"slurmctld.log", "slurmd.log", "munged.log"} {
		b, _ := os.ReadFile(filepath.Join(c.dir, f))
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s:\n%s", f, b)
	}
}

// startSlurm starts munged, slurmctld and slurmd in dir, on free ports, and
// waits until the node is idle; they are stopped when the test ends.
func startSlurm(t *testing.T, ctx context.Context, dir string) slurm {
	t.Helper()
	c := slurm{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"state", "spool"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		log, err := os.Create(filepath.Join(dir, name+".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Skipf("%s does not start here: %v", name, err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			log.Close()
		})
	}
	key := filepath.Join(dir, "munge.key")
	if out, err := exec.Command("mungekey", "--create", "--keyfile="+key).CombinedOutput(); err != nil {
		t.Skipf("mungekey cannot make a key here: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "munge.sock")
	start("munged", "--foreground", "--force", "--socket="+sock, "--key-file="+key, "--log-file="+filepath.Join(dir, "munged.log"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"))
	if !waitUntil(ctx, func() bool { _, err := os.Stat(sock); return err == nil }) {
		c.dump(t)
		t.Skip("munged does not start here (its log is above)")
	}
	conf := fmt.Sprintf(`ClusterName=replayspec
SlurmctldHost=%[1]s(127.0.0.1)
SlurmUser=%[2]s
SlurmdUser=%[2]s
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
AuthType=auth/munge
AuthInfo=socket=%[5]s
CredType=cred/munge
StateSaveLocation=%[6]s/state
SlurmdSpoolDir=%[6]s/spool
SlurmctldPidFile=%[6]s/slurmctld.pid
SlurmdPidFile=%[6]s/slurmd.pid
SlurmctldLogFile=%[6]s/slurmctld.log
SlurmdLogFile=%[6]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, u.Username, freePort(t), freePort(t), sock, dir)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	start("slurmctld", "-D", "-i", "-f", c.conf)
	start("slurmd", "-D", "-f", c.conf)
	if !waitUntil(ctx, func() bool {
		out, err := c.command(ctx, dir, "sinfo", "-h", "-o", "%T").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	}) {
		c.dump(t)
		t.Skip("the Slurm node never became idle here (the daemons' logs are above)")
	}
	return c
}

func waitUntil(ctx context.Context, ok func() bool) bool {
	for {
		if ok() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
