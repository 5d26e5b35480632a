package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

// startPgbouncer runs pgbouncer in transaction mode (4 server connections) in front of the
// test server and returns its port; the test is skipped where pgbouncer is not installed.
func startPgbouncer(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		t.Skip("pgbouncer is not installed (apt-get install pgbouncer)")
	}
	server, err := pgx.ParseConfig(testenv.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testenv.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	dir := t.TempDir()
	ini := filepath.Join(dir, "pgbouncer.ini")
	conf := fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 4
max_client_conn = 100
`, server.Host, server.Port, port, filepath.Join(dir, "users.txt"))
	if err := os.WriteFile(ini, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(`"`+server.User+`" ""`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{ini}
	if os.Geteuid() == 0 { // pgbouncer refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user for pgbouncer")
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args = []string{"-u", u.Username, ini}
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return port
		}
		select {
		case <-exited:
			t.Fatalf("pgbouncer exited: %s", logs.String())
		case <-time.After(20 * time.Millisecond): // polling for the port to open
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen: %v", err)
		}
	}
}

// Behind pgbouncer in transaction mode, with default_query_exec_mode=cache_describe as the
// docs/operating.md advises (and migrations on the direct URL), the money path runs as it does on a
// direct connection: accounts, reservations, jobs settled and refunded concurrently, usage
// and the job list. pgx's default mode keeps named prepared statements per server
// connection, which pgbouncer (before 1.21) hands from client to client: that mode failed 4
// of 10 concurrent analysis calls with "prepared statement ... does not exist"; exec and
// simple_protocol cannot encode []byte as jsonb or []uuid.UUID.
func TestBehindPgbouncerTransactionMode(t *testing.T) {
	port := startPgbouncer(t)
	ctx := context.Background()
	direct := freshDSN(t, "pool_max_conns=2")
	if _, err := postgres.Setup(ctx, direct); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(direct)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Connect(ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&pool_max_conns=16&default_query_exec_mode=cache_describe",
		cfg.User, port, cfg.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	a := apptest.New(t, apptest.Options{Pool: pool, JobConfig: &job.DefaultConfig})
	reg, err := a.Accounts.Register(ctx, uuid.NewString()+"@example.com", "pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	svc := a.Jobs

	const calls = 10 // the 50 free credits, 5 each
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := svc.Submit(ctx, job.Submission{AccountID: reg.AccountID, Kind: "keywords:research",
				Endpoint: "/v1/keywords/research", Cost: 5, Request: map[string]any{"topic": "t" + strconv.Itoa(i)}})
			if err == nil && i%2 == 0 {
				_, err = svc.Complete(ctx, j.ID, map[string]any{"clusters": []any{}})
			} else if err == nil {
				_, err = svc.Fail(ctx, j.ID, "PROVIDER_ERROR", "test")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, err := a.Ledger.Usage(ctx, reg.AccountID)
	if err != nil || u.Used != 25 || u.Balance != 25 || len(u.Recent) != 5 {
		t.Fatalf("usage %+v %v; want 25 used, 25 left, 5 settled calls", u, err)
	}
	list, _, err := svc.List(ctx, reg.AccountID, job.ListQuery{Limit: 20})
	if err != nil || len(list) != calls {
		t.Fatalf("job list: %d jobs, %v", len(list), err)
	}
}
