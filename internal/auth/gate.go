package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jellydator/ttlcache/v3"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/ratelimit"
)

// Window is the rate-limit window: plans state their limits per minute.
const Window = time.Minute

// accountStateTTL is how long Redis keeps an account's state after it was last written;
// replicas read it with every lease (admission.go), at most leaseTTL apart.
const accountStateTTL = 60 * time.Second

// fillScript writes an account's state without overwriting fields pushed meanwhile by
// Refresh or Revoked, so a fill that read the database before a change cannot undo it.
var fillScript = redis.NewScript(`
for i = 1, #ARGV - 1, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[#ARGV]))
return 1
`)

// Principal is the authenticated caller.
type Principal struct {
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Plan      string
	// StateVersion is a token that changes whenever the account's credits or plan change,
	// so answers derived from them can be cached until it does.
	StateVersion string
}

type keyInfo struct {
	id, account uuid.UUID
	expires     *time.Time
	revoked     bool
}

// Gate authenticates bearer keys and applies per-account rate limits. Key facts that never
// change (owner, expiry) are cached in process; whether a key is revoked and the account's
// plan live in Redis, shared by every replica, and come to each replica with the leases of
// rate-limit slots it admits requests from (admission.go).
type Gate struct {
	pool   *pgxpool.Pool
	rdb    redis.UniversalClient
	ledger *credits.Ledger
	clock  clock.Clock
	log    *slog.Logger

	keys    *ttlcache.Cache[[sha256.Size]byte, keyInfo] // by the key's digest
	unknown *ttlcache.Cache[[sha256.Size]byte, struct{}]

	mu       sync.Mutex
	lastUsed map[uuid.UUID]keyUse

	batch *scriptBatcher
	adm   *admission
	id    string // tells this gate's pushes from other replicas' (gateChannel)
	stop  func() // ends the push listener
	sub   *redis.PubSub
	done  chan struct{}
}

// NewGate returns a gate; Close stops its goroutines.
func NewGate(pool *pgxpool.Pool, rdb redis.UniversalClient, ledger *credits.Ledger, clk clock.Clock, log *slog.Logger) *Gate {
	g := &Gate{
		pool: pool, rdb: rdb, ledger: ledger, clock: clk, log: log,
		keys:     newTTLCache[[sha256.Size]byte, keyInfo](100_000, 5*time.Minute),
		unknown:  newTTLCache[[sha256.Size]byte, struct{}](10_000, 10*time.Second),
		lastUsed: make(map[uuid.UUID]keyUse),
		batch:    newScriptBatcher(rdb, leaseScript, 2),
		done:     make(chan struct{}),
	}
	g.id = uuid.NewString()
	g.adm = &admission{g: g, window: Window}
	ctx, stop := context.WithCancel(context.Background())
	g.stop = stop
	g.sub = rdb.Subscribe(ctx, gateChannel)
	go func() { defer close(g.done); g.adm.listen(ctx, g.sub) }()
	return g
}

// newTTLCache is a least-recently-used cache of size entries that expire ttl after they were
// stored. Its janitor is never started (expired entries are not returned, and newer ones
// push them out), so the cache owns no goroutine to stop; golang-lru's expirable LRU, used
// before, starts one per cache that nothing can stop.
func newTTLCache[K comparable, V any](size uint64, ttl time.Duration) *ttlcache.Cache[K, V] {
	return ttlcache.New(ttlcache.WithCapacity[K, V](size), ttlcache.WithTTL[K, V](ttl),
		ttlcache.WithDisableTouchOnHit[K, V]())
}

// Close stops the gate's Redis batchers and push listener; calls made after it fail. The
// flusher (RunFlusher) is its caller's to stop.
func (g *Gate) Close() {
	g.stop()
	_ = g.sub.Close()
	<-g.done
	g.adm.handing.Wait()
	g.batch.close()
}

func stateKey(account uuid.UUID) string { return "acct:{" + account.String() + "}" }

// Authenticate checks the Authorization header and admits the request in the account's rate
// limit. The decision is returned with RATE_LIMIT_EXCEEDED too, for the headers.
func (g *Gate) Authenticate(ctx context.Context, header string) (Principal, ratelimit.Decision, error) {
	var d ratelimit.Decision
	if strings.TrimSpace(header) == "" {
		return Principal{}, d, apperr.New(apperr.MissingAuthHeader, "The Authorization header is missing. Send 'Authorization: Bearer <API_KEY>'.")
	}
	scheme, key, ok := strings.Cut(strings.TrimSpace(header), " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, d, invalidKey()
	}
	info, err := g.lookup(ctx, key)
	if err != nil {
		return Principal{}, d, err
	}
	if info.revoked {
		return Principal{}, d, invalidKey()
	}
	now := g.clock.Now()
	if info.expires != nil && !now.Before(*info.expires) {
		return Principal{}, d, apperr.New(apperr.ExpiredAPIKey, "This API key has expired. Create a new key and switch your applications to it.")
	}
	p := Principal{AccountID: info.account, KeyID: info.id}
	d, err = g.admit(ctx, &p, now)
	if err != nil {
		if apperr.CodeOf(err) == apperr.InvalidAPIKey {
			g.keys.Set(keyDigest(key), keyInfo{id: info.id, account: info.account, revoked: true}, ttlcache.DefaultTTL)
		}
		return p, d, err
	}
	g.touch(info.id, now)
	return p, d, nil
}

// Admit admits a call the account makes without a key (an analysis run from the dashboard)
// in the account's rate limit, the window its keys' calls share, and renews a free
// account's ended period as Authenticate does.
func (g *Gate) Admit(ctx context.Context, account uuid.UUID) (ratelimit.Decision, error) {
	p := Principal{AccountID: account}
	return g.admit(ctx, &p, g.clock.Now())
}

// admit admits a request of p's account (and p's key, uuid.Nil for none, which is never
// revoked) in the account's rate limit, from this replica's lease of it, and renews a free
// account's ended period. It fills p's plan and state version.
func (g *Gate) admit(ctx context.Context, p *Principal, now time.Time) (ratelimit.Decision, error) {
	d, end, err := g.adm.admit(ctx, p)
	if err != nil {
		return d, err
	}
	if !d.Allowed {
		return d, &apperr.Error{Code: apperr.RateLimitExceeded, RetryAfter: d.RetryAfterSeconds(),
			Message: fmt.Sprintf("Rate limit of %d requests per minute exceeded. Retry after %d seconds.", d.Limit, d.RetryAfterSeconds())}
	}
	if p.Plan == "free" && !now.Before(time.Unix(end, 0)) {
		if err := g.renew(ctx, p.AccountID); err != nil {
			return d, err
		}
	}
	return d, nil
}

// Verify checks the Authorization header as Authenticate does (a well-formed key, not
// revoked, not expired) without admitting a request in the account's rate limit: the MCP
// endpoint checks the key of every message it receives, and only its tool calls, each
// authenticated again as an API call, count against the limit.
func (g *Gate) Verify(ctx context.Context, header string) (Principal, error) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(header), " ")
	key = strings.TrimSpace(key)
	if strings.TrimSpace(header) == "" {
		return Principal{}, apperr.New(apperr.MissingAuthHeader, "The Authorization header is missing. Send 'Authorization: Bearer <API_KEY>'.")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, invalidKey()
	}
	info, err := g.lookup(ctx, key)
	if err != nil {
		return Principal{}, err
	}
	if info.revoked {
		return Principal{}, invalidKey()
	}
	if info.expires != nil && !g.clock.Now().Before(*info.expires) {
		return Principal{}, apperr.New(apperr.ExpiredAPIKey, "This API key has expired. Create a new key and switch your applications to it.")
	}
	p := Principal{AccountID: info.account, KeyID: info.id}
	for attempt := 0; ; attempt++ {
		st, err := g.rdb.HMGet(ctx, stateKey(info.account), "lim", "rev:"+info.id.String(), "plan").Result()
		if err != nil {
			return p, fmt.Errorf("auth: verify: %w", err)
		}
		if st[1] != nil {
			return p, invalidKey()
		}
		if st[0] != nil || attempt > 0 {
			p.Plan, _ = st[2].(string)
			return p, nil
		}
		if err := g.fill(ctx, info.account); err != nil {
			return p, err
		}
	}
}

// periodEnd reads the period end the gate script returns (a string from the hash).
func periodEnd(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func invalidKey() error {
	return apperr.New(apperr.InvalidAPIKey, "The API key is invalid or has been revoked.")
}

// lookup finds a key by its digest: in the replica's cache, which holds only keys found well
// formed and stored, or else, for a well-formed key, in the database.
func (g *Gate) lookup(ctx context.Context, key string) (keyInfo, error) {
	h := keyDigest(key)
	if item := g.keys.Get(h); item != nil {
		return item.Value(), nil
	}
	if !WellFormed(key) {
		return keyInfo{}, invalidKey()
	}
	if g.unknown.Has(h) {
		return keyInfo{}, invalidKey()
	}
	var info keyInfo
	var revokedAt *time.Time
	err := g.pool.QueryRow(ctx, `SELECT id, account_id, expires_at, revoked_at FROM api_keys WHERE digest = $1`, h[:]).
		Scan(&info.id, &info.account, &info.expires, &revokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		g.unknown.Set(h, struct{}{}, ttlcache.DefaultTTL)
		return keyInfo{}, invalidKey()
	}
	if err != nil {
		return keyInfo{}, fmt.Errorf("auth: look up key: %w", err)
	}
	info.revoked = revokedAt != nil
	g.keys.Set(h, info, ttlcache.DefaultTTL)
	return info, nil
}

// fill loads an account's state from the database into Redis.
func (g *Gate) fill(ctx context.Context, account uuid.UUID) error {
	var planName string
	var limit int
	var periodEnd time.Time
	var revoked []string
	err := g.pool.QueryRow(ctx, `
		SELECT plan, rate_limit, period_end,
			ARRAY(SELECT id::text FROM api_keys WHERE account_id = a.id AND revoked_at IS NOT NULL)
		FROM accounts a WHERE id = $1`, account).Scan(&planName, &limit, &periodEnd, &revoked)
	if err != nil {
		return fmt.Errorf("auth: load account state: %w", err)
	}
	args := []any{"lim", limit, "pe", periodEnd.Unix(), "plan", planName, "ver", uuid.NewString()}
	for _, id := range revoked {
		args = append(args, "rev:"+id, 1)
	}
	args = append(args, int(accountStateTTL.Seconds()))
	if err := fillScript.Run(ctx, g.rdb, []string{stateKey(account)}, args...).Err(); err != nil {
		return fmt.Errorf("auth: store account state: %w", err)
	}
	return nil
}

// Refresh pushes the account's plan, limit and period from the database to Redis,
// overwriting what replicas cached; call it after committing a change.
func (g *Gate) Refresh(ctx context.Context, account uuid.UUID) error {
	var planName string
	var limit int
	var periodEnd time.Time
	err := g.pool.QueryRow(ctx, `SELECT plan, rate_limit, period_end FROM accounts WHERE id = $1`, account).
		Scan(&planName, &limit, &periodEnd)
	if err != nil {
		return fmt.Errorf("auth: load account state: %w", err)
	}
	pipe := g.rdb.TxPipeline()
	pipe.HSet(ctx, stateKey(account), "lim", limit, "pe", periodEnd.Unix(), "plan", planName, "ver", uuid.NewString())
	pipe.Expire(ctx, stateKey(account), accountStateTTL)
	publishChange(ctx, pipe, account, "", g.id)
	_, err = pipe.Exec(ctx)
	g.adm.pushed(account, "") // this replica at once, whatever became of the push
	if err != nil {
		return fmt.Errorf("auth: push account state: %w", err)
	}
	return nil
}

// Changed tells every replica that the account's credits changed (a reservation, settlement,
// refund or grant); call it after committing.
func (g *Gate) Changed(ctx context.Context, account uuid.UUID) error {
	version, err := accountChanged(ctx, g.rdb, account, g.id)
	if err != nil {
		version = "" // unknown: answers built on it are rebuilt until the next lease reads it
	}
	g.adm.pushed(account, version) // this replica at once
	return err
}

// AccountChanged gives the account a new state version in Redis, so cached answers built
// from its credits are rebuilt, and pushes it to every replica. Processes without a Gate
// (the worker) call it directly.
func AccountChanged(ctx context.Context, rdb redis.Cmdable, account uuid.UUID) error {
	_, err := accountChanged(ctx, rdb, account, "")
	return err
}

func accountChanged(ctx context.Context, rdb redis.Cmdable, account uuid.UUID, origin string) (string, error) {
	version := uuid.NewString()
	pipe := rdb.TxPipeline()
	pipe.HSet(ctx, stateKey(account), "ver", version)
	pipe.Expire(ctx, stateKey(account), accountStateTTL)
	publishChange(ctx, pipe, account, version, origin)
	if _, err := pipe.Exec(ctx); err != nil {
		return "", fmt.Errorf("auth: push account change: %w", err)
	}
	return version, nil
}

// Revoked marks a key revoked for every replica; call it after committing the revocation.
func (g *Gate) Revoked(ctx context.Context, account, key uuid.UUID) error {
	pipe := g.rdb.TxPipeline()
	pipe.HSet(ctx, stateKey(account), "rev:"+key.String(), 1)
	pipe.Expire(ctx, stateKey(account), accountStateTTL)
	publishChange(ctx, pipe, account, "", g.id)
	_, err := pipe.Exec(ctx)
	g.adm.pushed(account, "")
	if err != nil {
		return fmt.Errorf("auth: push revocation: %w", err)
	}
	return nil
}

func (g *Gate) renew(ctx context.Context, account uuid.UUID) error {
	if _, _, err := g.ledger.RenewPeriod(ctx, account); err != nil {
		return err
	}
	return g.Refresh(ctx, account)
}

// keyUse is a key's use since the last flush: its latest time and how many calls.
type keyUse struct {
	at    time.Time
	calls int64
}

func (g *Gate) touch(key uuid.UUID, at time.Time) {
	g.mu.Lock()
	u := g.lastUsed[key]
	g.lastUsed[key] = keyUse{at: at, calls: u.calls + 1}
	g.mu.Unlock()
}

// FlushLastUsed writes the keys' last-use times and call counts gathered since the previous
// flush in one statement, so key use costs no database write per request. A failed write
// puts the batch back, so no call goes uncounted.
func (g *Gate) FlushLastUsed(ctx context.Context) error {
	g.mu.Lock()
	batch := g.lastUsed
	g.lastUsed = make(map[uuid.UUID]keyUse, len(batch))
	g.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(batch))
	times := make([]time.Time, 0, len(batch))
	calls := make([]int64, 0, len(batch))
	for id, u := range batch {
		ids = append(ids, id)
		times = append(times, u.at)
		calls = append(calls, u.calls)
	}
	_, err := g.pool.Exec(ctx, `
		UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, v.t), calls = k.calls + v.n
		FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS v(id, t, n) WHERE k.id = v.id`, ids, times, calls)
	if err != nil {
		g.mu.Lock()
		for id, u := range batch {
			cur := g.lastUsed[id]
			if cur.at.Before(u.at) {
				cur.at = u.at
			}
			cur.calls += u.calls
			g.lastUsed[id] = cur
		}
		g.mu.Unlock()
		return fmt.Errorf("auth: flush last use: %w", err)
	}
	return nil
}

// RunFlusher flushes last-use times every interval until ctx ends, then once more.
func (g *Gate) RunFlusher(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := g.FlushLastUsed(flushCtx); err != nil {
				g.log.Error("flush key last use", "err", err)
			}
			cancel()
			return
		case <-t.C:
			if err := g.FlushLastUsed(ctx); err != nil {
				g.log.Error("flush key last use", "err", err)
			}
		}
	}
}
