// Quickstart registers an account (or uses CONTENTAPI_KEY), runs keyword research and
// prints the keyword clusters.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -email you@example.com
//	CONTENTAPI_KEY=ap_... go run ./examples/quickstart -domain coffee-sample.example -topic "cold brew"
//
// Without CONTENTAPI_KEY or -email it registers a throwaway address under example.com (a
// name reserved for examples, so no mail reaches anyone), which is all a local service needs.
//
// CONTENTAPI_URL names the API (default http://localhost:8080, where `make run` serves it
// with a synthetic sample keyword set).
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/contentapi/contentapi/client"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	email := flag.String("email", "", "register a new account with this e-mail address (when CONTENTAPI_KEY is not set; default a new quickstart-…@example.com)")
	domain := flag.String("domain", "coffee-sample.example", "the site to research for")
	topic := flag.String("topic", "coffee", "the topic")
	limit := flag.Int("limit", 20, "maximum keywords (1-100)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	base := os.Getenv("CONTENTAPI_URL")
	if base == "" {
		base = client.DefaultBaseURL
	}
	c := client.New(os.Getenv("CONTENTAPI_KEY"), client.WithBaseURL(base), client.WithUserAgent("quickstart"))
	if os.Getenv("CONTENTAPI_KEY") == "" {
		if *email == "" {
			*email = "quickstart-" + strings.ToLower(rand.Text()[:10]) + "@example.com"
		}
		reg, err := c.Register(ctx, client.RegisterRequest{Email: *email, Name: "quickstart"})
		if err != nil {
			return err
		}
		fmt.Printf("Registered %s: a %s account with %d credits. Your API key (shown once, save it):\n\n  export CONTENTAPI_KEY=%s\n\n",
			*email, reg.Plan, reg.Credits, reg.APIKey)
		c = c.WithAPIKey(reg.APIKey)
	}

	res, err := c.KeywordResearch(ctx, client.ResearchRequest{Domain: *domain, Topic: *topic, Limit: *limit})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		return fmt.Errorf("%s (%s, HTTP %d, request %s)", apiErr.Message, apiErr.Code, apiErr.Status, apiErr.RequestID)
	}
	if err != nil {
		return err
	}

	fmt.Printf("%d keywords about %q for %s, in %d clusters:\n", res.TotalKeywords, res.Topic, res.Domain, len(res.Clusters))
	for _, cl := range res.Clusters {
		fmt.Printf("\n%s (volume %d, difficulty %s)\n", cl.ClusterName, cl.TotalVolume, num(cl.AvgDifficulty))
		for _, k := range cl.Keywords {
			fmt.Printf("  %-40s volume %-7s difficulty %-5s opportunity %3s  %s\n",
				k.Keyword, count(k.SearchVolume), num(k.KeywordDifficulty), count(k.OpportunityScore), k.SearchIntent)
		}
	}
	fmt.Printf("\n%d credits used, %d left.\n", res.Meta.CreditsUsed, res.Meta.CreditsRemaining)
	return nil
}

// num and count print unknown metrics (nil) as "n/a".
func num(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", *p), ".0")
}

func count[T int | int64](p *T) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}
