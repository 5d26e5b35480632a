package job_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

// charged is a result priced by what it holds (job.Charged).
type charged struct {
	Rows   int `json:"rows"`
	credit int
}

func (c charged) Charge() (int, bool) { return c.credit, true }

// A job reserves the price of its limit and settles what its result costs: the rest goes
// back to the balance at once, the job's cost and its reservation say what was charged, and
// a result that costs nothing ends the job succeeded with its reservation refunded.
func TestCompleteSettlesTheCharge(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	acc := h.account(t, 0) // 50 credits
	ctx := context.Background()
	submit := func(topic string, cost int) job.Job {
		sub := submission(acc, topic)
		sub.Cost = cost
		j, err := h.jobs.Submit(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	cases := []struct {
		reserved, charge, want int
		reservation            string
	}{
		{25, 5, 5, "settled"},   // 1,000 rows asked, under 100 returned
		{25, 25, 25, "settled"}, // all of it
		{15, 40, 15, "settled"}, // never more than reserved
		{5, 0, 0, "refunded"},   // an empty later page
	}
	for i, c := range cases {
		before := balance(t, acc)
		j := submit(fmt.Sprint("charge ", i), c.reserved)
		if b := balance(t, acc); b != before-c.reserved {
			t.Fatalf("case %d: balance %d after reserving %d from %d", i, b, c.reserved, before)
		}
		ok, err := h.jobs.Complete(ctx, j.ID, charged{Rows: 1, credit: c.charge})
		if err != nil || !ok {
			t.Fatalf("case %d: complete %v %v", i, ok, err)
		}
		if b := balance(t, acc); b != before-c.want {
			t.Errorf("case %d: balance %d after a charge of %d, want %d", i, b, c.charge, before-c.want)
		}
		got, err := h.jobs.Get(ctx, acc, j.ID)
		if err != nil || got.Cost != c.want || got.Status != job.Succeeded {
			t.Errorf("case %d: job %s cost %d (%v), want succeeded costing %d", i, got.Status, got.Cost, err, c.want)
		}
		if s, r := state(t, j.ID); s != job.Succeeded || r != c.reservation {
			t.Errorf("case %d: job %s, reservation %s; want succeeded, %s", i, s, r, c.reservation)
		}
		// A second completion changes nothing.
		if ok, err := h.jobs.Complete(ctx, j.ID, charged{credit: 0}); ok || err != nil {
			t.Errorf("case %d: second complete %v %v", i, ok, err)
		}
	}
	if b := checkLedger(t, acc); b != 50-5-25-15 {
		t.Fatalf("balance %d, want %d", b, 50-5-25-15)
	}
}

// A partial charge takes what it keeps from the grants that expire first, as a reservation
// of that amount would have: the credits given back return to the grants that expire last.
func TestChargeKeepsTheSoonestCredits(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	acc := h.account(t, 40) // 50 free credits expiring in a month, 40 expiring in a day
	ctx := context.Background()
	sub := submission(acc, "keep")
	sub.Cost = 60 // draws the 40 first, then 20 of the 50
	j, err := h.jobs.Submit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.jobs.Complete(ctx, j.ID, charged{credit: 30}); err != nil || !ok {
		t.Fatalf("complete %v %v", ok, err)
	}
	rows, err := testenv.Postgres(t).Query(ctx, `SELECT source, amount, remaining FROM credit_grants WHERE account_id = $1 ORDER BY expires_at`, acc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var src string
		var amount, remaining int
		if err := rows.Scan(&src, &amount, &remaining); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d/%d", remaining, amount))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// 30 kept: all from the 40 expiring first (10 of them back); the 20 drawn from the 50 back.
	if fmt.Sprint(got) != "[10/40 50/50]" {
		t.Errorf("grants (remaining/amount, soonest expiry first) %v, want [10/40 50/50]", got)
	}
	if b := checkLedger(t, acc); b != 60 {
		t.Fatalf("balance %d, want 60", b)
	}
}
