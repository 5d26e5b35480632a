// Command ctl is the operator's tool: migrations, credit grants, plan changes and keyword
// data imports. It reads DATABASE_URL (and REDIS_URL for grants and plan changes, which the
// running API must hear of) from the environment: they must be the service's own, and an
// error connecting names the one used, its password masked.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/redact"
)

const usage = `usage: ctl <command> [flags]

commands:
  migrate                                   apply pending database migrations
  credits grant --email E --amount N [--expires-in 30d]
                                            grant credits to an account (they last 12 months
                                            unless --expires-in is shorter; never longer)
  plan set --email E --plan P [--rate-limit N] [--credits-monthly N]
                                            put an account without a Stripe subscription on a
                                            plan (enterprise terms included); its monthly credits
                                            are granted now and every month
  import keywords FILE [--country us] [--language en] [--source NAME]
                                            load keyword metrics from a CSV export, plain or gzip (Keyword Planner,
                                            Semrush, Ahrefs, Search Console, or our own columns)
  import rankings FILE [--country us] [--language en] [--source NAME]
                                            load which domain ranks where for which keyword
  seed-sample [--if-empty]                  load the generated, synthetic sample keyword set
  mcp [--url URL]                           serve MCP over stdio for desktop assistants, every
                                            tool call sent to the API at URL (CONTENTAPI_URL,
                                            default http://localhost:8080) with the key in
                                            CONTENTAPI_KEY; needs no database

environment:
  ctl works on the service's data only with the service's own settings: set DATABASE_URL
  (and DATABASE_MIGRATE_URL if the service has it) and REDIS_URL (used by credits grant and
  plan set, so the running API hears of the change) to the values the api and worker run
  with, and the other variables of docs/configuration.md as they have them. Unset, they are
  the defaults of make run: postgres://postgres@127.0.0.1:5432/contentapi?sslmode=disable
  and redis://127.0.0.1:6379/0.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ctl:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(out, usage)
		return nil
	}
	if args[0] == "mcp" { // a client of a running API: no database, no configuration
		return serveMCP(ctx, args[1:], os.Stdin, nopWriteCloser{out}, os.Getenv)
	}
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	cmd := args[0]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		cmd += " " + args[1]
		args = args[1:]
	}
	args = args[1:]
	switch cmd {
	case "migrate": // on its own connection (DATABASE_MIGRATE_URL), before any pool exists
		applied, err := postgres.Setup(ctx, cfg.MigrateURL())
		if err != nil {
			if cfg.DatabaseMigrateURL != "" {
				return connErr(err, "DATABASE_MIGRATE_URL", cfg.DatabaseMigrateURL)
			}
			return connErr(err, "DATABASE_URL", cfg.DatabaseURL)
		}
		fmt.Fprintf(out, "applied %d migration(s)\n", len(applied))
		for _, a := range applied {
			fmt.Fprintln(out, "  "+a)
		}
		return nil
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return connErr(err, "DATABASE_URL", cfg.DatabaseURL)
	}
	defer pool.Close()
	switch cmd {
	case "credits grant", "plan set":
		// The running API replicas hear of the change through Redis.
		a, err := app.New(ctx, cfg, app.Options{Log: app.NewLogger(io.Discard, "error"), Pool: pool})
		if err != nil { // PostgreSQL answered: Redis did not
			return connErr(err, "REDIS_URL", cfg.RedisURL)
		}
		defer a.Close()
		if cmd == "credits grant" {
			return grantCredits(ctx, a, args, out)
		}
		return setPlan(ctx, a, args, out)
	case "import keywords", "import rankings":
		return importFile(ctx, pool, strings.TrimPrefix(cmd, "import "), args, out)
	case "seed-sample":
		return seedSample(ctx, pool, args, out)
	}
	fmt.Fprint(out, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// connErr is err with the connection string ctl used, its password masked: ctl connects
// only where the environment says, and run without the service's variables it reaches the
// local defaults (database "contentapi" does not exist, or another Redis).
func connErr(err error, name, value string) error {
	set := "set"
	if os.Getenv(name) == "" {
		set = "not set: the default"
	}
	return fmt.Errorf("%w\nctl used %s=%s (%s); it must be the one the api and worker run with (ctl -h)",
		redact.Error(err), name, redact.ConnString(value), set)
}

func grantCredits(ctx context.Context, a *app.App, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("credits grant", flag.ContinueOnError)
	email := fs.String("email", "", "account e-mail address")
	amount := fs.Int("amount", 0, "credits to grant")
	expiresIn := fs.String("expires-in", "", "lifetime, like 30d or 720h, at most 12 months (default: 12 months)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" || *amount <= 0 {
		return errors.New("credits grant needs --email and a positive --amount")
	}
	now := a.Clock.Now()
	expires := clock.AddMonths(now, credits.LifetimeMonths)
	if *expiresIn != "" {
		life, err := parseLifetime(*expiresIn)
		if err != nil {
			return err
		}
		expires = now.Add(life)
	}
	acc, err := a.Accounts.GetByEmail(ctx, *email)
	if err != nil {
		return fmt.Errorf("%s: %w", *email, err)
	}
	n, err := a.Ledger.Grant(ctx, credits.Grant{AccountID: acc.ID, Amount: *amount, IssuedAt: now,
		ExpiresAt: expires, Source: credits.SourceOperator, SourceRef: now.Format(time.RFC3339Nano)})
	if e, ok := apperr.As(err); ok && e.Code == apperr.Validation {
		return fmt.Errorf("--expires-in %s: %s", *expiresIn, e.Message)
	}
	if err != nil {
		return err
	}
	bal, err := a.Ledger.Balance(ctx, acc.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "granted %d credits to %s, expiring %s; balance now %d\n", n, acc.Email,
		expires.UTC().Format(time.RFC3339), bal)
	return nil
}

func setPlan(ctx context.Context, a *app.App, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("plan set", flag.ContinueOnError)
	email := fs.String("email", "", "account e-mail address")
	planName := fs.String("plan", "", "free, pro, scale or enterprise")
	rate := fs.Int("rate-limit", 0, "requests per minute (default: the plan's)")
	monthly := fs.Int("credits-monthly", -1, "monthly credit allocation (default: the plan's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := plan.Lookup(*planName)
	if err != nil || *email == "" {
		return errors.New("plan set needs --email and --plan free|pro|scale|enterprise")
	}
	if *rate == 0 {
		*rate = p.RateLimit
	}
	if *monthly < 0 {
		*monthly = p.CreditsMonthly
	}
	if *rate < 1 || *rate > 100000 {
		return errors.New("--rate-limit must be from 1 to 100000")
	}
	acc, err := a.Accounts.GetByEmail(ctx, *email)
	if err != nil {
		return fmt.Errorf("%s: %w", *email, err)
	}
	p.RateLimit, p.CreditsMonthly = *rate, *monthly
	ch, err := a.Ledger.SetPlan(ctx, acc.ID, p)
	if err != nil {
		return fmt.Errorf("%s: %w", acc.Email, err)
	}
	if err := a.Accounts.AccountChanged(ctx, acc.ID); err != nil {
		return err
	}
	bal, err := a.Ledger.Balance(ctx, acc.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is on %s: %d requests/minute, %d credits a month; %d credits granted, balance now %d; period %s to %s\n",
		acc.Email, p.Name, *rate, *monthly, ch.Granted, bal, ch.PeriodStart.UTC().Format(time.RFC3339), ch.PeriodEnd.UTC().Format(time.RFC3339))
	return nil
}

// parseLifetime accepts Go durations and whole days ("30d").
func parseLifetime(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--expires-in %q: want like 30d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, fmt.Errorf("--expires-in %q: want like 30d or 720h", s)
	}
	return dur, nil
}
