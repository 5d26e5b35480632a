package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contentapi/contentapi/internal/report"
)

// toolOf is the tool name of a catalogue kind.
func toolOf(kind report.Kind) string {
	a, _ := report.Lookup(string(kind))
	return ToolName(a)
}

// splitList reads a prompt argument listing domains or topics, comma or space separated.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == ';' })
}

// callText is one tool call of a prompt, with its arguments filled.
func callText(tool string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return fmt.Sprintf("%s with %s", tool, b)
}

// addPrompts adds the prompts for the common jobs; each names its tool calls with their
// arguments filled from the prompt's.
func addPrompts(srv *mcp.Server) {
	domainArg := &mcp.PromptArgument{Name: "domain", Description: "The site, as a domain (example.com).", Required: true}
	competitorsArg := func(required bool) *mcp.PromptArgument {
		return &mcp.PromptArgument{Name: "competitors", Description: "Up to 3 competitor domains, comma separated.", Required: required}
	}
	srv.AddPrompt(&mcp.Prompt{
		Name:        "content_plan",
		Title:       "Content plan for a domain",
		Description: "Plan the next articles for a site: its content map (audit, rankings, gaps and recommendations with outlines), turned into a prioritised plan.",
		Arguments: []*mcp.PromptArgument{domainArg, competitorsArg(false),
			{Name: "topics", Description: "Focus topics, comma separated (optional)."}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		if a["domain"] == "" {
			return nil, fmt.Errorf("the domain argument is required")
		}
		args := map[string]any{"domain": a["domain"]}
		if c := splitList(a["competitors"]); len(c) > 0 {
			args["competitors"] = c
		}
		if t := splitList(a["topics"]); len(t) > 0 {
			args["focus_topics"] = t
		}
		text := fmt.Sprintf(`Build a content plan for %[1]s.

1. Call estimate_cost with {"tool": %[2]q, "arguments": %[3]s} and tell me the cost and my balance before going on.
2. Call %[4]s.
3. From its recommendations, write a prioritised plan: for each article the target keyword, search intent, why it ranks (volume, difficulty, the gap it fills), and its outline. Put the existing pages the map says to update or merge (cannibalization, thin content) first, then new articles, highest opportunity first.
4. End with the credits the analysis used and what is left.

If a tool answers an error, quote its code and message and follow it (NO_DATA says what to change; RATE_LIMIT_EXCEEDED gives the wait).`,
			a["domain"], toolOf(report.KindContentMap), mustJSON(args), callText(toolOf(report.KindContentMap), args))
		return promptResult("Content plan for "+a["domain"], text), nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name:        "competitor_gap_review",
		Title:       "Competitor gap review",
		Description: "Which keywords competitors rank for and the site does not, grouped into opportunities.",
		Arguments:   []*mcp.PromptArgument{domainArg, competitorsArg(true)},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		competitors := splitList(a["competitors"])
		if a["domain"] == "" || len(competitors) == 0 {
			return nil, fmt.Errorf("the domain and competitors arguments are required")
		}
		args := map[string]any{"domain": a["domain"], "competitors": competitors}
		text := fmt.Sprintf(`Review the keyword gaps between %s and its competitors %s.

1. Call %s.
2. Group the gaps by theme. For each theme: the keywords, their volume and difficulty, which competitor ranks and where, and whether %s has a page that could be improved or needs a new one.
3. Rank the themes by opportunity (volume over difficulty, intent that fits the site) and recommend the first three pieces of content.
4. End with the credits used and what is left.

If a tool answers an error, quote its code and message and follow it.`,
			a["domain"], strings.Join(competitors, ", "), callText(toolOf(report.KindGaps), args), a["domain"])
		return promptResult("Competitor gap review for "+a["domain"], text), nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name:        "audit_triage",
		Title:       "Audit triage",
		Description: "Crawl and audit a site, then sort its issues into what to fix first.",
		Arguments: []*mcp.PromptArgument{domainArg,
			{Name: "max_pages", Description: "Pages to crawl, 1 to 500 (default 100)."}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		if a["domain"] == "" {
			return nil, fmt.Errorf("the domain argument is required")
		}
		args := map[string]any{"domain": a["domain"]}
		if n := strings.TrimSpace(a["max_pages"]); n != "" {
			var pages int
			if _, err := fmt.Sscan(n, &pages); err != nil {
				return nil, fmt.Errorf("max_pages must be a number")
			}
			args["max_pages"] = pages
		}
		text := fmt.Sprintf(`Triage the content of %s.

1. Call %s. A large site can take a while: if it answers with a job_id instead of the result, call get_job with that job_id until it has finished.
2. Sort the issues it reports into: fix now (errors, broken links, noindex or canonical mistakes on important pages, cannibalization between pages), fix soon (thin content, missing or duplicate titles and descriptions) and later. Name the pages for each.
3. For each cannibalization group, say which page should own the keyword and what to do with the others.
4. End with the credits used and what is left.

If a tool answers an error, quote its code and message and follow it.`,
			a["domain"], callText(toolOf(report.KindAudit), args))
		return promptResult("Audit triage for "+a["domain"], text), nil
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func promptResult(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description,
		Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}
