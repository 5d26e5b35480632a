package crawler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

const (
	// maxRobotsBytes is Google's robots.txt limit; rules beyond it are ignored.
	maxRobotsBytes = 500 << 10
	// maxCrawlDelay caps robots.txt Crawl-delay: a larger value would make even a small
	// audit outlast the crawl's time budget.
	maxCrawlDelay = 10 * time.Second
	// maxRobotsSitemaps bounds the Sitemap: lines taken from robots.txt.
	maxRobotsSitemaps = 50
)

// robotsPolicy is what robots.txt says to this crawler.
type robotsPolicy struct {
	data     *robotstxt.RobotsData // nil allows everything
	agent    string
	delay    time.Duration
	sitemaps []string
}

// newRobotsPolicy reads a robots.txt answer. A file that cannot be parsed allows
// everything, as if absent; the returned error says why, for a warning.
func newRobotsPolicy(status int, body []byte, agent string) (*robotsPolicy, error) {
	p := &robotsPolicy{agent: agent}
	if status/100 == 2 {
		p.sitemaps = sitemapLines(body)
	}
	data, err := robotstxt.FromStatusAndBytes(status, body)
	if err != nil {
		return p, fmt.Errorf("robots.txt ignored: %w", err)
	}
	p.data = data
	// TestAgent honours the disallow-all of a 5xx answer; FindGroup alone would not.
	p.delay = data.FindGroup(agent).CrawlDelay
	return p, nil
}

func (p *robotsPolicy) allows(u *url.URL) bool {
	if p == nil || p.data == nil {
		return true
	}
	return p.data.TestAgent(robotsPath(u), p.agent)
}

func (p *robotsPolicy) crawlDelay() time.Duration {
	if p == nil {
		return 0
	}
	return p.delay
}

// sitemapLines returns the Sitemap: values of a robots.txt. They are read here rather than
// from the parser so that a file the parser rejects still yields its sitemaps.
func sitemapLines(body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), maxRobotsBytes)
	for sc.Scan() && len(out) < maxRobotsSitemaps {
		line := strings.TrimSpace(sc.Text())
		key, val, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "sitemap") {
			continue
		}
		if val, _, _ = strings.Cut(val, "#"); strings.TrimSpace(val) != "" {
			out = append(out, strings.TrimSpace(val))
		}
	}
	return out
}

// politeDelay returns the delay between requests: the configured one, or robots.txt's
// Crawl-delay (capped at maxCrawlDelay) when larger, with a note for the warnings.
func politeDelay(configured, crawlDelay time.Duration) (time.Duration, string) {
	if crawlDelay <= configured {
		return configured, ""
	}
	if crawlDelay > maxCrawlDelay {
		return max(maxCrawlDelay, configured), fmt.Sprintf("robots.txt Crawl-delay %s capped at %s", crawlDelay, maxCrawlDelay)
	}
	return crawlDelay, fmt.Sprintf("robots.txt Crawl-delay %s applied between requests", crawlDelay)
}

// openSite finds the scheme the site answers on by fetching its robots.txt over https,
// then http, and returns the site's home URL and robots policy.
func (c *Crawler) openSite(ctx context.Context, client *http.Client, domain string, res *Result) (*url.URL, *robotsPolicy, error) {
	var errs []error
	for _, scheme := range []string{"https", "http"} {
		base := &url.URL{Scheme: scheme, Host: domain, Path: "/"}
		status, body, err := c.fetchRobots(ctx, client, base)
		if err == nil {
			if len(errs) > 0 {
				res.warn("https unavailable, crawled over http: %v", errs[0])
			}
			res.Scheme = scheme
			return base, c.robotsFor(status, body, res), nil
		}
		// A refused address or an expired budget will not improve over plain http.
		if errors.Is(err, ErrForbiddenAddress) || ctx.Err() != nil {
			return nil, nil, err
		}
		errs = append(errs, err)
	}
	return nil, nil, fmt.Errorf("%w: %s: %w", ErrSiteUnreachable, domain, errors.Join(errs...))
}

func (c *Crawler) robotsFor(status int, body []byte, res *Result) *robotsPolicy {
	policy, err := newRobotsPolicy(status, body, c.cfg.UserAgent)
	if err != nil {
		res.warn("%v", err)
	}
	if status/100 == 5 {
		res.warn("robots.txt answered %d: the site asks crawlers to stay away for now", status)
	}
	return policy
}

// fetchRobots returns robots.txt's status and (bounded) body. Only a failure to get any
// answer is an error: a 404 simply means no rules.
func (c *Crawler) fetchRobots(ctx context.Context, client *http.Client, base *url.URL) (int, []byte, error) {
	u := base.ResolveReference(&url.URL{Path: "/robots.txt"})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("robots.txt request: %w", err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	// A read error leaves a partial file; parsing what arrived is better than no rules.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes))
	return resp.StatusCode, body, nil
}
