// Package analysis holds the content-strategy logic: opportunity scores, search intent,
// keyword clusters, cannibalization, titles, outlines and recommendations. It is pure: no
// I/O, no clock, no globals that change; the same input always gives the same output, in
// the same order. A nil metric means unknown and stays nil in every output.
//
// # Opportunity score (OpportunityScore)
//
//	score = round(100 × (0.30·V + 0.25·E + 0.10·C + 0.10·I + 0.25·P)), clamped to 1..100
//	V = min(1, log10(volume+1) / 5)        100,000+ searches/month = 1; 1,000 ≈ 0.6
//	E = 1 − clamp(difficulty, 0, 100)/100  easier is better
//	C = min(1, log10(cpc+1) / log10(21))   $20+ = 1; $1 ≈ 0.23
//	I = transactional 1.0, commercial 0.8, informational 0.5, navigational 0.1
//	P = not ranking 0.5; #1–3 0.15; #4–10 1.0; #11–20 0.85; #21–50 0.6; #51+ 0.55
//
// An unknown volume, difficulty or CPC counts as 0.5, the middle of its term's range; with
// all three unknown there is no score (nil, null in answers), and such keywords sort last.
// Positions 4–20 ("striking distance") score highest; the top 3 lowest, little is left to gain.
//
// # Search intent (ClassifyIntent, Intent)
//
// The first matching row wins; modifiers match whole words:
//
//	navigational   login, log in, sign in, sign up, official site/website, homepage,
//	               customer service, phone number
//	transactional  buy, purchase, order, price(s), pricing, cheap(er/est), deal(s),
//	               discount(s), coupon(s), promo code, voucher, near me, for sale, shop
//	               (+ comprar, precio, acheter, prix, kaufen, preis, prezzo, kopen, prijs, …)
//	commercial     best, top, vs, versus, review(s), comparison, compare(d),
//	               alternative(s), buying guide (+ mejor, meilleur, beste, migliore, melhor, …)
//	informational  how, what, why, when, where, who, guide, tutorial, tips, ideas, examples,
//	               meaning, definition, learn; and any phrase without a modifier
//
// Exceptions: "order of …", "top" not first nor before a number or "rated", "shop" not
// first, and "best way/time/practices" do not count; a phrase opening with how/what/why is
// never transactional ("how to buy a house" is informational). Intent prefers the
// provider's label when it names one of the four.
//
// # Text
//
// Words and stems come from package stem (below this package and the keyword providers):
// stem.Tokens are lower-case Unicode words. stem.Stems removes stopwords and stems with
// snowball (English by default; Spanish, French, Russian, Swedish, Norwegian, Hungarian);
// German, Italian, Portuguese, Dutch and Turkish keep their tokens without stopwords.
// stem.Normalize is the sorted, unique stems joined by spaces: phrases that normalise
// equally are the same topic.
//
// # Clusters (ClusterKeywords)
//
// Keywords with SERP URLs join when they share ≥ 3 normalised top-10 URLs (single link).
// Keywords without them are compared by stem sets without stopwords, numbers and intent
// modifiers: equal sets, Jaccard ≥ 0.6 with ≥ 2 shared stems, or the smaller set (≥ 2
// stems) contained in the larger; such a group joins the SERP cluster of its best lexical
// match, never merging two SERP clusters. Name = strongest keyword (volume, relevance,
// alphabet); TotalVolume = sum of known volumes; AvgDifficulty = mean of known
// difficulties (nil if none), one decimal.
//
// # Cannibalization (FindCannibalization, CannibalAdvice)
//
// Among indexable pages (2xx, not noindex): equal stemmed titles (site name removed), or
// title ∪ H1 stems with Jaccard ≥ 0.75 and ≥ 2 shared stems; and two or more URLs ranking
// for one keyword. The URL kept is the best-ranking for the keyword, else the best-ranking
// for any keyword, else the one with most words; the others are merged into it and 301-redirected.
//
// # Recommendations (Recommend)
//
// Per candidate target: ranked #1–3 by the domain, dropped; ranked #4 or lower, "improve"
// the URL ranking best for it (#4–20, striking distance, scores highest); not ranked but
// another keyword of its cluster is, "improve" that cluster's best-ranking URL; not ranked
// but a page title/H1 holds its stems, "improve" that page; otherwise "create". A new
// article is never proposed for a keyword the domain ranks for, and related keywords and
// outlines leave out keywords another URL ranks for. With focus topics only on-topic
// candidates (MatchTopic: all the topic's stems, or its head word's) are kept. Merges
// candidates that normalise equally (higher volume kept); ranks by OpportunityScore + 15
// when a focus topic's stems are all in the keyword's; priorities 1..n; at most limit.
// Titles follow intent templates (Title); outlines have 3–8 H2s built from the cluster's
// questions and modifiers, recurring competitor headings and stock sections chosen by the
// keyword's shape (vs, best, how-to, how long/much/often, what is, yes/no, why) before its
// intent (BuildOutline); only a how-to question gets numbered steps.
package analysis
