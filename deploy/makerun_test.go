package deploy

// `make run` as a developer runs it: the Makefile's own recipe (binaries built by its build
// target into a temporary BIN), against the test package's database and private Redis, in a
// process group of its own as a terminal puts it.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// makeBuild runs `make build` into a temporary BIN (or the run's built commands'
// directory, testenv.CommandsEnv, where it links nothing new), so the deadlines below time
// make run's own steps rather than a cold build on a loaded machine.
func makeBuild(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(testenv.CommandsEnv)
	if bin == "" {
		bin = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", repoRoot, "build", "BIN="+bin)
	cmd.Env = makeEnv(nil)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	return bin
}

// makeEnv is the test's environment without the service's variables and an outer make's
// (make test runs this test), plus set.
func makeEnv(set map[string]string) []string {
	drop := append(config.Names(), "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(drop, name) {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// makeRun is a running `make run` in its own process group (its pid is the group's id).
type makeRun struct {
	cmd     *exec.Cmd
	outPath string // make's and its children's output
	done    chan struct{}
	err     error // Wait's result, set before done is closed
}

// startMakeRun starts `make run` with the binaries in bin and the API on apiAddr; the whole group is SIGKILLed when
// the test ends, whatever happened.
func startMakeRun(t *testing.T, bin, apiAddr string) *makeRun {
	t.Helper()
	_, dsn := testenv.PostgresDSN(t)
	out, err := os.Create(filepath.Join(t.TempDir(), "make-run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("make", "--no-print-directory", "-C", repoRoot, "run", "BIN="+bin)
	cmd.Env = makeEnv(map[string]string{
		"DATABASE_URL":     dsn,
		"REDIS_URL":        testenv.RedisURL(t),
		"API_ADDR":         apiAddr,
		"METRICS_ADDR":     "", // no second listener to collide with other tests
		"SHUTDOWN_TIMEOUT": "5s",
	})
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &makeRun{cmd: cmd, outPath: out.Name(), done: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	})
	return r
}

func (r *makeRun) output() string {
	b, _ := os.ReadFile(r.outPath)
	return string(b)
}

func (r *makeRun) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// waitExit waits for make to end, failing the test after timeout.
func (r *makeRun) waitExit(t *testing.T, timeout time.Duration, after string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		t.Fatalf("make run still running %s %s; its group: %v; output:\n%s",
			timeout, after, groupMembers(t, r.cmd.Process.Pid), r.output())
	}
}

// waitServing waits until the API answers /readyz on addr and the worker says it runs, and
// returns the two service processes.
func (r *makeRun) waitServing(t *testing.T, addr string) []member {
	t.Helper()
	pgid := r.cmd.Process.Pid
	client := &http.Client{Timeout: 2 * time.Second}
	ready := func() bool {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if r.exited() {
			t.Fatalf("make run ended (%v) before the API was ready; output:\n%s", r.err, r.output())
		}
		services := slices.DeleteFunc(groupMembers(t, pgid), func(m member) bool { return m.comm != "api" && m.comm != "worker" })
		if len(services) == 2 && ready() && strings.Contains(r.output(), `"msg":"worker running"`) {
			return services
		}
		if time.Now().After(deadline) {
			t.Fatalf("API not ready and worker not running 2m after make run started (services %v); output:\n%s", services, r.output())
		}
		time.Sleep(50 * time.Millisecond) // polling: /readyz has nothing to wait on
	}
}

// member is a live (not zombie) process of a process group.
type member struct {
	pid  int
	comm string
}

func (m member) String() string { return m.comm + "[" + strconv.Itoa(m.pid) + "]" }

// groupMembers lists the live processes of process group pgid, read from /proc.
func groupMembers(t *testing.T, pgid int) []member {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var members []member
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // ended while listing
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(string(stat[end+1:]))
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		members = append(members, member{pid: pid, comm: string(stat[open+1 : end])})
	}
	return members
}

func TestMakeRun(t *testing.T) {
	bin := makeBuild(t)
	t.Run("fails when the API cannot bind", func(t *testing.T) { testMakeRunBusyPort(t, bin) })
	t.Run("stops on Ctrl-C", func(t *testing.T) { testMakeRunCtrlC(t, bin) })
	t.Run("serves the quickstart", func(t *testing.T) { testMakeRunQuickstart(t, bin) })
}

// A busy API port fails `make run`: the API's failure ends the run with an error, and the
// worker started beside it is stopped, not left running.
func testMakeRunBusyPort(t *testing.T, bin string) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	r := startMakeRun(t, bin, busy.Addr().String())
	r.waitExit(t, 2*time.Minute, "with the API's port taken")
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) {
		t.Fatalf("make run with the API's port taken ended with %v, want a non-zero exit; output:\n%s", r.err, r.output())
	}
	if out := r.output(); !strings.Contains(out, "address already in use") {
		t.Errorf("make run failed (%v) but not because the API could not bind; output:\n%s", r.err, out)
	}
	// It says which PostgreSQL and Redis it uses, and that the Redis database is shared.
	_, dsn := testenv.PostgresDSN(t)
	if out := r.output(); !strings.Contains(out, "make run: PostgreSQL "+dsn+", Redis "+testenv.RedisURL(t)+"\n") ||
		!strings.Contains(out, "anything else using that Redis database shares its queues") {
		t.Errorf("make run did not name its PostgreSQL and Redis, or warn that the Redis database is shared; output:\n%s", out)
	}
	if left := groupMembers(t, r.cmd.Process.Pid); len(left) > 0 {
		t.Errorf("processes left running after make run failed: %v; output:\n%s", left, r.output())
	}
}

// Ctrl-C in a terminal sends SIGINT to the whole foreground process group: make, the
// recipe's shell, the worker and the API. make ends within a few seconds, the shell does not
// crash (the old trap 'kill 0' recursion printed "Segmentation fault"), and both services
// stopped cleanly.
func testMakeRunCtrlC(t *testing.T, bin string) {
	addr := testenv.FreeAddr(t)
	r := startMakeRun(t, bin, addr)
	pgid := r.cmd.Process.Pid
	services := r.waitServing(t, addr)

	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r.waitExit(t, 30*time.Second, "after Ctrl-C (SHUTDOWN_TIMEOUT is 5s)")
	out := r.output()
	if strings.Contains(out, "Segmentation fault") {
		t.Errorf("make run printed \"Segmentation fault\" on Ctrl-C; output:\n%s", out)
	}
	if left := groupMembers(t, pgid); len(left) > 0 {
		t.Errorf("processes left running after Ctrl-C ended make run: %v (api and worker were %v)", left, services)
	}
	if n := strings.Count(out, `"msg":"stopped"`); n != 2 {
		t.Errorf("%d \"stopped\" log lines after Ctrl-C, want one each from api and worker; output:\n%s", n, out)
	}
}

// The README's first call after `make run`: `go run ./examples/quickstart`, exactly as
// written (no key, no flags; only CONTENTAPI_URL points it at this run's port), registers an
// account and gets keyword research on the sample data.
func testMakeRunQuickstart(t *testing.T, bin string) {
	addr := testenv.FreeAddr(t)
	r := startMakeRun(t, bin, addr)
	r.waitServing(t, addr)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./examples/quickstart")
	cmd.Dir = repoRoot
	env := makeEnv(map[string]string{"CONTENTAPI_URL": "http://" + addr})
	cmd.Env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CONTENTAPI_KEY=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./examples/quickstart: %v\n%s\nmake run's output:\n%s", err, out, r.output())
	}
	for _, want := range []string{"export CONTENTAPI_KEY=ap_", `keywords about "coffee" for coffee-sample.example`, "5 credits used, 45 left."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out)
		}
	}
}
