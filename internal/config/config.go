// Package config loads the service's configuration from the environment, once, in cmd/.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the API, worker and ctl binaries.
type Config struct {
	DatabaseURL   string
	RedisURL      string
	APIAddr       string
	PublicBaseURL string
	DashboardURL  string
	DocsURL       string
	LogLevel      string
	// AccessLogSample logs one in that many successful calls answered faster than
	// AccessLogSlow; errors and slow calls are always logged.
	AccessLogSample int
	AccessLogSlow   time.Duration

	// Where Redis is when it is not REDIS_URL's one server (REDIS_URL then still gives the
	// password, database, TLS and client tuning): RedisSentinelMaster and RedisSentinelAddrs
	// find the master through Sentinel, RedisSentinelPassword is the sentinels' own password
	// (empty: none); RedisClusterAddrs are seed nodes of a Redis Cluster.
	RedisSentinelMaster   string
	RedisSentinelAddrs    []string
	RedisSentinelPassword string
	RedisClusterAddrs     []string

	// SMTPURL is where the dashboard's e-mails (sign-in and verification links) go; empty
	// writes them to the log instead. SMTPFrom is their sender.
	SMTPURL  string
	SMTPFrom string

	// DatabaseMigrateURL, when set, is where migrations run (a session-mode connection
	// when DATABASE_URL goes through a transaction-mode pooler).
	DatabaseMigrateURL string

	SyncTimeout     time.Duration
	ShutdownTimeout time.Duration
	// StartupTimeout bounds how long api and worker wait at start for PostgreSQL, Redis and
	// (the worker) the schema the api migrates.
	StartupTimeout time.Duration
	RegisterLimit  int // registrations per client IP per hour
	TrustedProxies []string
	// MCPAllowedOrigins are browser origins, besides PUBLIC_BASE_URL's, that may use /mcp.
	MCPAllowedOrigins []string
	WorkerConcurrency int
	MetricsAddr       string
	AdminToken        string

	KeywordProvider string
	KeywordCacheTTL time.Duration
	// KeywordColumnsMB is the local provider's memory budget for keyword columns (0: off).
	KeywordColumnsMB int
	// KeywordColumnsDir is where the workers of a machine share the keyword columns through
	// files: "" for the user's cache directory, "off" for none.
	KeywordColumnsDir string
	// KeywordMappedMB bounds the pages of the mapped column and word files resident in a
	// worker (0: no bound).
	KeywordMappedMB int
	// KeywordWordIndex has research read each large market's word index (shared through
	// files in KeywordColumnsDir); false leaves it to its SQL look-ups.
	KeywordWordIndex bool
	// KeywordMarketDatabases are the markets whose keyword data lives in a database of its
	// own (the local provider), each once; every other market's is in DATABASE_URL's.
	KeywordMarketDatabases []MarketDatabase
	DataForSEOLogin        string
	DataForSEOPassword     string
	DataForSEOBaseURL      string
	// DataForSEOFillMissing asks search_intent and bulk_keyword_difficulty for the intent
	// and difficulty a Labs answer left out (one extra call each, at most).
	DataForSEOFillMissing bool

	StripeSecretKey         string
	StripeWebhookSecret     string
	StripeAPIBase           string
	StripePriceProMonthly   string
	StripePriceProAnnual    string
	StripePriceScaleMonthly string
	StripePriceScaleAnnual  string

	JobMaxAttempts     int
	JobStaleAfter      time.Duration
	JobTimeout         time.Duration
	JobSweepInterval   time.Duration
	JobRetryDelay      time.Duration
	JobRetention       time.Duration
	WorkerPollInterval time.Duration

	CrawlerAllowPrivate bool
	// CursorSecret signs keyword answers' cursors; empty: the key the database keeps.
	CursorSecret     string
	CrawlerUserAgent string
	// CrawlerTimeout is a crawl's time budget; a rendered crawl gets three times it.
	CrawlerTimeout   time.Duration
	ThinContentWords int

	// ChromePath names the browser rendered audits use; "" looks for chromium,
	// chromium-browser or google-chrome on the PATH.
	ChromePath        string
	RenderConcurrency int
	RenderTimeout     time.Duration
	// RenderMemoryMB bounds each browser's resident memory; one over it is killed.
	RenderMemoryMB int
	// RenderIdle is how long a worker keeps its browsers with no page rendering.
	RenderIdle time.Duration
}

// Getenv is the lookup Load reads from; os.Getenv in production, a map in tests.
type Getenv func(string) string

// LookupEnv is the lookup LoadLookup reads from (os.LookupEnv): it tells a variable set to
// "" from one not set.
type LookupEnv func(string) (string, bool)

// offWhenEmpty are the variables whose empty value turns their feature off instead of
// taking the default: METRICS_ADDR= runs the worker without its metrics listener.
var offWhenEmpty = map[string]bool{"METRICS_ADDR": true}

// vars describes every variable: its default and whether it is a secret.
var vars = []struct {
	name, def string
	secret    bool
}{
	{"DATABASE_URL", "postgres://postgres@127.0.0.1:5432/contentapi?sslmode=disable", true},
	{"DATABASE_MIGRATE_URL", "", true},
	{"REDIS_URL", "redis://127.0.0.1:6379/0", true},
	{"REDIS_SENTINEL_MASTER", "", false},
	{"REDIS_SENTINEL_ADDRS", "", false},
	{"REDIS_SENTINEL_PASSWORD", "", true},
	{"REDIS_CLUSTER_ADDRS", "", false},
	{"API_ADDR", ":8080", false},
	{"PUBLIC_BASE_URL", "http://localhost:8080", false},
	{"DASHBOARD_URL", "", false}, // PUBLIC_BASE_URL + /dashboard
	{"SMTP_URL", "", true},
	{"SMTP_FROM", "ContentAPI <no-reply@localhost>", false},
	{"DOCS_URL", "", false}, // PUBLIC_BASE_URL + /docs
	{"LOG_LEVEL", "info", false},
	{"ACCESS_LOG_SAMPLE", "100", false},
	{"ACCESS_LOG_SLOW", "500ms", false},
	{"SYNC_TIMEOUT", "30s", false},
	{"SHUTDOWN_TIMEOUT", "30s", false},
	{"STARTUP_TIMEOUT", "5m", false},
	{"REGISTER_RATE_LIMIT", "10", false},
	{"TRUSTED_PROXIES", "", false},
	{"MCP_ALLOWED_ORIGINS", "", false},
	{"WORKER_CONCURRENCY", "20", false},
	{"ADMIN_TOKEN", "", true},
	{"CURSOR_SECRET", "", true},
	{"METRICS_ADDR", ":9091", false},
	{"KEYWORD_PROVIDER", "local", false},
	{"KEYWORD_CACHE_TTL", "24h", false},
	{"KEYWORD_COLUMNS_MB", "640", false},
	{"KEYWORD_COLUMNS_DIR", "", false},
	{"KEYWORD_MAPPED_MB", "384", false},
	{"KEYWORD_WORD_INDEX", "true", false},
	{"KEYWORD_MARKET_DATABASES", "", true},
	{"DATAFORSEO_LOGIN", "", true},
	{"DATAFORSEO_PASSWORD", "", true},
	{"DATAFORSEO_BASE_URL", "https://api.dataforseo.com", false},
	{"DATAFORSEO_FILL_MISSING", "true", false},
	{"STRIPE_SECRET_KEY", "", true},
	{"STRIPE_WEBHOOK_SECRET", "", true},
	{"STRIPE_API_BASE", "https://api.stripe.com", false},
	{"STRIPE_PRICE_PRO_MONTHLY", "", false},
	{"STRIPE_PRICE_PRO_ANNUAL", "", false},
	{"STRIPE_PRICE_SCALE_MONTHLY", "", false},
	{"STRIPE_PRICE_SCALE_ANNUAL", "", false},
	{"JOB_MAX_ATTEMPTS", "3", false},
	{"JOB_STALE_AFTER", "15s", false},
	{"JOB_TIMEOUT", "10m", false},
	{"JOB_SWEEP_INTERVAL", "2s", false},
	{"JOB_RETRY_DELAY", "2s", false},
	{"JOB_RETENTION", "720h", false},
	{"WORKER_POLL_INTERVAL", "2ms", false},
	{"CRAWLER_ALLOW_PRIVATE", "false", false},
	{"CRAWLER_USER_AGENT", "ContentStrategyBot/1.0 (+https://contentapi.dev/bot)", false},
	{"CRAWLER_TIMEOUT", "60s", false},
	{"THIN_CONTENT_WORDS", "300", false},
	{"CHROME_PATH", "", false},
	{"RENDER_CONCURRENCY", "2", false},
	{"RENDER_TIMEOUT", "15s", false},
	{"RENDER_MEMORY_MB", "384", false},
	{"RENDER_IDLE", "1m", false},
}

// Load reads and validates the configuration. Every problem is reported, not only the first.
// A variable set to "" counts as not set; LoadLookup tells them apart.
func Load(getenv Getenv) (*Config, error) {
	return LoadLookup(func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	})
}

// LoadLookup is Load reading through lookup, so a variable of offWhenEmpty set to "" turns
// its feature off; any other empty variable takes its default.
func LoadLookup(lookup LookupEnv) (*Config, error) {
	get := func(name string) string {
		v, set := lookup(name)
		if v = strings.TrimSpace(v); v != "" || (set && offWhenEmpty[name]) {
			return v
		}
		for _, v := range vars {
			if v.name == name {
				return v.def
			}
		}
		return ""
	}
	var errs []error
	dur := func(name string, min time.Duration) time.Duration {
		d, err := time.ParseDuration(get(name))
		if err != nil || d < min {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration of at least %s, like 30s or 2m", name, get(name), min))
		}
		return d
	}
	integer := func(name string, min, max int) int {
		n, err := strconv.Atoi(get(name))
		if err != nil || n < min || n > max {
			errs = append(errs, fmt.Errorf("%s=%q: want a whole number from %d to %d", name, get(name), min, max))
		}
		return n
	}
	boolean := func(name string) bool {
		b, err := strconv.ParseBool(get(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", name, get(name)))
		}
		return b
	}
	absURL := func(name string, schemes ...string) string {
		v := get(name)
		if v == "" {
			return v
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || !contains(schemes, u.Scheme) {
			shown := fmt.Sprintf("%q", v)
			if isSecret(name) { // a connection string may hold a password: never echo it
				shown = "(value not shown)"
			}
			errs = append(errs, fmt.Errorf("%s=%s: want an absolute %s URL", name, shown, strings.Join(schemes, " or ")))
		}
		return strings.TrimRight(v, "/")
	}

	c := &Config{
		DatabaseURL:             absURL("DATABASE_URL", "postgres", "postgresql"),
		DatabaseMigrateURL:      absURL("DATABASE_MIGRATE_URL", "postgres", "postgresql"),
		RedisURL:                absURL("REDIS_URL", "redis", "rediss"),
		RedisSentinelMaster:     get("REDIS_SENTINEL_MASTER"),
		RedisSentinelPassword:   get("REDIS_SENTINEL_PASSWORD"),
		APIAddr:                 get("API_ADDR"),
		PublicBaseURL:           absURL("PUBLIC_BASE_URL", "http", "https"),
		DashboardURL:            absURL("DASHBOARD_URL", "http", "https"),
		SMTPURL:                 absURL("SMTP_URL", "smtp", "smtps"),
		SMTPFrom:                get("SMTP_FROM"),
		DocsURL:                 absURL("DOCS_URL", "http", "https"),
		LogLevel:                strings.ToLower(get("LOG_LEVEL")),
		AccessLogSample:         integer("ACCESS_LOG_SAMPLE", 1, 1_000_000),
		AccessLogSlow:           dur("ACCESS_LOG_SLOW", 0),
		SyncTimeout:             dur("SYNC_TIMEOUT", 0),
		ShutdownTimeout:         dur("SHUTDOWN_TIMEOUT", time.Second),
		StartupTimeout:          dur("STARTUP_TIMEOUT", time.Second),
		RegisterLimit:           integer("REGISTER_RATE_LIMIT", 1, 100000),
		WorkerConcurrency:       integer("WORKER_CONCURRENCY", 1, 1000),
		AdminToken:              get("ADMIN_TOKEN"),
		MetricsAddr:             get("METRICS_ADDR"),
		KeywordProvider:         strings.ToLower(get("KEYWORD_PROVIDER")),
		KeywordCacheTTL:         dur("KEYWORD_CACHE_TTL", 0),
		KeywordColumnsMB:        integer("KEYWORD_COLUMNS_MB", 0, 1<<20),
		KeywordColumnsDir:       get("KEYWORD_COLUMNS_DIR"),
		KeywordMappedMB:         integer("KEYWORD_MAPPED_MB", 0, 1<<20),
		KeywordWordIndex:        boolean("KEYWORD_WORD_INDEX"),
		DataForSEOLogin:         get("DATAFORSEO_LOGIN"),
		DataForSEOPassword:      get("DATAFORSEO_PASSWORD"),
		DataForSEOBaseURL:       absURL("DATAFORSEO_BASE_URL", "http", "https"),
		DataForSEOFillMissing:   boolean("DATAFORSEO_FILL_MISSING"),
		StripeSecretKey:         get("STRIPE_SECRET_KEY"),
		StripeWebhookSecret:     get("STRIPE_WEBHOOK_SECRET"),
		StripeAPIBase:           absURL("STRIPE_API_BASE", "http", "https"),
		StripePriceProMonthly:   get("STRIPE_PRICE_PRO_MONTHLY"),
		StripePriceProAnnual:    get("STRIPE_PRICE_PRO_ANNUAL"),
		StripePriceScaleMonthly: get("STRIPE_PRICE_SCALE_MONTHLY"),
		StripePriceScaleAnnual:  get("STRIPE_PRICE_SCALE_ANNUAL"),
		JobMaxAttempts:          integer("JOB_MAX_ATTEMPTS", 1, 20),
		JobStaleAfter:           dur("JOB_STALE_AFTER", 300*time.Millisecond),
		JobTimeout:              dur("JOB_TIMEOUT", time.Second),
		JobSweepInterval:        dur("JOB_SWEEP_INTERVAL", 100*time.Millisecond),
		JobRetryDelay:           dur("JOB_RETRY_DELAY", 0),
		JobRetention:            dur("JOB_RETENTION", 24*time.Hour),
		WorkerPollInterval:      dur("WORKER_POLL_INTERVAL", time.Millisecond),
		CrawlerAllowPrivate:     boolean("CRAWLER_ALLOW_PRIVATE"),
		CursorSecret:            get("CURSOR_SECRET"),
		CrawlerUserAgent:        get("CRAWLER_USER_AGENT"),
		CrawlerTimeout:          dur("CRAWLER_TIMEOUT", time.Second),
		ThinContentWords:        integer("THIN_CONTENT_WORDS", 1, 100000),
		ChromePath:              get("CHROME_PATH"),
		RenderConcurrency:       integer("RENDER_CONCURRENCY", 1, 64),
		RenderTimeout:           dur("RENDER_TIMEOUT", time.Second),
		RenderMemoryMB:          integer("RENDER_MEMORY_MB", 128, 65536),
		RenderIdle:              dur("RENDER_IDLE", time.Second),
	}
	if c.DashboardURL == "" {
		c.DashboardURL = c.PublicBaseURL + "/dashboard"
	}
	if c.DocsURL == "" {
		c.DocsURL = c.PublicBaseURL + "/docs"
	}
	if u, err := url.Parse(c.DashboardURL); err == nil && u.Path != "/dashboard" {
		errs = append(errs, fmt.Errorf("DASHBOARD_URL=%q: the API serves the dashboard at /dashboard; want that path, like https://api.example.com/dashboard", c.DashboardURL))
	}
	if d := c.KeywordColumnsDir; d != "" && d != "off" && !filepath.IsAbs(d) {
		errs = append(errs, fmt.Errorf("KEYWORD_COLUMNS_DIR=%q: want an absolute path, or off", d))
	}
	if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
		errs = append(errs, fmt.Errorf("SMTP_FROM=%q: want an address like ContentAPI <no-reply@example.com>", c.SMTPFrom))
	}
	for _, p := range strings.Split(get("TRUSTED_PROXIES"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.TrustedProxies = append(c.TrustedProxies, p)
			if !validProxy(p) {
				errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %q is not an IP address or CIDR prefix", p))
			}
		}
	}
	for _, o := range strings.Split(get("MCP_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimSuffix(u.Path, "/") != "" {
				errs = append(errs, fmt.Errorf("MCP_ALLOWED_ORIGINS: %q is not an origin like https://app.example.com", o))
				continue
			}
			c.MCPAllowedOrigins = append(c.MCPAllowedOrigins, strings.ToLower(u.Scheme+"://"+u.Host))
		}
	}
	errs = append(errs, c.redisTopology(get)...)
	errs = append(errs, c.marketDatabases(get("KEYWORD_MARKET_DATABASES"))...)
	if !contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		errs = append(errs, fmt.Errorf("LOG_LEVEL=%q: want debug, info, warn or error", c.LogLevel))
	}
	switch c.KeywordProvider {
	case "local":
	case "dataforseo":
		if c.DataForSEOLogin == "" || c.DataForSEOPassword == "" {
			errs = append(errs, errors.New("KEYWORD_PROVIDER=dataforseo needs DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD"))
		}
	default:
		errs = append(errs, fmt.Errorf("KEYWORD_PROVIDER=%q: want local or dataforseo", c.KeywordProvider))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

// redisTopology reads where Redis is besides REDIS_URL: a master found through Sentinel, or a
// Cluster's seed nodes; with neither, REDIS_URL's host is the one server.
func (c *Config) redisTopology(get func(string) string) []error {
	var errs []error
	addrs := func(name string) []string {
		var out []string
		for _, a := range strings.Split(get(name), ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			out = append(out, a)
			host, port, err := net.SplitHostPort(a)
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
				errs = append(errs, fmt.Errorf("%s: %q is not a host:port address like redis-1:26379", name, a))
			}
		}
		return out
	}
	c.RedisSentinelAddrs = addrs("REDIS_SENTINEL_ADDRS")
	c.RedisClusterAddrs = addrs("REDIS_CLUSTER_ADDRS")
	sentinel := c.RedisSentinelMaster != "" || len(c.RedisSentinelAddrs) > 0
	switch {
	case sentinel && (c.RedisSentinelMaster == "" || len(c.RedisSentinelAddrs) == 0):
		errs = append(errs, errors.New("REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS go together: the master's name and the sentinels' comma-separated host:port addresses"))
	case sentinel && len(c.RedisClusterAddrs) > 0:
		errs = append(errs, errors.New("REDIS_SENTINEL_ADDRS and REDIS_CLUSTER_ADDRS: set one, Sentinel or Cluster, not both"))
	case !sentinel && c.RedisSentinelPassword != "":
		errs = append(errs, errors.New("REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS"))
	}
	if len(c.RedisClusterAddrs) > 0 {
		if u, err := url.Parse(c.RedisURL); err == nil {
			db := strings.Trim(u.Path, "/")
			if q := u.Query().Get("db"); q != "" {
				db = q
			}
			if db != "" && db != "0" {
				errs = append(errs, fmt.Errorf("REDIS_CLUSTER_ADDRS: Redis Cluster has only database 0, but REDIS_URL selects database %s", db))
			}
		}
	}
	return errs
}

// RedisMode names where Redis is: "sentinel", "cluster" or "single" (REDIS_URL's host).
func (c *Config) RedisMode() string {
	switch {
	case c.RedisSentinelMaster != "":
		return "sentinel"
	case len(c.RedisClusterAddrs) > 0:
		return "cluster"
	}
	return "single"
}

// MigrateURL is where migrations run: DATABASE_MIGRATE_URL, or DATABASE_URL without it.
func (c *Config) MigrateURL() string {
	if c.DatabaseMigrateURL != "" {
		return c.DatabaseMigrateURL
	}
	return c.DatabaseURL
}

// BillingConfigured reports whether Stripe keys are present.
func (c *Config) BillingConfigured() bool {
	return c.StripeSecretKey != "" && c.StripeWebhookSecret != ""
}

// Setting is one variable's effective value: what the environment says, or its default.
// Secret values must be masked before they are shown (app.Describe does, for the start log).
type Setting struct {
	Name, Value string
	Secret      bool
}

// Settings lists every variable with its effective value, in the order they are declared.
func Settings(getenv Getenv) []Setting {
	out := make([]Setting, 0, len(vars))
	for _, v := range vars {
		val := strings.TrimSpace(getenv(v.name))
		if val == "" {
			val = v.def
		}
		out = append(out, Setting{Name: v.name, Value: val, Secret: v.secret})
	}
	return out
}

// isSecret reports whether the variable named holds a secret (a password, a token, or a
// connection string that may carry one).
func isSecret(name string) bool {
	for _, v := range vars {
		if v.name == name {
			return v.secret
		}
	}
	return false
}

// Names lists the variables in order, for documentation checks.
func Names() []string {
	n := make([]string, 0, len(vars))
	for _, v := range vars {
		n = append(n, v.name)
	}
	sort.Strings(n)
	return n
}

// validProxy accepts an address (10.0.0.7, ::1) or a prefix (10.0.0.0/8, fd00::/8).
func validProxy(p string) bool {
	if _, err := netip.ParsePrefix(p); err == nil {
		return true
	}
	_, err := netip.ParseAddr(p)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// MarketDatabase is a market (lower-case country and language codes) whose keyword data
// lives in the PostgreSQL database URL names.
type MarketDatabase struct{ Country, Language, URL string }

// marketCode is a two-letter country or language code.
var marketCode = regexp.MustCompile(`^[a-z]{2}$`)

// marketDatabases reads KEYWORD_MARKET_DATABASES: space-separated country/language=URL
// entries (a URL holds no space, and may hold commas: several hosts).
func (c *Config) marketDatabases(v string) []error {
	const name = "KEYWORD_MARKET_DATABASES"
	var errs []error
	seen := map[string]bool{}
	for _, entry := range strings.Fields(v) {
		market, dsn, _ := strings.Cut(entry, "=")
		country, language, _ := strings.Cut(strings.ToLower(market), "/")
		u, err := url.Parse(dsn)
		switch {
		case !marketCode.MatchString(country) || !marketCode.MatchString(language):
			errs = append(errs, fmt.Errorf("%s: %q does not start with a market like us/en=", name, redactEntry(entry)))
		case err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "":
			errs = append(errs, fmt.Errorf("%s: market %s: want a postgres:// URL", name, market))
		case seen[country+"/"+language]:
			errs = append(errs, fmt.Errorf("%s: market %s is named twice", name, market))
		default:
			seen[country+"/"+language] = true
			c.KeywordMarketDatabases = append(c.KeywordMarketDatabases, MarketDatabase{Country: country, Language: language, URL: dsn})
		}
	}
	return errs
}

// redactEntry is a KEYWORD_MARKET_DATABASES entry fit for an error: what precedes its URL,
// never the URL (it may hold a password).
func redactEntry(entry string) string {
	if market, _, found := strings.Cut(entry, "="); found {
		return market + "=…"
	}
	return "an entry with no '='"
}
