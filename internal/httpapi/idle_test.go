package httpapi_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/httpapi"
)

// readUntilClosed reads what the server sends until it closes the connection; the deadline
// only guards against a server that never does.
func readUntilClosed(t *testing.T, conn net.Conn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if timedOut(err) {
		t.Fatalf("the server kept the connection open past its timeouts (read %q)", got)
	}
	return string(got)
}

func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A connection that sends nothing, or stops in the middle of a request, or idles after an
// answer, is closed without a word at the read or idle timeout: never the 400
// VALIDATION_ERROR "Request Timeout" fasthttp's timeout used to turn into.
func TestIdleConnectionsClosedSilently(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) {
		d.ReadTimeout = 200 * time.Millisecond
		d.IdleTimeout = 200 * time.Millisecond
		d.WriteTimeout = time.Second
	})
	addr := strings.TrimPrefix(s.URL, "http://")
	dial := func() net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	if got := readUntilClosed(t, dial()); got != "" {
		t.Errorf("a connection that sent nothing got %q", got)
	}

	partial := dial()
	if _, err := io.WriteString(partial, "POST /v1/auth/register HTTP/1.1\r\nHost: x\r\nContent-"); err != nil {
		t.Fatal(err)
	}
	if got := readUntilClosed(t, partial); got != "" {
		t.Errorf("a connection that stopped in the headers got %q", got)
	}

	keepAlive := dial()
	if _, err := io.WriteString(keepAlive, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(keepAlive)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Close {
		t.Fatalf("healthz: %d %s (close %v)", res.StatusCode, body, res.Close)
	}
	if err := keepAlive.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if timedOut(err) {
		t.Fatal("an idle keep-alive connection was not closed")
	}
	if len(rest) != 0 {
		t.Errorf("an idle keep-alive connection got %q", rest)
	}
	if w := s.App.Server().WriteTimeout; w != time.Second {
		t.Errorf("WriteTimeout %v", w)
	}
	if w := startServer(t).App.Server().WriteTimeout; w != 30*time.Second {
		t.Errorf("default WriteTimeout %v", w)
	}
	if strings.Contains(s.logText(), "Request Timeout") {
		t.Errorf("timeouts were logged as requests:\n%s", s.logText())
	}
}
