package httpapi

import (
	"time"

	"github.com/google/uuid"
	"github.com/jellydator/ttlcache/v3"
)

// usageCache holds usage answers for 30 s at most, in case a change notification was lost.
// Its janitor is never started (an expired answer is not returned, and newer ones push it
// out), so a server leaves no goroutine behind; golang-lru's expirable LRU, used before,
// started one per server that nothing could stop.
type usageCache struct {
	c *ttlcache.Cache[uuid.UUID, usageEntry]
}

func newUsageCache() usageCache {
	return usageCache{ttlcache.New(ttlcache.WithCapacity[uuid.UUID, usageEntry](100_000),
		ttlcache.WithTTL[uuid.UUID, usageEntry](30*time.Second), ttlcache.WithDisableTouchOnHit[uuid.UUID, usageEntry]())}
}

// Get returns the account's answer unless it is missing or expired.
func (u usageCache) Get(id uuid.UUID) (usageEntry, bool) {
	if item := u.c.Get(id); item != nil {
		return item.Value(), true
	}
	return usageEntry{}, false
}

// Add stores the account's answer for the next 30 s.
func (u usageCache) Add(id uuid.UUID, e usageEntry) { u.c.Set(id, e, ttlcache.DefaultTTL) }
