package httpapi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

var (
	workerBinOnce sync.Once
	workerBin     string
	workerBinErr  error
)

// buildWorker builds cmd/worker once for the package's crash tests.
func buildWorker(t *testing.T) string {
	t.Helper()
	workerBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "contentapi-worker")
		if err != nil {
			workerBinErr = err
			return
		}
		workerBin = filepath.Join(dir, "worker")
		out, err := exec.Command("go", "build", "-o", workerBin, "github.com/contentapi/contentapi/cmd/worker").CombinedOutput()
		if err != nil {
			workerBinErr = err
			t.Logf("go build: %s", out)
		}
	})
	if workerBinErr != nil {
		t.Fatalf("build worker: %v", workerBinErr)
	}
	return workerBin
}

// startWorkerProcess runs the real worker binary against the test database and Redis.
func startWorkerProcess(t *testing.T, f *fakeDataForSEO, maxAttempts int) *exec.Cmd {
	t.Helper()
	_, dsn := testenv.PostgresDSN(t)
	cmd := exec.Command(buildWorker(t))
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dsn,
		"REDIS_URL="+testenv.RedisURL(t),
		"KEYWORD_PROVIDER=dataforseo",
		"DATAFORSEO_BASE_URL="+f.URL,
		"DATAFORSEO_LOGIN=login",
		"DATAFORSEO_PASSWORD=secret",
		"KEYWORD_CACHE_TTL=0s",
		"JOB_STALE_AFTER=1s",
		"JOB_SWEEP_INTERVAL=200ms",
		"JOB_MAX_ATTEMPTS="+strconv.Itoa(maxAttempts),
		"JOB_RETRY_DELAY=10ms",
		"WORKER_POLL_INTERVAL=1ms",
		"LOG_LEVEL=error",
	)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// A worker killed in the middle of a job: the job is resumed by another worker and charged
// once, or, with no attempt left, refunded.
func TestWorkerKilledMidJob(t *testing.T) {
	cases := []struct {
		name        string
		maxAttempts int
		want        string
		balance     int
	}{
		{"resumed and finished", 3, job.Succeeded, 45},
		{"refunded when no attempt is left", 1, job.Failed, 50},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeDataForSEO(t)
			s := startStack(t, stackConfig{noWorker: true})
			key := register(t, s.testServer)
			acc := accountID(t, s.testServer, key)

			arrived, release := f.holdFirst()
			defer release()
			w1 := startWorkerProcess(t, f, c.maxAttempts)
			r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee " + c.name},
				"Prefer", "respond-async")
			if r.Status != 202 {
				t.Fatalf("submit: %d %s", r.Status, r.Raw)
			}
			id := uuid.MustParse(r.data()["job_id"].(string))
			select {
			case <-arrived: // the worker is inside the job, waiting on the provider
			case <-time.After(30 * time.Second):
				t.Fatal("the worker never called the provider")
			}
			kill(t, w1)
			release()
			startWorkerProcess(t, f, c.maxAttempts)

			j, err := s.Jobs.Wait(context.Background(), acc, id, 60*time.Second)
			if err != nil || j.Status != c.want {
				t.Fatalf("job ended %q (%s %s), %v; want %q", j.Status, j.ErrorCode, j.ErrorMessage, err, c.want)
			}
			if b := s.balanceOf(t, key); b != c.balance {
				t.Fatalf("balance %d, want %d", b, c.balance)
			}
			rs := reservationsOf(t, acc)
			if rs["reserved"] != 0 || rs["settled"]+rs["refunded"] != 1 {
				t.Fatalf("reservations %v: want exactly one, closed once", rs)
			}
			got := do(t, "GET", s.URL+"/v1/jobs/"+id.String(), key, nil)
			if c.want == job.Succeeded && (got.Status != 200 || got.data()["clusters"] == nil) {
				t.Fatalf("job answer: %d %s", got.Status, got.Raw)
			}
			if c.want == job.Failed && (got.Status != 502 || got.Body["error"].(map[string]any)["credits_refunded"] != float64(5)) {
				t.Fatalf("job answer: %d %s", got.Status, got.Raw)
			}
		})
	}
}
