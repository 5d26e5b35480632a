package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.APIAddr != ":8080" || c.SyncTimeout != 30*time.Second || c.KeywordProvider != "local" ||
		c.CrawlerAllowPrivate || c.ThinContentWords != 300 || c.KeywordCacheTTL != 24*time.Hour {
		t.Fatalf("defaults %+v", c)
	}
	if c.JobMaxAttempts != 3 || c.JobStaleAfter != 15*time.Second || c.JobTimeout != 10*time.Minute ||
		c.JobSweepInterval != 2*time.Second || c.JobRetryDelay != 2*time.Second || c.WorkerPollInterval != 2*time.Millisecond {
		t.Fatalf("job defaults %+v", c)
	}
	if c.BillingConfigured() {
		t.Fatal("billing configured without keys")
	}
}

func TestBadValuesAreAllReported(t *testing.T) {
	_, err := Load(env(map[string]string{
		"SYNC_TIMEOUT": "soon", "WORKER_CONCURRENCY": "0", "KEYWORD_PROVIDER": "magic",
		"CRAWLER_ALLOW_PRIVATE": "perhaps", "DATABASE_URL": "mysql://x", "LOG_LEVEL": "loud",
		"TRUSTED_PROXIES": "10.0.0.1, proxy.internal",
	}))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, name := range []string{"SYNC_TIMEOUT", "WORKER_CONCURRENCY", "KEYWORD_PROVIDER", "CRAWLER_ALLOW_PRIVATE", "DATABASE_URL", "LOG_LEVEL", "TRUSTED_PROXIES"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if _, err := Load(env(map[string]string{"KEYWORD_PROVIDER": "dataforseo"})); err == nil || !strings.Contains(err.Error(), "DATAFORSEO_LOGIN") {
		t.Fatalf("dataforseo without credentials: %v", err)
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := Load(env(map[string]string{"TRUSTED_PROXIES": " 10.0.0.7, 10.0.0.0/8 ,fd00::/8,::1"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.TrustedProxies, " ") != "10.0.0.7 10.0.0.0/8 fd00::/8 ::1" {
		t.Fatalf("trusted proxies %q", c.TrustedProxies)
	}
}

func TestMCPAllowedOrigins(t *testing.T) {
	c, err := Load(env(map[string]string{"MCP_ALLOWED_ORIGINS": " https://App.example.com, http://localhost:3000/ ,"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.MCPAllowedOrigins, " ") != "https://app.example.com http://localhost:3000" {
		t.Fatalf("origins %q", c.MCPAllowedOrigins)
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/path", "ftp://x.example"} {
		if _, err := Load(env(map[string]string{"MCP_ALLOWED_ORIGINS": bad})); err == nil || !strings.Contains(err.Error(), "MCP_ALLOWED_ORIGINS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The dashboard is served at PUBLIC_BASE_URL + /dashboard unless DASHBOARD_URL says where
// else that path is reached; other paths and bad mail settings are refused.
func TestDashboardAndMail(t *testing.T) {
	c, err := Load(env(map[string]string{"PUBLIC_BASE_URL": "https://api.example.com/"}))
	if err != nil || c.DashboardURL != "https://api.example.com/dashboard" || c.SMTPURL != "" || c.SMTPFrom == "" {
		t.Fatalf("defaults %+v %v", c, err)
	}
	c, err = Load(env(map[string]string{"DASHBOARD_URL": "https://app.example.com/dashboard/", "SMTP_URL": "smtps://u:p@mail.example.com:465"}))
	if err != nil || c.DashboardURL != "https://app.example.com/dashboard" || c.SMTPURL != "smtps://u:p@mail.example.com:465" {
		t.Fatalf("set %+v %v", c, err)
	}
	_, err = Load(env(map[string]string{"DASHBOARD_URL": "https://app.example.com", "SMTP_URL": "http://mail", "SMTP_FROM": "nobody"}))
	for _, name := range []string{"DASHBOARD_URL", "SMTP_URL", "SMTP_FROM"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// GET /v1 names the documentation at PUBLIC_BASE_URL + /docs, the address the API serves it
// at, unless DOCS_URL says where else it is published.
func TestDocsURLFollowsPublicBaseURL(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "http://localhost:8080/docs"},
		{map[string]string{"PUBLIC_BASE_URL": "http://localhost:9090"}, "http://localhost:9090/docs"},
		{map[string]string{"PUBLIC_BASE_URL": "https://api.example.com/"}, "https://api.example.com/docs"},
		{map[string]string{"PUBLIC_BASE_URL": "https://api.example.com", "DOCS_URL": "https://docs.example.com/api/"}, "https://docs.example.com/api"},
	} {
		cfg, err := Load(env(c.env))
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		if cfg.DocsURL != c.want {
			t.Errorf("%v: DocsURL %q, want %q", c.env, cfg.DocsURL, c.want)
		}
	}
}

// METRICS_ADDR set to "" turns the worker's metrics listener off (README: "empty turns it
// off"); unset, it takes :9091. Other variables set to "" still take their defaults.
func TestMetricsAddrSetEmptyTurnsMetricsOff(t *testing.T) {
	lookup := func(m map[string]string) LookupEnv {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset", nil, ":9091"},
		{"set empty", map[string]string{"METRICS_ADDR": ""}, ""},
		{"set blank", map[string]string{"METRICS_ADDR": "  "}, ""},
		{"set", map[string]string{"METRICS_ADDR": "127.0.0.1:9100"}, "127.0.0.1:9100"},
	} {
		cfg, err := LoadLookup(lookup(c.env))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.MetricsAddr != c.want {
			t.Errorf("%s: METRICS_ADDR %q, want %q", c.name, cfg.MetricsAddr, c.want)
		}
	}
	cfg, err := LoadLookup(lookup(map[string]string{"API_ADDR": "", "SYNC_TIMEOUT": ""}))
	if err != nil || cfg.APIAddr != ":8080" || cfg.SyncTimeout != 30*time.Second {
		t.Fatalf("other empty variables: %+v %v, want their defaults", cfg, err)
	}
}

func TestKeywordMarketDatabases(t *testing.T) {
	c, err := Load(env(map[string]string{"KEYWORD_MARKET_DATABASES": " GB/en=postgres://kw-gb/keywords  de/de=postgresql://a,b/kw?sslmode=require "}))
	if err != nil {
		t.Fatal(err)
	}
	want := []MarketDatabase{{"gb", "en", "postgres://kw-gb/keywords"}, {"de", "de", "postgresql://a,b/kw?sslmode=require"}}
	if len(c.KeywordMarketDatabases) != 2 || c.KeywordMarketDatabases[0] != want[0] || c.KeywordMarketDatabases[1] != want[1] {
		t.Fatalf("market databases %+v", c.KeywordMarketDatabases)
	}
	for _, bad := range []string{"gb=postgres://kw/x", "gbr/en=postgres://kw/x", "gb/en=mysql://kw/x", "gb/en=",
		"gb/en=postgres://a/x gb/EN=postgres://b/x", "postgres://kw/x"} {
		if _, err := Load(env(map[string]string{"KEYWORD_MARKET_DATABASES": bad})); err == nil || !strings.Contains(err.Error(), "KEYWORD_MARKET_DATABASES") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
