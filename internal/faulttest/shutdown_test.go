package faulttest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a key to every request of an MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// SIGTERM to the api with 10 MCP sessions open (each with its event stream), a call waiting
// for its job (no worker runs, so the job stays queued) and an ordinary request half sent:
// the api exits within 5 s, well inside SHUTDOWN_TIMEOUT (30 s), with status 0. The waiting
// call answers 202 with its job id, and the ordinary request, finished after the signal,
// is still answered.
func TestShutdownWithSessionsAndWaitsOpen(t *testing.T) {
	s := newStack(t, "SHUTDOWN_TIMEOUT=30s", "SYNC_TIMEOUT=60s")
	s.ctl("migrate")
	s.ctl("seed-sample")
	api := s.run("api", s.bins.api)
	s.waitReady(api, s.baseURL()+"/readyz")
	key := s.register("shutdown@example.com")
	// The free plan's 10 requests a minute would be spent by the poll for the job below
	// within 200 ms: on a loaded machine the job comes later than that.
	s.ctl("plan", "set", "--email", "shutdown@example.com", "--plan", "free", "--rate-limit", "100000")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound on failure
	defer cancel()

	for i := range 10 {
		c := mcp.NewClient(&mcp.Implementation{Name: "shutdown-test", Version: "1"}, nil)
		transport := &mcp.StreamableClientTransport{Endpoint: s.baseURL() + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{key: key, base: &http.Transport{}}}}
		cs, err := c.Connect(ctx, transport, nil)
		if err != nil {
			t.Fatalf("mcp session %d: %v", i, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("mcp session %d: list tools: %v", i, err)
		}
	}

	// The long poll: a research call waiting up to SYNC_TIMEOUT for a job no worker runs.
	var wg sync.WaitGroup
	var waited answer
	var waitErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited, waitErr = s.do(ctx, http.MethodPost, "/v1/keywords/research", key,
			map[string]any{"domain": "coffee-sample.example", "topic": "coffee"})
	}()
	if err := waitFor("the research call's job", 30*time.Second, 20*time.Millisecond, func() (bool, error) {
		a, err := s.do(ctx, http.MethodGet, "/v1/jobs", key, nil)
		if err != nil {
			return false, err
		}
		jobs, _ := a.data()["jobs"].([]any)
		return len(jobs) == 1, fmt.Errorf("status %d, %d jobs", a.status, len(jobs))
	}); err != nil {
		t.Fatal(err)
	}

	// The ordinary request: headers and half the body sent before the signal.
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.apiPort))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"email":"inflight@example.com"}`
	if _, err := fmt.Fprintf(conn, "POST /v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		len(body), body[:10]); err != nil {
		t.Fatal(err)
	}
	// Signalled before the api took the connection and read what was sent, the request would
	// be a connection not yet accepted (reset as the listener closes) rather than one in flight.
	if err := waitFor("the api to read the request's first part", 10*time.Second, 5*time.Millisecond, func() (bool, error) {
		return readByServer(conn)
	}); err != nil {
		t.Fatal(err)
	}

	signalled := time.Now()
	if err := api.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitFor("the api's shutdown to begin", 5*time.Second, 10*time.Millisecond, func() (bool, error) {
		log, err := os.ReadFile(api.logPath)
		return strings.Contains(string(log), `"msg":"shutting down`), err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatalf("finishing the request in flight: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("the request in flight: status %d, want 201", res.StatusCode)
	}

	select {
	case <-api.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("api still running %s after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	}
	took := time.Since(signalled)
	t.Logf("api exited %s after SIGTERM with 10 MCP sessions, a waiting call and a request in flight", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("api exited %s after SIGTERM, want within 5 s", took.Round(time.Millisecond))
	}
	if api.err != nil {
		t.Errorf("api ended with %v, want exit status 0; log:\n%s", api.err, tail(api.logPath, 10))
	}
	wg.Wait()
	if waitErr != nil || waited.status != http.StatusAccepted {
		t.Errorf("the waiting call: %v, status %d %s; want 202 with its job", waitErr, waited.status, waited.raw)
	}
}

// readByServer reports whether the server side of conn (a loopback TCP connection) has
// read every byte sent on it, from its receive queue in /proc/net/tcp.
func readByServer(conn net.Conn) (bool, error) {
	server := conn.RemoteAddr().(*net.TCPAddr).Port
	client := conn.LocalAddr().(*net.TCPAddr).Port
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false, err
	}
	local, remote := fmt.Sprintf("0100007F:%04X", server), fmt.Sprintf("0100007F:%04X", client)
	for _, line := range strings.Split(string(table), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[1] != local || f[2] != remote {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		unread, err := strconv.ParseUint(rx, 16, 64)
		return unread == 0, err
	}
	return false, fmt.Errorf("no server side of %s in /proc/net/tcp", conn.LocalAddr())
}
