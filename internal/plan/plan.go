// Package plan holds the plans (docs/api.md): credits, rate limits and prices.
package plan

import "fmt"

// Plan is one subscription tier.
type Plan struct {
	Name           string
	CreditsMonthly int
	RateLimit      int   // requests per minute
	PriceMonthly   int64 // cents, USD
	PriceAnnual    int64 // cents, USD
	Rank           int   // orders plans for upgrade/downgrade decisions
}

// The plans. Enterprise is a custom arrangement: its numbers are set per account.
var (
	Free       = Plan{Name: "free", CreditsMonthly: 50, RateLimit: 10, Rank: 0}
	Pro        = Plan{Name: "pro", CreditsMonthly: 1000, RateLimit: 60, PriceMonthly: 4900, PriceAnnual: 49000, Rank: 1}
	Scale      = Plan{Name: "scale", CreditsMonthly: 5000, RateLimit: 120, PriceMonthly: 19900, PriceAnnual: 199000, Rank: 2}
	Enterprise = Plan{Name: "enterprise", CreditsMonthly: 0, RateLimit: 300, Rank: 3}
)

// Lookup returns the plan with the given name.
func Lookup(name string) (Plan, error) {
	switch name {
	case "free":
		return Free, nil
	case "pro":
		return Pro, nil
	case "scale":
		return Scale, nil
	case "enterprise":
		return Enterprise, nil
	}
	return Plan{}, fmt.Errorf("unknown plan %q", name)
}

// RolloverCap is the most credits a paid account may hold: three monthly allocations.
func (p Plan) RolloverCap() int { return 3 * p.CreditsMonthly }

// RateLimitText is the "<n> requests/minute" form of the registration answer.
func RateLimitText(n int) string { return fmt.Sprintf("%d requests/minute", n) }
