package dashboard

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/report"
)

// Preflight runs the API's checks on a valid request that need the outside world (the
// crawler's address checks, a browser for rendering) before anything is charged; the API
// lends its own (httpapi), so a form is refused exactly as the same call would be.
type Preflight func(ctx context.Context, a report.Analysis, req report.Request) error

// SetPreflight sets the checks run after a form's request is valid (httpapi calls it when
// it mounts the dashboard).
func (d *Dashboard) SetPreflight(fn func(ctx context.Context, a report.Analysis, req report.Request) error) {
	d.preflight = fn
}

func (d *Dashboard) runRoutes(r fiber.Router) {
	r.Get("/new", d.signedIn, d.newAnalyses)
	r.Get("/new/:slug", d.signedIn, d.analysisForm)
	r.Post("/new/:slug", d.signedIn, d.submitAnalysis)
}

// slug names an analysis in the dashboard's addresses: its path without /v1/, dashed
// (/v1/keywords/research is keywords-research).
func slug(a report.Analysis) string {
	return strings.ReplaceAll(strings.TrimPrefix(a.Path, "/v1/"), "/", "-")
}

func analysisBySlug(s string) (report.Analysis, bool) {
	for _, a := range report.Catalog {
		if slug(a) == s {
			return a, true
		}
	}
	return report.Analysis{}, false
}

// analysisOffer is an analysis as the "New analysis" page lists it.
type analysisOffer struct {
	Slug, Summary, Path, Cost string
}

func (d *Dashboard) newAnalyses(c *fiber.Ctx) error {
	var offers []analysisOffer
	for _, a := range report.Catalog {
		offers = append(offers, analysisOffer{Slug: slug(a), Summary: a.Summary, Path: a.Path, Cost: a.CostText()})
	}
	return d.render(c, fiber.StatusOK, "new", view{Title: "New analysis", Nav: "new", Data: offers})
}

// formField is one input of an analysis form, derived from a JSON field of the analysis's
// request type, so a field (or an endpoint) added to the catalogue gets its input.
type formField struct {
	Name    string // the JSON field's name, which the API's messages use
	Label   string
	Hint    string
	Input   string // text, textarea, number, checkbox or select
	List    bool   // a list, one item per line
	Options []string
	Value   string
	Checked bool
	Error   string
}

// fieldHelp is what the form says about a request field; fields missing here are labelled
// from their names.
type fieldHelp struct {
	Label, Hint string
	Options     []string
	Long        bool // a text of several lines
}

var fieldHelps = map[string]fieldHelp{
	"domain":         {Label: "Domain", Hint: "Your site, like example.com."},
	"topic":          {Label: "Topic", Hint: "Optional: a seed topic the keywords should be about."},
	"keywords":       {Label: "Seed keywords", Hint: "Optional: one per line, up to 100."},
	"competitors":    {Label: "Competitors", Hint: "Competitor domains, one per line (up to 3)."},
	"country":        {Label: "Country", Options: report.Countries},
	"language":       {Label: "Language", Options: report.Languages},
	"limit":          {Label: "Results", Hint: "How many to return; empty takes the default."},
	"sitemap_url":    {Label: "Sitemap URL", Hint: "Optional: the sitemap to start from, on the same site."},
	"max_pages":      {Label: "Pages at most", Hint: "1 to 500; empty takes 100."},
	"check_external": {Label: "Check links to other sites", Hint: "Their status only, at most 100 URLs."},
	"render":         {Label: "JavaScript", Hint: "javascript renders every page in a browser first, at a higher price.", Options: report.RenderModes},
	"focus_topics":   {Label: "Focus topics", Hint: "Optional: one per line, up to 20."},
	"brand_context":  {Label: "About your brand", Hint: "Optional: a few sentences the plan should fit.", Long: true},
}

// notInForm are request fields a form does not offer: the job's page is where its answer
// arrives, and a form asks for the first page of an answer (a cursor continues one).
var notInForm = map[string]bool{"callback_url": true, "cursor": true}

// formable reports whether a form has an input for a field of type t: text, a list of
// texts, a whole number or a yes/no. Nested objects (a query's filters) are left to the API.
func formable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	}
	return false
}

// requestFields lists the JSON fields of a request type, embedded structs flattened, with
// their Go types.
func requestFields(t reflect.Type) (names []string, types []reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			n, ty := requestFields(f.Type)
			names, types = append(names, n...), append(types, ty...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		if notInForm[name] || !formable(f.Type) {
			continue
		}
		names, types = append(names, name), append(types, f.Type)
	}
	return names, types
}

// newForm is the empty form of an analysis, its fields in the request's order.
func newForm(a report.Analysis) []formField {
	names, types := requestFields(reflect.TypeOf(a.NewRequest()))
	fields := make([]formField, 0, len(names))
	for i, name := range names {
		h, ok := fieldHelps[name]
		if !ok {
			h.Label = strings.ToUpper(name[:1]) + strings.ReplaceAll(name[1:], "_", " ")
		}
		f := formField{Name: name, Label: h.Label, Hint: h.Hint, Options: h.Options, Input: "text"}
		switch t := types[i]; {
		case len(h.Options) > 0:
			f.Input = "select"
		case t.Kind() == reflect.Slice:
			f.Input, f.List = "textarea", true
		case h.Long:
			f.Input = "textarea"
		case t.Kind() == reflect.Bool || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
			f.Input = "checkbox"
		case t.Kind() == reflect.Int || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Int:
			f.Input = "number"
		}
		fields = append(fields, f)
	}
	return fields
}

// analysisFormData is the page of one analysis's form.
type analysisFormData struct {
	Slug, Summary, Path, Cost string
	Fields                    []formField
	Submission                string // the form's idempotency key, kept across checks
	Error                     string // an error that names no field
	Checked                   bool   // a dry run passed: Price, Balance and Rule are set
	Price, Balance, After     int    // Price is what the run reserves, the most it can cost
	Rule                      string // what of Price the answer is charged (Analysis.SettleRule)
}

func (d *Dashboard) formData(a report.Analysis) analysisFormData {
	return analysisFormData{Slug: slug(a), Summary: a.Summary, Path: a.Path, Cost: a.CostText(),
		Fields: newForm(a), Submission: uuid.NewString()}
}

func (d *Dashboard) routeAnalysis(c *fiber.Ctx) (report.Analysis, error) {
	a, ok := analysisBySlug(c.Params("slug"))
	if !ok {
		return a, apperr.New(apperr.NotFound, "There is no such analysis.")
	}
	return a, nil
}

func (d *Dashboard) analysisForm(c *fiber.Ctx) error {
	a, err := d.routeAnalysis(c)
	if err != nil {
		return err
	}
	return d.renderForm(c, fiber.StatusOK, d.formData(a))
}

func (d *Dashboard) renderForm(c *fiber.Ctx, status int, data analysisFormData) error {
	return d.render(c, status, "analysis", view{Title: data.Summary, Nav: "new", Data: data})
}

// submitAnalysis reads the form into the analysis's request and checks it as the API does.
// "Check cost" answers the dry run (cost, balance, balance after); "Run" submits through the
// job path under the form's idempotency key, so a form sent twice starts one job and is
// charged once, then shows the job's page.
func (d *Dashboard) submitAnalysis(c *fiber.Ctx) error {
	a, err := d.routeAnalysis(c)
	if err != nil {
		return err
	}
	s, _ := sessionOf(c)
	data := d.formData(a)
	if sub := c.FormValue("submission"); uuid.Validate(sub) == nil {
		data.Submission = strings.Clone(sub)
	}
	req, err := readForm(c, a, data.Fields)
	if err == nil {
		err = d.check(c.UserContext(), a, req)
	}
	if err == nil {
		_, err = d.Gate.Admit(c.UserContext(), s.Account.ID)
	}
	if err != nil {
		return d.formError(c, &data, err)
	}
	cost := a.CostOf(req)
	if c.FormValue("action") != "run" {
		balance, err := d.Ledger.Balance(c.UserContext(), s.Account.ID)
		if err != nil {
			return err
		}
		data.Price, data.Balance, data.After, data.Rule = cost, balance, balance-cost, a.SettleRule(req)
		if balance < cost {
			return d.formError(c, &data, apperr.New(apperr.InsufficientCredits,
				"This analysis costs %d credits and your balance is %d. Upgrade your plan or wait for the next credit period.", cost, balance))
		}
		data.Checked = true
		return d.renderForm(c, fiber.StatusOK, data)
	}
	j, err := d.Jobs.Submit(c.UserContext(), job.Submission{AccountID: s.Account.ID, Kind: string(a.Kind),
		Endpoint: a.Path, Cost: cost, Request: req, IdempotencyKey: "dashboard-" + data.Submission,
		Source: job.SourceDashboard})
	if e, ok := apperr.As(err); ok && e.Code == apperr.IdempotencyKeyReused {
		data.Submission = uuid.NewString()
		return d.formError(c, &data, apperr.Invalid("This form already started an analysis with other values. Check the values and run it again to start a new one."))
	}
	if err != nil {
		return d.formError(c, &data, err)
	}
	return c.Redirect(Path+"/jobs/"+j.ID.String(), fiber.StatusSeeOther)
}

// check validates and normalises the request as the API does, then runs its preflight.
func (d *Dashboard) check(ctx context.Context, a report.Analysis, req report.Request) error {
	if err := req.Normalize(d.AnalysisOptions); err != nil {
		return err
	}
	if d.preflight != nil {
		return d.preflight(ctx, a, req)
	}
	return nil
}

// fieldOf reads the field a validation message is about: its first word, as the request
// types' messages begin ("domain must be…", "competitors[1] is…"; "competitor x.com
// resolves…" from the address checks).
var fieldOf = regexp.MustCompile(`^([a-z_]+)(\[\d+\])?\s`)

// formError shows an application error next to the field it names, or above the form; any
// other error is the error page's.
func (d *Dashboard) formError(c *fiber.Ctx, data *analysisFormData, err error) error {
	e, ok := apperr.As(err)
	if !ok {
		return err
	}
	data.Checked = false
	placed := false
	if m := fieldOf.FindStringSubmatch(e.Message); m != nil && e.Code == apperr.Validation {
		for i := range data.Fields {
			if f := &data.Fields[i]; f.Name == m[1] || f.Name == m[1]+"s" {
				f.Error, placed = e.Message, true
				break
			}
		}
	}
	if !placed {
		data.Error = e.Message
	}
	status := statusOf(e.Code)
	if e.Code == apperr.InsufficientCredits {
		status = fiber.StatusPaymentRequired
	}
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	return d.renderForm(c, status, *data)
}

// readForm fills the form's fields from the posted values (kept for the page shown again)
// and decodes them into a request of the analysis, as the API decodes its JSON body: lists
// one item per line, numbers as numbers, empty fields left out.
func readForm(c *fiber.Ctx, a report.Analysis, fields []formField) (report.Request, error) {
	body := map[string]any{}
	var bad error
	for i := range fields {
		f := &fields[i]
		v := strings.Clone(c.FormValue(f.Name))
		f.Value = v
		switch f.Input {
		case "checkbox":
			f.Checked = v != ""
			body[f.Name] = f.Checked
		case "textarea":
			if !f.List {
				body[f.Name] = v
				continue
			}
			var items []string
			for line := range strings.Lines(v) {
				if line = strings.TrimSpace(line); line != "" {
					items = append(items, line)
				}
			}
			if items != nil {
				body[f.Name] = items
			}
		case "number":
			if v = strings.TrimSpace(v); v == "" {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil && bad == nil {
				bad = apperr.Invalid("%s must be a whole number", f.Name)
			}
			body[f.Name] = n
		default:
			if v != "" {
				body[f.Name] = v
			}
		}
	}
	if bad != nil {
		return nil, bad
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req := a.NewRequest()
	if err := json.Unmarshal(raw, req); err != nil {
		return nil, apperr.Invalid("the form's values do not fit the request: %v", err)
	}
	return req, nil
}
