package crawler

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Bounds on the external link check: it must not outlast or outweigh the crawl.
const (
	externalTimeout     = 5 * time.Second
	externalParallelism = 4
)

// checkExternal checks the links to other sites the pages hold (at most maxExternal, in
// the order found) by status alone: HEAD, or GET with its body unread when HEAD is refused.
// The crawl's transport applies its address rules to every connection and redirect.
func (c *Crawler) checkExternal(ctx context.Context, t http.RoundTripper, g *linkGraph, res *Result) {
	client := &http.Client{Transport: t, Timeout: externalTimeout, CheckRedirect: c.checkRedirect}
	out := make([]Resource, len(g.extURLs))
	sem := make(chan struct{}, externalParallelism)
	var wg sync.WaitGroup
	for i, u := range g.extURLs {
		out[i] = Resource{URL: u, External: true, LinkedFrom: slices.Clone(g.extSources[i]), LinkedFromTotal: g.extTotal[i]}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c.statusOf(ctx, client, &out[i])
		})
	}
	wg.Wait()
	res.Resources = append(res.Resources, out...)
	slices.SortFunc(res.Resources, func(a, b Resource) int { return cmp.Compare(a.URL, b.URL) })
	if g.extDropped > 0 {
		res.warn("the pages link to more than %d external URLs; %d were not checked", maxExternal, g.extDropped)
		res.limit(LimitExternal)
	}
}

// statusOf fills r's status, type and length from a HEAD (or, refused, a GET) answer.
func (c *Crawler) statusOf(ctx context.Context, client *http.Client, r *Resource) {
	r.ContentLength = -1
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		req, err := http.NewRequestWithContext(ctx, method, r.URL, nil)
		if err != nil {
			r.Error = errorText(err)
			return
		}
		req.Header.Set("User-Agent", c.cfg.UserAgent)
		resp, err := client.Do(req)
		if err != nil {
			r.Error = errorText(err)
			return
		}
		_ = resp.Body.Close() // the status is all that is wanted
		r.Status, r.ContentType, r.ContentLength = resp.StatusCode, mediaType(resp.Header.Get("Content-Type")), resp.ContentLength
		if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotImplemented {
			return
		}
	}
}
