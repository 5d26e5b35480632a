package billing

import (
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
)

func TestFormatUSD(t *testing.T) {
	for cents, want := range map[int64]string{
		0: "$0.00", 5: "$0.05", 4900: "$49.00", 49000: "$490.00", 19900: "$199.00",
		199000: "$1,990.00", 123456789: "$1,234,567.89", -4900: "-$49.00",
	} {
		if got := formatUSD(cents); got != want {
			t.Errorf("formatUSD(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestIsUpgrade(t *testing.T) {
	cases := []struct {
		cur, curCycle, next, nextCycle string
		want                           bool
	}{
		{"free", Monthly, "pro", Monthly, true},
		{"pro", Monthly, "scale", Monthly, true},
		{"pro", Annual, "scale", Monthly, true},
		{"pro", Monthly, "pro", Annual, true},
		{"scale", Monthly, "pro", Monthly, false},
		{"scale", Monthly, "pro", Annual, false},
		{"pro", Annual, "pro", Monthly, false},
		{"pro", Monthly, "pro", Monthly, false},
	}
	for _, c := range cases {
		if got := isUpgrade(c.cur, c.curCycle, c.next, c.nextCycle); got != c.want {
			t.Errorf("%s/%s -> %s/%s: %v", c.cur, c.curCycle, c.next, c.nextCycle, got)
		}
	}
}

func TestPrices(t *testing.T) {
	p := Prices{ProMonthly: "a", ProAnnual: "b", ScaleMonthly: "c", ScaleAnnual: "d"}
	for id, want := range map[string][2]string{"a": {"pro", Monthly}, "b": {"pro", Annual}, "c": {"scale", Monthly}, "d": {"scale", Annual}} {
		pl, cy, ok := p.Lookup(id)
		if !ok || pl != want[0] || cy != want[1] || p.ID(pl, cy) != id {
			t.Errorf("%s: %s %s %v", id, pl, cy, ok)
		}
	}
	if _, _, ok := p.Lookup(""); ok {
		t.Error("empty price id matched")
	}
	if _, _, ok := (Prices{}).Lookup("x"); ok {
		t.Error("unknown price matched")
	}
}

func TestUsablePromotion(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	cus := "cus_a"
	acct := billingAccount{CustomerID: &cus}
	base := func() *stripe.PromotionCode {
		return &stripe.PromotionCode{ID: "promo", Code: "X", Active: true,
			Coupon: &stripe.Coupon{Valid: true, PercentOff: 25}}
	}
	cases := []struct {
		name string
		edit func(*stripe.PromotionCode)
		ok   bool
		off  int64
	}{
		{"percent", func(*stripe.PromotionCode) {}, true, 1225},
		{"inactive", func(p *stripe.PromotionCode) { p.Active = false }, false, 0},
		{"expired", func(p *stripe.PromotionCode) { p.ExpiresAt = now.Unix() }, false, 0},
		{"coupon redeem_by passed", func(p *stripe.PromotionCode) { p.Coupon.RedeemBy = now.Add(-time.Second).Unix() }, false, 0},
		{"used up", func(p *stripe.PromotionCode) { p.MaxRedemptions, p.TimesRedeemed = 5, 5 }, false, 0},
		{"other customer", func(p *stripe.PromotionCode) { p.Customer = &stripe.Customer{ID: "cus_b"} }, false, 0},
		{"own customer", func(p *stripe.PromotionCode) { p.Customer = &stripe.Customer{ID: "cus_a"} }, true, 1225},
		{"minimum not met", func(p *stripe.PromotionCode) {
			p.Restrictions = &stripe.PromotionCodeRestrictions{MinimumAmount: 10000, MinimumAmountCurrency: "usd"}
		}, false, 0},
		{"amount off over price", func(p *stripe.PromotionCode) {
			p.Coupon = &stripe.Coupon{Valid: true, AmountOff: 10000, Currency: "usd"}
		}, true, 4900},
		{"no coupon", func(p *stripe.PromotionCode) { p.Coupon = nil }, false, 0},
		{"coupon with nothing off", func(p *stripe.PromotionCode) { p.Coupon = &stripe.Coupon{Valid: true} }, false, 0},
	}
	for _, c := range cases {
		pc := base()
		c.edit(pc)
		d, ok := usablePromotion(pc, 4900, acct, now)
		if ok != c.ok || d.DiscountAmount != c.off {
			t.Errorf("%s: %+v %v", c.name, d, ok)
		}
	}
}
