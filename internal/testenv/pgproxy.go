package testenv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// QueryAction is what a PGProxy does with a simple-protocol query a client sends.
type QueryAction int

// What a PGProxy can do with a query.
const (
	// Forward passes the query on.
	Forward QueryAction = iota
	// CutBefore closes the connection without passing the query on: the server never runs it.
	CutBefore
	// CutAfter passes the query on and closes the connection once the server has answered,
	// without letting the answer through: the server ran it, the client cannot know.
	CutAfter
)

// PGProxy is a TCP proxy in front of the tests' PostgreSQL whose connections a test can cut,
// to see what code does when the database goes away in the middle of a call. It reads the
// frontend protocol's message framing so a test can cut a connection at one statement (a
// COMMIT, say).
type PGProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool
	conns   map[*proxyConn]struct{}
	onQuery func(sql string) QueryAction
	refused chan struct{}
}

type proxyConn struct {
	client, server net.Conn
	once           sync.Once
	// swallow is closed when the server's next answer must be dropped and the link cut.
	swallow chan struct{}
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

// NewPGProxy starts a proxy to the tests' PostgreSQL server, stopped with the test.
func NewPGProxy(t testing.TB) *PGProxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(ServerDSN())
	if err != nil {
		t.Fatalf("testenv: proxy: %v", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: proxy: %v", err)
	}
	p := &PGProxy{ln: ln, target: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), conns: map[*proxyConn]struct{}{},
		refused: make(chan struct{}, 1)}
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.Cut()
	})
	return p
}

// Pool returns a pool on the package's database (see Postgres) through the proxy, closed
// with the test.
func (p *PGProxy) Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	_, dsn := PostgresDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("testenv: proxy pool: %v", err)
	}
	addr := p.ln.Addr().(*net.TCPAddr)
	cfg.ConnConfig.Host = addr.IP.String()
	cfg.ConnConfig.Port = uint16(addr.Port) //nolint:gosec // a listener's port fits
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("testenv: proxy pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Refuse refuses new connections until Restore, leaving open ones be.
func (p *PGProxy) Refuse() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
}

// Refused receives after a connection was refused.
func (p *PGProxy) Refused() <-chan struct{} { return p.refused }

// Cut closes every connection through the proxy and refuses new ones until Restore: to its
// clients, PostgreSQL is down.
func (p *PGProxy) Cut() {
	p.mu.Lock()
	p.down = true
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.close()
	}
}

// Restore lets new connections through again.
func (p *PGProxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// OnQuery sets what to do with each simple-protocol query (pgx sends BEGIN, COMMIT and
// statements without arguments that way); nil forwards everything.
func (p *PGProxy) OnQuery(fn func(sql string) QueryAction) {
	p.mu.Lock()
	p.onQuery = fn
	p.mu.Unlock()
}

func (p *PGProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = client.Close()
			select {
			case p.refused <- struct{}{}:
			default:
			}
			continue
		}
		server, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxyConn{client: client, server: server, swallow: make(chan struct{})}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.toServer(c)
		go p.toClient(c)
	}
}

// toClient copies the server's bytes to the client, unless told to swallow the next answer.
func (p *PGProxy) toClient(c *proxyConn) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			select {
			case <-c.swallow:
				return // the server answered the query; the client never hears of it
			default:
			}
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// toServer copies the client's messages to the server one by one, applying OnQuery to
// simple queries.
func (p *PGProxy) toServer(c *proxyConn) {
	defer c.close()
	if err := forwardStartup(c.client, c.server); err != nil {
		return
	}
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(c.client, head); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.client, body); err != nil {
			return
		}
		action := Forward
		if head[0] == 'Q' {
			p.mu.Lock()
			fn := p.onQuery
			p.mu.Unlock()
			if fn != nil {
				action = fn(strings.TrimRight(string(body), "\x00"))
			}
		}
		switch action {
		case CutBefore:
			return
		case CutAfter:
			close(c.swallow)
		}
		if _, err := c.server.Write(append(head, body...)); err != nil {
			return
		}
		if action == CutAfter {
			// Wait for the answer (toClient drops it and closes the link).
			_, _ = io.Copy(io.Discard, c.client)
			return
		}
	}
}

// forwardStartup passes on the untyped messages that open a connection: SSL or GSS
// encryption requests (answered by the server with one byte) and the startup message.
func forwardStartup(client, server net.Conn) error {
	for {
		var head [8]byte
		if _, err := io.ReadFull(client, head[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(head[:4]))
		if n < 8 || n > 1<<16 {
			return errors.New("testenv: proxy: bad startup message")
		}
		rest := make([]byte, n-8)
		if _, err := io.ReadFull(client, rest); err != nil {
			return err
		}
		if _, err := server.Write(append(head[:], rest...)); err != nil {
			return err
		}
		switch binary.BigEndian.Uint32(head[4:]) {
		case 80877103, 80877104: // SSLRequest, GSSENCRequest: another untyped message follows
			continue
		}
		return nil
	}
}
