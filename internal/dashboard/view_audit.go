package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/report"
)

// The audit report: health, issues by severity and category, each issue's pages and the
// changes since the previous audit; an issue's own page lists all of its URLs.

// issueItemsShown bounds the URLs listed per audit issue on the page (the answer lists up to
// audit.MaxItems): with about a hundred issue types, all of them would make the page of a
// large audit several MB. The downloads hold them all.
const issueItemsShown = 20

// auditView is an audit: its scores, its issues by severity and category, and its lists.
type auditView struct {
	report.AuditResult
	Severities []severityCount
	Categories []categoryCount
	Issues     []issueView
	Changes    *changesView
	Health     string // the health score's band: good, fair or poor
	// IssueBase is the address an issue type is appended to for its page of every URL the
	// answer lists (set by the page showing the report).
	IssueBase string
	// IssueToken is a share link's token, which those pages carry in their query.
	IssueToken string
}

type severityCount struct {
	Severity    string
	Types, URLs int
}

type categoryCount struct {
	Category                 string
	Errors, Warnings, Notice int
}

type issueView struct {
	report.AuditIssue
	Threshold string // the rule the check applies
	Shown     []audit.Item
	// TextHead names the page text the issue is about ("Title", "Meta description") and
	// Texts holds it for each shown item, read from the audit's pages: the duplicated title,
	// the description that is too long.
	TextHead string
	Texts    []string
	More     int // items listed in the answer but not on the page
	Unlisted int // URLs with the issue the answer does not list
}

type changesView struct {
	*report.AuditChanges
	Appeared, Disappeared []typeURLs
}

type typeURLs struct {
	Type string
	URLs []string
}

// issuePage is one audit issue type with every URL the answer lists.
type issuePage struct {
	Subject string
	Issue   issueView
	Back    string
}

// newIssuePage finds an issue type in an audit's result; ok is false when the job is no
// audit or the audit did not find that type.
func newIssuePage(kind string, request, result json.RawMessage, typ string) (issuePage, bool, error) {
	if report.Kind(kind) != report.KindAudit {
		return issuePage{}, false, nil
	}
	var r report.AuditResult
	if err := json.Unmarshal(result, &r); err != nil {
		return issuePage{}, false, fmt.Errorf("dashboard: read an audit: %w", err)
	}
	for _, is := range r.Issues {
		if is.Type == typ {
			iv := newIssueView(is, thresholdOf(is.Type), len(is.Items)+len(is.URLs))
			iv.addTexts(pagesByURL(r.Pages))
			return issuePage{Subject: subjectOf(request), Issue: iv}, true, nil
		}
	}
	return issuePage{}, false, nil
}

func thresholdOf(typ string) string {
	for _, c := range audit.Checks() {
		if c.Type == typ {
			return c.Threshold
		}
	}
	return ""
}

// newIssueView shows up to shown of an issue's listed items (its URLs where it has none).
func newIssueView(is report.AuditIssue, threshold string, shown int) issueView {
	iv := issueView{AuditIssue: is, Threshold: threshold}
	items := is.Items
	if len(items) == 0 {
		for _, u := range is.URLs {
			items = append(items, audit.Item{URL: u})
		}
	}
	iv.Items = items
	listed := len(items)
	if len(items) > shown {
		items = items[:shown]
	}
	iv.Shown, iv.More, iv.Unlisted = items, listed-len(items), max(0, is.Count-listed)
	return iv
}

func pagesByURL(pages []report.AuditPage) map[string]*report.AuditPage {
	m := make(map[string]*report.AuditPage, len(pages))
	for i := range pages {
		m[pages[i].URL] = &pages[i]
	}
	return m
}

// offendingText names the page text an issue type is about and reads it from a page: a
// title issue shows the page's title, a meta description issue its description.
func offendingText(typ string) (head string, text func(*report.AuditPage) string) {
	switch {
	case strings.Contains(typ, "meta_description"):
		return "Meta description", func(p *report.AuditPage) string { return p.MetaDescription }
	case strings.Contains(typ, "title"):
		return "Title", func(p *report.AuditPage) string { return p.Title }
	}
	return "", nil
}

// addTexts sets the page text each shown item is about, where the audit has it (none for
// a missing title, say).
func (iv *issueView) addTexts(pages map[string]*report.AuditPage) {
	head, text := offendingText(iv.Type)
	if text == nil {
		return
	}
	texts, found := make([]string, len(iv.Shown)), false
	for i, it := range iv.Shown {
		if p, ok := pages[it.URL]; ok {
			texts[i] = text(p)
			found = found || texts[i] != ""
		}
	}
	if found {
		iv.TextHead, iv.Texts = head, texts
	}
}

func newAuditView(r report.AuditResult) *auditView {
	v := &auditView{AuditResult: r}
	thresholds := map[string]string{}
	for _, c := range audit.Checks() {
		thresholds[c.Type] = c.Threshold
	}
	sev := map[string]*severityCount{}
	for _, s := range []string{audit.SeverityError, audit.SeverityWarning, audit.SeverityNotice} {
		v.Severities = append(v.Severities, severityCount{Severity: s})
	}
	for i := range v.Severities {
		sev[v.Severities[i].Severity] = &v.Severities[i]
	}
	idx := map[string]int{}
	for _, is := range r.Issues {
		if s, ok := sev[is.Severity]; ok {
			s.Types++
			s.URLs += is.Count
		}
		i, ok := idx[is.Category]
		if !ok {
			i = len(v.Categories)
			idx[is.Category] = i
			v.Categories = append(v.Categories, categoryCount{Category: is.Category})
		}
		switch c := &v.Categories[i]; is.Severity {
		case audit.SeverityError:
			c.Errors += is.Count
		case audit.SeverityWarning:
			c.Warnings += is.Count
		default:
			c.Notice += is.Count
		}
	}
	pages := pagesByURL(r.Pages)
	for _, is := range r.Issues {
		iv := newIssueView(is, thresholds[is.Type], issueItemsShown)
		iv.addTexts(pages)
		v.Issues = append(v.Issues, iv)
	}
	if r.Summary.HealthScore != nil {
		switch h := *r.Summary.HealthScore; {
		case h >= 80:
			v.Health = "good"
		case h >= 50:
			v.Health = "fair"
		default:
			v.Health = "poor"
		}
	}
	if r.Changes != nil {
		cv := &changesView{AuditChanges: r.Changes}
		cv.Appeared, cv.Disappeared = sortedTypeURLs(r.Changes.URLsAppeared), sortedTypeURLs(r.Changes.URLsDisappeared)
		v.Changes = cv
	}
	return v
}

func sortedTypeURLs(m map[string][]string) []typeURLs {
	var out []typeURLs
	for t, urls := range m {
		out = append(out, typeURLs{Type: t, URLs: urls})
	}
	slices.SortFunc(out, func(a, b typeURLs) int { return cmp.Compare(a.Type, b.Type) })
	return out
}
