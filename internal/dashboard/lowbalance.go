package dashboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/credits"
)

// LowBalanceShare is the part of a period's credits under which the balance sends the
// low-balance e-mail: below a tenth.
const LowBalanceShare = 10

// CheckLowBalance e-mails the account once per credit period when its balance has fallen
// below a tenth of the period's credits, unless it turned the e-mail off. It runs after
// every committed credit change of the API process (the ledger's OnChange): only a
// reservation lowers a balance, and every reservation is made there.
//
// One conditional UPDATE claims the period's e-mail: concurrent charges each run it, the
// row lock orders them, and only the first finds the period not yet claimed, so exactly one
// e-mail is queued. If it cannot be queued the claim is given back, for the next charge.
func (d *Dashboard) CheckLowBalance(ctx context.Context, accountID uuid.UUID) {
	// The charge is committed: a caller gone away must not skip its check.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var email string
	var balance, allowance int
	var periodStart, periodEnd time.Time
	err := d.Pool.QueryRow(ctx, `
		WITH b AS (SELECT `+credits.BalanceSQL("$1::uuid", "$2")+` AS n)
		UPDATE accounts a SET low_balance_alerted_for = a.period_start
		FROM b
		WHERE a.id = $1 AND a.low_balance_alerts
			AND a.low_balance_alerted_for IS DISTINCT FROM a.period_start
			AND a.credits_monthly > 0
			AND b.n * $3 < CASE a.billing_cycle WHEN 'annual' THEN 12 * a.credits_monthly ELSE a.credits_monthly END
		RETURNING a.email, b.n, CASE a.billing_cycle WHEN 'annual' THEN 12 * a.credits_monthly ELSE a.credits_monthly END,
			a.period_start, a.period_end`, accountID, d.Clock.Now(), LowBalanceShare).
		Scan(&email, &balance, &allowance, &periodStart, &periodEnd)
	if errors.Is(err, pgx.ErrNoRows) {
		return
	}
	if err != nil {
		d.Log.Error("dashboard: low-balance check", "account_id", accountID, "err", err)
		return
	}
	body := fmt.Sprintf("Your ContentAPI balance is %d credits, less than a tenth of the %d credits of your current period.\n\n"+
		"Your credits renew on %s. To get more now, change your plan:\n%s/billing\n\n"+
		"See where your credits went:\n%s/usage\n\n"+
		"This e-mail is sent at most once per credit period. To stop it, turn it off on the usage page.\n",
		balance, allowance, periodEnd.UTC().Format("2 January 2006"), d.URL, d.URL)
	if err := d.Mailer.Send(ctx, email, "Your ContentAPI credits are running low", body); err != nil {
		d.Log.Error("dashboard: low-balance e-mail not queued; the next charge tries again", "account_id", accountID, "err", err)
		_, err := d.Pool.Exec(ctx, `
			UPDATE accounts SET low_balance_alerted_for = NULL WHERE id = $1 AND low_balance_alerted_for = $2`, accountID, periodStart)
		if err != nil {
			d.Log.Error("dashboard: low-balance claim not released", "account_id", accountID, "err", err)
		}
	}
}

func (d *Dashboard) alertsOn(ctx context.Context, accountID uuid.UUID) (bool, error) {
	var on bool
	err := d.Pool.QueryRow(ctx, `SELECT low_balance_alerts FROM accounts WHERE id = $1`, accountID).Scan(&on)
	if err != nil {
		return false, fmt.Errorf("dashboard: read alert setting: %w", err)
	}
	return on, nil
}

// setAlerts turns the low-balance e-mail on or off (the usage page's form).
func (d *Dashboard) setAlerts(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	on := c.FormValue("low_balance_alerts") != ""
	if _, err := d.Pool.Exec(c.UserContext(), `UPDATE accounts SET low_balance_alerts = $2 WHERE id = $1`, s.Account.ID, on); err != nil {
		return fmt.Errorf("dashboard: save alert setting: %w", err)
	}
	state := "off"
	if on {
		state = "on"
	}
	return c.Redirect(Path+"/usage?alerts="+state+"#alerts", fiber.StatusSeeOther)
}
