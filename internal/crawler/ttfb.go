package crawler

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"
)

// Time to first byte from repeated samples: one request's time depends on what else the
// server and the network were doing, so a page found slow once is asked again (GET, its
// body left unread) and judged by the median of its samples. Pages found fast are not
// asked again: a fast answer is not a fluke of congestion. The audit then reports only
// what repeats, and two audits of one site do not differ by chance.

// Bounds on the re-fetches.
const (
	TTFBSamples      = 3  // samples per page judged slow, the first fetch included
	maxTTFBResampled = 50 // pages re-fetched per crawl, the slowest first
)

// resampleTTFB asks again, TTFBSamples-1 times each, for the content pages whose first
// time to first byte was over slower, and sets each one's TTFB to the median of its
// samples (PageFacts.TTFBSamples holds them). Pages beyond maxTTFBResampled, or whose
// samples the crawl's time cut short, keep fewer samples.
func (c *Crawler) resampleTTFB(ctx context.Context, t http.RoundTripper, slower, delay time.Duration, parallel int, res *Result) {
	if slower <= 0 {
		return
	}
	var slow []int
	for i, p := range res.Pages {
		if p.Facts.TTFB > slower && p.Status/100 == 2 && p.Error == "" && !p.OffSite && isHTMLType(p.ContentType) {
			res.Pages[i].Facts.TTFBSamples = []time.Duration{p.Facts.TTFB}
			slow = append(slow, i)
		}
	}
	slices.SortStableFunc(slow, func(a, b int) int { return int(res.Pages[b].Facts.TTFB - res.Pages[a].Facts.TTFB) })
	if len(slow) > maxTTFBResampled {
		res.warn("%d pages answered slower than %v; only the %d slowest were sampled again", len(slow), slower, maxTTFBResampled)
		slow = slow[:maxTTFBResampled]
	}
	client := &http.Client{Transport: t, Timeout: c.cfg.RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, parallel) {
		wg.Go(func() {
			for i := range jobs {
				u := res.Pages[i].FinalURL
				for range TTFBSamples - 1 {
					if delay > 0 && !sleep(ctx, delay) {
						break
					}
					d, ok := c.firstByte(ctx, client, u)
					if !ok {
						break
					}
					mu.Lock()
					res.Pages[i].Facts.TTFBSamples = append(res.Pages[i].Facts.TTFBSamples, d)
					mu.Unlock()
				}
			}
		})
	}
	for _, i := range slow {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, i := range slow {
		f := &res.Pages[i].Facts
		f.TTFB = median(f.TTFBSamples)
	}
}

// firstByte times one GET of u from asking for a connection to the answer's first byte,
// as the crawl's own trace does, and leaves the body unread.
func (c *Crawler) firstByte(ctx context.Context, client *http.Client, u string) (time.Duration, bool) {
	var start time.Time
	var took time.Duration
	trace := &httptrace.ClientTrace{
		GetConn:              func(string) { start = time.Now() },
		GotFirstResponseByte: func() { took = time.Since(start) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, u, nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", acceptHTML)
	resp, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	_ = resp.Body.Close()
	return took, took > 0
}

// median of samples: the middle one, or the mean of the two middle ones.
func median(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
