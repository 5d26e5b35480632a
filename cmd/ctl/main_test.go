package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// ctl runs the command as an operator would, against the test database and Redis.
func ctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	_, dsn := testenv.PostgresDSN(t)
	t.Setenv("DATABASE_URL", dsn)
	t.Setenv("REDIS_URL", testenv.RedisURL(t))
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), err
}

func TestOperatorCommands(t *testing.T) {
	ctx := context.Background()
	if out, err := ctl(t, "migrate"); err != nil || !strings.Contains(out, "applied 0 migration(s)") {
		t.Fatalf("migrate on a migrated database: %q %v", out, err)
	}
	a := apptest.New(t, apptest.Options{})
	accounts, ledger, pool := a.Accounts, a.Ledger, a.Pool
	email := "operator-" + uuid.NewString() + "@example.com"
	reg, err := accounts.Register(ctx, email, "")
	if err != nil {
		t.Fatal(err)
	}

	out, err := ctl(t, "credits", "grant", "--email", strings.ToUpper(email), "--amount", "200", "--expires-in", "30d")
	if err != nil || !strings.Contains(out, "granted 200 credits") || !strings.Contains(out, "balance now 250") {
		t.Fatalf("credits grant: %q %v", out, err)
	}
	if _, err := ctl(t, "credits", "grant", "--email", "nobody@example.com", "--amount", "5"); err == nil {
		t.Fatal("grant to an unknown account succeeded")
	}
	if _, err := ctl(t, "credits", "grant", "--email", email, "--amount", "5", "--expires-in", "soon"); err == nil {
		t.Fatal("a bad --expires-in was accepted")
	}
	// Credits last 12 months at most: a longer life is refused and grants nothing.
	if out, err := ctl(t, "credits", "grant", "--email", email, "--amount", "5", "--expires-in", "800d"); err == nil ||
		!strings.Contains(err.Error(), "--expires-in 800d: credits expire at most 12 months after issue") {
		t.Fatalf("credits grant for 800 days: %q %v", out, err)
	}
	if b, _ := ledger.Balance(ctx, reg.AccountID); b != 250 {
		t.Fatalf("balance %d after a refused grant, want 250", b)
	}
	// Without --expires-in, the full 12 months.
	out, err = ctl(t, "credits", "grant", "--email", email, "--amount", "5")
	if err != nil || !strings.Contains(out, "balance now 255") {
		t.Fatalf("credits grant: %q %v", out, err)
	}
	var issued, expires time.Time
	if err := pool.QueryRow(ctx, `SELECT issued_at, expires_at FROM credit_grants WHERE account_id = $1 AND amount = 5`,
		reg.AccountID).Scan(&issued, &expires); err != nil || !expires.Equal(clock.AddMonths(issued, 12)) {
		t.Fatalf("default grant issued %v expires %v: %v", issued, expires, err)
	}

	// An operator's plan is granted its monthly credits at once, in a period starting now.
	out, err = ctl(t, "plan", "set", "--email", email, "--plan", "enterprise", "--rate-limit", "300", "--credits-monthly", "20000")
	if err != nil || !strings.Contains(out, "enterprise: 300 requests/minute, 20000 credits a month; 20000 credits granted, balance now 20255") {
		t.Fatalf("plan set: %q %v", out, err)
	}
	// Setting it again grants nothing more.
	out, err = ctl(t, "plan", "set", "--email", email, "--plan", "enterprise", "--rate-limit", "300", "--credits-monthly", "20000")
	if err != nil || !strings.Contains(out, "0 credits granted, balance now 20255") {
		t.Fatalf("plan set again: %q %v", out, err)
	}
	acc, err := accounts.Get(ctx, reg.AccountID)
	if err != nil || acc.Plan != "enterprise" || acc.RateLimit != 300 || acc.CreditsMonthly != 20000 {
		t.Fatalf("account after plan set: %+v %v", acc, err)
	}
	if _, err := ctl(t, "plan", "set", "--email", email, "--plan", "platinum"); err == nil {
		t.Fatal("an unknown plan was accepted")
	}
	// An account paying through Stripe follows its subscription: refused.
	if _, err := pool.Exec(ctx, `UPDATE accounts SET stripe_subscription_id = 'sub_ctl_' || id::text WHERE id = $1`, reg.AccountID); err != nil {
		t.Fatal(err)
	}
	if out, err := ctl(t, "plan", "set", "--email", email, "--plan", "pro"); err == nil || !strings.Contains(err.Error(), "Stripe subscription") {
		t.Fatalf("plan set on a Stripe account: %q %v", out, err)
	}
	if acc, _ := accounts.Get(ctx, reg.AccountID); acc.Plan != "enterprise" {
		t.Fatalf("a refused plan set changed the plan to %s", acc.Plan)
	}
}

func TestImportAndSeedCommands(t *testing.T) {
	dir := t.TempDir()
	kw := filepath.Join(dir, "semrush.csv")
	if err := os.WriteFile(kw, []byte("\ufeffKeyword,Search Volume,Keyword Difficulty,CPC,Intent\n"+
		"\"ctl test, quoted\",\"1,300\",35,1.20,Informational\n"+
		"ctl range row,1K-10K,20,0.5,Commercial\n"+
		"ctl empty metrics,,,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := ctl(t, "import", "keywords", kw, "--source", "semrush")
	if err != nil || !strings.Contains(out, "read 3 rows, loaded 2, rejected 1") || !strings.Contains(out, "line 3:") {
		t.Fatalf("import keywords: %q %v", out, err)
	}
	rk2 := filepath.Join(dir, "gsc2.csv")
	if err := os.WriteFile(rk2, []byte("Top queries,Page,Position\n\"ctl test, quoted\",https://www.ctl-test.example/a,4.4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := ctl(t, "import", "rankings", rk2); err != nil || !strings.Contains(out, "loaded 1") {
		t.Fatalf("import rankings: %q %v", out, err)
	}
	if _, err := ctl(t, "import", "keywords", filepath.Join(dir, "missing.csv")); err == nil {
		t.Fatal("a missing file was accepted")
	}
	if out, err := ctl(t, "seed-sample", "--if-empty"); err != nil || !strings.Contains(out, "keyword data present") {
		t.Fatalf("seed-sample --if-empty with data: %q %v", out, err)
	}
	if out, err := ctl(t, "seed-sample"); err != nil || !strings.Contains(out, "SYNTHETIC") {
		t.Fatalf("seed-sample: %q %v", out, err)
	}
	if _, err := ctl(t, "frobnicate"); err == nil {
		t.Fatal("an unknown command was accepted")
	}
}

// pool_max_conns (which docs/operating.md advises) and pgx's own parameters in DATABASE_URL used to
// reach the server as settings and stop `ctl migrate`; DATABASE_MIGRATE_URL, when set, is
// where migrations run (a direct connection beside a transaction-mode pooler).
func TestMigrateWithPoolParametersAndMigrateURL(t *testing.T) {
	_, dsn := testenv.PostgresDSN(t)
	t.Setenv("REDIS_URL", testenv.RedisURL(t))
	t.Setenv("DATABASE_URL", dsn+"&pool_max_conns=4&pool_max_conn_idle_time=1m&default_query_exec_mode=simple_protocol")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, &out); err != nil || !strings.Contains(out.String(), "applied 0 migration(s)") {
		t.Fatalf("migrate with pool parameters: %q %v", out.String(), err)
	}

	name := "contentapi_ctltest_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), testenv.ServerDSN()); err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	t.Setenv("DATABASE_MIGRATE_URL", fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable&pool_max_conns=2", cfg.User, cfg.Host, cfg.Port, name))
	out.Reset()
	if err := run(context.Background(), []string{"migrate"}, &out); err != nil || strings.Contains(out.String(), "applied 0 migration(s)") {
		t.Fatalf("migrate on DATABASE_MIGRATE_URL's new database: %q %v", out.String(), err)
	}
}

// ctl run without the service's DATABASE_URL says which one it used, password masked, and
// that it must be the service's; ctl -h says so before connecting anywhere.
func TestConnectionErrorNamesTheURL(t *testing.T) {
	cfg, err := pgx.ParseConfig(testenv.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	missing := fmt.Sprintf("postgres://%s:hunter2@%s:%d/contentapi_ctl_missing_%s?sslmode=disable",
		cfg.User, cfg.Host, cfg.Port, strings.ReplaceAll(uuid.NewString()[:8], "-", ""))
	t.Setenv("DATABASE_URL", missing)
	err = run(context.Background(), []string{"seed-sample"}, &bytes.Buffer{})
	want := "ctl used DATABASE_URL=" + strings.Replace(missing, "hunter2", "xxxxx", 1) + " (set); it must be the one the api and worker run with"
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("seed-sample against a missing database: %v\nwant it to contain %q, without the password", err, want)
	}

	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none") // -h connects nowhere
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out); err != nil || !strings.Contains(out.String(), "the values the api and worker") {
		t.Errorf("ctl -h: %v\n%s", err, out.String())
	}
}

// ctl mcp needs a key and no database; with one it serves until stdin ends.
func TestMCPCommand(t *testing.T) {
	t.Setenv("CONTENTAPI_KEY", "")
	if err := run(context.Background(), []string{"mcp"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CONTENTAPI_KEY") {
		t.Fatalf("mcp without a key: %v", err)
	}
	env := func(k string) string { return map[string]string{"CONTENTAPI_KEY": "ap_test"}[k] }
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- serveMCP(context.Background(), nil, inR, outW, env) }()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo":{"name":"contentapi"`) {
		t.Fatalf("initialize over stdio: %q %v", line, err)
	}
	_ = inW.Close() // the assistant quits: the server ends
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
