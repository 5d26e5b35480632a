package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/ratelimit"
)

// Admission without a Redis round trip per request.
//
// Each replica leases slots of an account's rate limit from Redis in batches and admits
// requests against its lease in memory. Redis keeps, per account, the leases granted in the
// last window (a sorted set scored by when each lease leaves the window) and their sum; a
// lease is granted only from what the limit leaves, so the replicas together never admit
// more than the limit in any window: a slot leased at time t may be used until t + leaseTTL,
// and counts until t + leaseTTL + Window. The lease's first slot is used at once by the
// request that asked for it, and counts until t + Window, as one admission always did.
// Slots a replica did not use are handed back when its lease ends early (a push from
// another replica) or is replaced. The account's state (plan, limit, period end, revoked
// keys, state version) comes with each lease, so a replica acts on state at most leaseTTL
// old; changes are also pushed on gateChannel, which replicas apply at once.

// leaseTTL is how long a replica may use a lease's slots, and so the oldest account state
// (plan, limit, revoked keys) it acts on when a push is lost.
const leaseTTL = time.Second

// leaseFill is how many of an account's requests, counted in time at its recent rate, a
// lease is sized for: a busy account takes a lease about twice a second, half the time a
// replica may use it (leaseTTL).
const leaseFill = 500 * time.Millisecond

// leaseShare caps a lease at 1/leaseShare of the limit (at least one slot), so one replica
// does not take what other replicas' requests need.
const leaseShare = 20

// denyHold is how long a replica answers an account's requests with 429 from memory after
// Redis refused a lease, before it asks again (slots another replica hands back may free
// sooner than the oldest lease leaves the window).
const denyHold = 250 * time.Millisecond

// gateChannel carries account changes to every replica: "<account> - <origin>" drops the
// replica's state and lease for the account (plan, limit or period changed, a key revoked),
// "<account> <version> <origin>" sets its state version (credits changed). origin is the
// publishing gate's id (empty from the worker): a gate applies its own changes at once and
// ignores their echo, which would otherwise drop a lease taken since.
const gateChannel = "gate:accounts"

// leaseScript grants a lease of up to ARGV[3] slots from the account's window and returns
// the account's state with it. KEYS: the state hash, the leases' sorted set, the leases'
// counters (sum "n", sequence "seq"). ARGV: the presenting key's id, window µs, slots
// wanted, lease µs, then any number of hand-backs (entry, when it leaves the window, unused
// slots), applied first as returnScript would, so slots this replica gives up are free
// before the grant is counted. Reply: {status, limit, remaining, reset_us, period_end, plan, version,
// granted, member, member_expires, revoked key ids...}; status is 0 state missing (fill and
// retry), 1 granted, 2 limited, 3 key revoked. member is the lease's entry for slots
// beyond the first ("" when none), which a replica hands back with returnScript.
var leaseScript = redis.NewScript(handBackLua(5, 2, 3) + `
local h = redis.call('HGETALL', KEYS[1])
local st, revs, mine = {}, {}, 'rev:' .. ARGV[1]
for i = 1, #h, 2 do
	local f = h[i]
	if f == mine then return {3} end
	if string.sub(f, 1, 4) == 'rev:' then revs[#revs + 1] = string.sub(f, 5) else st[f] = h[i + 1] end
end
if not st.lim or not st.pe or not st.plan or not st.ver then return {0} end
local limit, window_us, want, lease_us = tonumber(st.lim), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = tonumber(redis.call('HGET', KEYS[3], 'n') or '0')
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, m in ipairs(gone) do n = n - tonumber(string.match(m, ':(%d+)$')) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
if n < 0 or redis.call('ZCARD', KEYS[2]) == 0 then n = 0 end
local grant = math.max(0, math.min(want, limit - n))
local member, expires = '', now + lease_us + window_us
if grant > 0 then
	local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
	redis.call('ZADD', KEYS[2], now + window_us, seq .. 'a:1')
	if grant > 1 then
		member = seq .. 'b:' .. (grant - 1)
		redis.call('ZADD', KEYS[2], expires, member)
	end
	n = n + grant
end
redis.call('HSET', KEYS[3], 'n', n)
local ttl = math.ceil((lease_us + window_us) / 1000) + 1000
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
local reset = 0
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then reset = tonumber(first[2]) - now end
local status = 2
if grant > 0 then status = 1 end
local out = {status, limit, limit - n, reset, st.pe, st.plan, st.ver, grant, member, expires}
for _, id in ipairs(revs) do out[#out + 1] = id end
return out
`)

// returnScript hands back ARGV[3] unused slots of lease entry ARGV[1] (which leaves the
// window at ARGV[2]); an entry that already left the window is not counted any more, and
// an entry handed back once is not found again, so a second hand-back does nothing.
var returnScript = redis.NewScript(handBackLua(1, 1, 2) + "return 1\n")

// handBackLua is the Lua that applies the hand-backs (entry, when it leaves the window,
// unused slots) in ARGV from index first on, the leases' sorted set being KEYS[set] and
// their counters KEYS[counters]: an entry found is replaced by one holding the slots left
// (none: removed) and the sum lowered by those handed back.
func handBackLua(first, set, counters int) string {
	return fmt.Sprintf(`for i = %[1]d, #ARGV - 2, 3 do
	if redis.call('ZREM', KEYS[%[2]d], ARGV[i]) == 1 then
		local id, count = string.match(ARGV[i], '^(.*):(%%d+)$')
		local left = tonumber(count) - tonumber(ARGV[i + 2])
		if left > 0 then redis.call('ZADD', KEYS[%[2]d], ARGV[i + 1], id .. ':' .. left) end
		redis.call('HINCRBY', KEYS[%[3]d], 'n', -tonumber(ARGV[i + 2]))
	end
end
`, first, set, counters)
}

func leaseKeys(account uuid.UUID) []string {
	id := account.String()
	return []string{"acct:{" + id + "}", "rlz:{" + id + "}", "rln:{" + id + "}"}
}

// account is one account's state and lease in this replica.
type account struct {
	id uuid.UUID
	mu sync.Mutex

	loaded    bool      // the fields below hold a lease reply
	ends      time.Time // when the state and the lease's slots may no longer be used
	limit     int
	periodEnd int64
	plan      string
	version   string
	revoked   map[uuid.UUID]struct{}

	left       int    // slots of the lease not used yet
	member     string // the lease's entry for slots beyond the first, to hand back unused ones
	memberExp  int64  // when that entry leaves the window (Redis µs)
	memberN    int    // slots the entry holds: the lease's less its first
	free       int    // slots the limit left unleased at the lease
	resetAt    time.Time
	deniedTill time.Time // refused: answer 429 from memory until then

	// demand counts requests since the last lease, for sizing the next one.
	demand   int
	leasedAt time.Time

	endAfterUse bool // the lease ends when its last slot is used (a push dropped it)

	// owed are slots handed back in the background, not known to have reached Redis: the
	// next lease hands them back again, in its own call, so they are free before it is
	// granted (a lease asked for at once would otherwise count them against a new limit).
	owed []handedBack

	fetching chan struct{} // closed when the lease being asked for is in
	pushes   int           // pushes received; a lease asked for before one is not trusted
	dropped  bool          // a push dropped the state while a lease was being asked for
}

// admission holds this replica's accounts.
type admission struct {
	g        *Gate
	window   time.Duration  // the limit's window: Window (tests shorten it)
	accounts sync.Map       // uuid.UUID → *account
	handing  sync.WaitGroup // slots being handed back (close waits for them)

	// backLate, when set, runs before each background hand-back is sent (tests hold it
	// back to let the next lease overtake it).
	backLate func()
}

// get returns the account's state, created empty the first time.
func (a *admission) get(id uuid.UUID) *account {
	if v, ok := a.accounts.Load(id); ok {
		return v.(*account)
	}
	v, _ := a.accounts.LoadOrStore(id, &account{id: id})
	return v.(*account)
}

// admit admits one request of p's account (presented with p's key; uuid.Nil for none) from
// the replica's lease, asking Redis for a new lease when it is used up or ended, and returns
// the account's period end (Unix seconds). It fills p's plan and state version.
func (a *admission) admit(ctx context.Context, p *Principal) (ratelimit.Decision, int64, error) {
	acc := a.get(p.AccountID)
	acc.mu.Lock()
	acc.demand++
	for {
		now := time.Now()
		if acc.loaded && now.Before(acc.ends) {
			if _, gone := acc.revoked[p.KeyID]; gone && p.KeyID != uuid.Nil {
				acc.mu.Unlock()
				return ratelimit.Decision{}, 0, invalidKey()
			}
			if acc.left > 0 || now.Before(acc.deniedTill) {
				d := acc.decision(now)
				if d.Allowed {
					acc.left--
					if acc.left == 0 && acc.endAfterUse {
						acc.ends = now
					}
				}
				p.Plan, p.StateVersion = acc.plan, acc.version
				end := acc.periodEnd
				acc.mu.Unlock()
				return d, end, nil
			}
		}
		if acc.fetching != nil {
			wait := acc.fetching
			acc.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return ratelimit.Decision{}, 0, ctx.Err()
			}
			acc.mu.Lock()
			continue
		}
		if err := a.lease(ctx, acc, p.KeyID, now); err != nil {
			acc.mu.Unlock()
			return ratelimit.Decision{}, 0, err
		}
		if _, gone := acc.revoked[p.KeyID]; gone && p.KeyID != uuid.Nil {
			acc.mu.Unlock()
			return ratelimit.Decision{}, 0, invalidKey()
		}
	}
}

// decision is the answer to a request admitted (or refused) from memory at now; a slot is
// counted by the caller. Remaining counts the slots the limit left unleased at the lease
// and this replica's own unused ones, less the one this request takes.
func (acc *account) decision(now time.Time) ratelimit.Decision {
	d := ratelimit.Decision{Allowed: acc.left > 0, Limit: acc.limit, Reset: max(0, acc.resetAt.Sub(now))}
	if d.Allowed {
		d.Remaining = max(0, acc.free+acc.left-1)
	}
	return d
}

// lease asks Redis for a lease for acc, with acc.mu held on entry and on return (released
// while the call is out; other requests of the account wait for it). It returns with acc
// loaded, or with the key marked revoked, or an error.
func (a *admission) lease(ctx context.Context, acc *account, key uuid.UUID, now time.Time) error {
	want := 1
	if !acc.leasedAt.IsZero() && acc.limit > 0 {
		elapsed := max(now.Sub(acc.leasedAt), 10*time.Millisecond)
		rate := float64(acc.demand) / elapsed.Seconds()
		want = int(math.Ceil(rate * leaseFill.Seconds()))
		want = max(1, min(want, acc.limit/leaseShare))
	}
	back := acc.owed
	if h := acc.handBack(); h.slots > 0 {
		back = append(back, h)
	}
	acc.owed = nil
	done := make(chan struct{})
	acc.fetching, acc.dropped = done, false
	pushes := acc.pushes
	acc.mu.Unlock()

	sent := time.Now()
	reply, err := a.run(ctx, acc.id, key, want, back)

	acc.mu.Lock()
	acc.fetching = nil
	close(done)
	if err != nil {
		for _, h := range back {
			a.giveBack(acc, h)
		}
		return err
	}
	if status, _ := reply[0].(int64); status == 3 {
		if acc.revoked == nil {
			acc.revoked = map[uuid.UUID]struct{}{}
		}
		acc.revoked[key] = struct{}{}
		return nil
	}
	if err := acc.apply(reply, sent); err != nil {
		return err
	}
	acc.demand, acc.leasedAt = 0, sent
	if acc.pushes != pushes {
		// A push arrived while the lease was asked for: the state read with it may be
		// older than the push, so its version is not trusted, and a dropped state serves
		// only the request that asked (as if it had come just before the change, which
		// it did not wait for) and is asked for again at the next one; the lease's other
		// slots go back.
		acc.version = ""
		if acc.dropped && acc.left > 0 {
			a.giveBack(acc, acc.handBackBeyond(1))
			acc.endAfterUse = true
		} else if acc.dropped {
			acc.ends = sent
		}
	}
	return nil
}

// run calls leaseScript with the hand-backs back, filling the account's state from the
// database when Redis has none.
func (a *admission) run(ctx context.Context, id, key uuid.UUID, want int, back []handedBack) ([]any, error) {
	keys := leaseKeys(id)
	args := make([]any, 0, 4+3*len(back))
	args = append(args, key.String(), a.window.Microseconds(), want, leaseTTL.Microseconds())
	for _, h := range back {
		args = append(args, h.member, h.exp, h.slots)
	}
	for attempt := 0; ; attempt++ {
		reply, err := a.g.batch.Run(ctx, keys, args...)
		if err != nil {
			return nil, fmt.Errorf("auth: gate: %w", err)
		}
		status, _ := reply[0].(int64)
		if status != 0 {
			return reply, nil
		}
		if attempt > 0 {
			return nil, errors.New("auth: account state missing after fill")
		}
		if err := a.g.fill(ctx, id); err != nil {
			return nil, err
		}
	}
}

// apply loads a lease reply, asked for at sent.
func (acc *account) apply(reply []any, sent time.Time) error {
	if len(reply) < 10 {
		return fmt.Errorf("auth: lease reply %v", reply)
	}
	d, err := ratelimit.ParseReply(reply)
	if err != nil {
		return err
	}
	granted, _ := reply[7].(int64)
	acc.loaded = true
	acc.ends = sent.Add(leaseTTL)
	acc.limit, acc.free = d.Limit, d.Remaining
	acc.resetAt = sent.Add(d.Reset)
	acc.periodEnd = periodEnd(reply[4])
	acc.plan, _ = reply[5].(string)
	acc.version, _ = reply[6].(string)
	acc.left = int(granted)
	acc.member, _ = reply[8].(string)
	acc.memberExp, _ = reply[9].(int64)
	acc.memberN = max(0, int(granted)-1)
	acc.revoked = nil
	for _, v := range reply[10:] {
		s, _ := v.(string)
		if id, err := uuid.Parse(s); err == nil {
			if acc.revoked == nil {
				acc.revoked = map[uuid.UUID]struct{}{}
			}
			acc.revoked[id] = struct{}{}
		}
	}
	acc.deniedTill, acc.endAfterUse = time.Time{}, false
	if granted == 0 {
		acc.deniedTill = sent.Add(min(denyHold, d.Reset))
	}
	return nil
}

// handedBack is a lease's unused slots, to hand back to Redis.
type handedBack struct {
	member string
	exp    int64
	slots  int
}

// handBack ends acc's lease (acc.mu held) and returns its slots not used, as far as its
// entry for the slots beyond the first holds them: a first slot not used (the lease was
// dropped before its request took it) stays counted until it leaves the window, as if
// used. Slots of a lease that has ended by time were given up with it (the holder may no
// longer use them), and are handed back as well.
func (acc *account) handBack() handedBack { return acc.handBackBeyond(0) }

// handBackBeyond hands back the lease's unused slots but keep, which acc goes on using.
func (acc *account) handBackBeyond(keep int) handedBack {
	h := handedBack{member: acc.member, exp: acc.memberExp, slots: min(acc.left-keep, acc.memberN)}
	acc.left = min(acc.left, keep)
	acc.memberN -= max(h.slots, 0)
	if keep == 0 {
		acc.member, acc.memberN = "", 0
	}
	if h.member == "" || h.slots < 0 {
		h.slots = 0
	}
	return h
}

// giveBack hands unused slots back to Redis, in the background (acc.mu held): the answer
// is not waited for, and the slots are owed to acc's next lease, which hands them back
// again; a failure of both leaves them counted until their entry leaves the window.
func (a *admission) giveBack(acc *account, h handedBack) {
	if h.slots <= 0 {
		return
	}
	acc.owed = append(acc.owed, h)
	id := acc.id
	keys := leaseKeys(id)
	a.handing.Add(1)
	go func() {
		defer a.handing.Done()
		if a.backLate != nil {
			a.backLate()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := returnScript.Run(ctx, a.g.rdb, keys[1:], h.member, h.exp, h.slots).Err(); err != nil {
			a.g.log.Debug("gate: unused rate-limit slots not handed back", "account_id", id, "err", err)
		}
	}()
}

// pushed applies a change pushed on gateChannel (or made by this replica).
func (a *admission) pushed(id uuid.UUID, version string) {
	v, ok := a.accounts.Load(id)
	if !ok {
		return
	}
	acc := v.(*account)
	acc.mu.Lock()
	acc.pushes++
	if version != "" {
		acc.version = version
	} else {
		acc.loaded, acc.dropped = false, true
		a.giveBack(acc, acc.handBack())
	}
	acc.mu.Unlock()
}

// listen applies the changes other replicas and the worker push, until ctx ends. A push
// lost while the subscription reconnects is made up for by leaseTTL.
func (a *admission) listen(ctx context.Context, ps *redis.PubSub) {
	ch := ps.Channel(redis.WithChannelSize(1024))
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			f := strings.Fields(m.Payload)
			if len(f) < 2 || len(f) > 2 && f[2] == a.g.id {
				continue // malformed, or this gate's own, applied when it was made
			}
			if id, err := uuid.Parse(f[0]); err == nil {
				version := f[1]
				if version == "-" {
					version = ""
				}
				a.pushed(id, version)
			}
		case <-sweep.C:
			a.sweep(time.Now())
		}
	}
}

// sweep forgets accounts whose lease ended a window ago: they have made no request since.
func (a *admission) sweep(now time.Time) {
	a.accounts.Range(func(k, v any) bool {
		acc := v.(*account)
		acc.mu.Lock()
		idle := acc.fetching == nil && now.Sub(acc.ends) > a.window
		acc.mu.Unlock()
		if idle {
			a.accounts.CompareAndDelete(k, v)
		}
		return true
	})
}

// publishChange queues the push of an account change on pipe: a drop ("" version) or a new
// state version, from origin (a gate's id; "" for a process without one).
func publishChange(ctx context.Context, pipe redis.Pipeliner, account uuid.UUID, version, origin string) {
	pipe.Publish(ctx, gateChannel, account.String()+" "+cmp.Or(version, "-")+" "+origin)
}
