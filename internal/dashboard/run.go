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
	"github.com/contentapi/contentapi/internal/keywords"
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
	Name    string // the JSON field's name, which the API's messages use ("filters.cpc" for a filter)
	Label   string
	Hint    string
	Input   string // text, textarea, number, checkbox, select, range (a min and a max), choices (checkboxes) or order (sort keys)
	List    bool   // a list: one item per line (textarea) or per word (text)
	Options []string
	Labels  []string // the options' labels, when they are not the options themselves
	Value   string
	Max     string     // a range's upper end (Value is its lower)
	Chosen  []string   // a choices field's checked options
	Keys    []orderKey // an order field's rows, one per key the endpoint takes
	Checked bool
	Error   string
}

// orderKey is one row of an order field: a field to sort on and its direction ("asc" or
// "desc"); a row whose field is empty is left out.
type orderKey struct {
	N          int // the row's place, from 1
	Field, Dir string
	Invalid    bool // the key the field's error is about
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

// newForm is the empty form of an analysis, its fields in the request's order; a keyword
// analysis's order_by and filters are those its endpoint takes (report.ShapeOf).
func newForm(a report.Analysis) []formField {
	names, types := requestFields(reflect.TypeOf(a.NewRequest()))
	fields := make([]formField, 0, len(names))
	shape, paged := report.ShapeOf(a.Kind)
	for i, name := range names {
		if name == "order_by" && paged {
			if len(shape.Order) > 0 {
				fields = append(fields, orderField(shape))
			}
			continue
		}
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
	if paged {
		fields = append(fields, filterFields(shape)...)
	}
	return fields
}

// fieldLabels name the keyword fields a query filters and sorts on.
var fieldLabels = map[keywords.Field]string{
	keywords.FieldKeyword:            "Keyword",
	keywords.FieldSearchVolume:       "Search volume",
	keywords.FieldDifficulty:         "Keyword difficulty",
	keywords.FieldCPC:                "CPC",
	keywords.FieldOpportunity:        "Opportunity score",
	keywords.FieldCompetitorPosition: "Competitor's position",
	keywords.FieldPosition:           "Position",
	keywords.FieldTraffic:            "Estimated traffic",
}

func fieldLabel(f keywords.Field) string {
	if l, ok := fieldLabels[f]; ok {
		return l
	}
	return humanize(string(f))
}

// orderField offers as many sort keys as order_by takes (no more than the endpoint has
// fields to sort on): each a select of those fields and one of the direction.
func orderField(shape report.QueryShape) formField {
	f := formField{Name: "order_by", Label: "Order by", Input: "order",
		Hint: "Which rows come first. Each next key orders the rows the keys before it tie on; the keyword breaks remaining ties. High to low sorts the keyword Z to A. Default order keeps the endpoint's own."}
	for _, k := range shape.Order {
		f.Options = append(f.Options, string(k))
		f.Labels = append(f.Labels, fieldLabel(k))
	}
	for n := range min(report.MaxOrderKeys, len(shape.Order)) {
		f.Keys = append(f.Keys, orderKey{N: n + 1, Dir: "desc"})
	}
	return f
}

// filterFields are the filters the endpoint applies: a range per metric it bounds, then
// the intents and the words a keyword must or must not hold (every keyword endpoint takes
// those).
func filterFields(shape report.QueryShape) []formField {
	var out []formField
	for _, k := range shape.Ranges {
		out = append(out, formField{Name: "filters." + string(k), Label: fieldLabel(k), Input: "range",
			Hint: "Optional: keep rows with a value in this range (either end may be empty)."})
	}
	out = append(out,
		formField{Name: "filters.intent", Label: "Search intent", Input: "choices", Options: report.Intents,
			Hint: "Optional: keep keywords with one of these intents; none checked keeps all."},
		formField{Name: "filters.include", Label: "Keywords containing", Input: "text", List: true,
			Hint: "Optional: words every keyword must hold, separated by spaces."},
		formField{Name: "filters.exclude", Label: "Keywords not containing", Input: "text", List: true,
			Hint: "Optional: words no keyword may hold, separated by spaces."})
	return out
}

// analysisFormData is the page of one analysis's form.
type analysisFormData struct {
	Slug, Summary, Path, Cost string
	Fields                    []formField
	Submission                string // the form's idempotency key, kept across checks
	// Cursor continues an earlier answer: the form opened from a job's "Next page" asks
	// that job's request again with its next_cursor.
	Cursor                string
	Error                 string // an error that names no field
	Checked               bool   // a dry run passed: Price, Balance and Rule are set
	Price, Balance, After int    // Price is what the run reserves, the most it can cost
	Rule                  string // what of Price the answer is charged (Analysis.SettleRule)
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
	data := d.formData(a)
	if from := c.Query("from"); from != "" {
		if err := d.continueJob(c, a, &data, from); err != nil {
			return err
		}
	}
	return d.renderForm(c, fiber.StatusOK, data)
}

// continueJob fills a form from one of the account's jobs of the analysis: its request,
// and the cursor of its answer's next page.
func (d *Dashboard) continueJob(c *fiber.Ctx, a report.Analysis, data *analysisFormData, from string) error {
	s, _ := sessionOf(c)
	id, err := uuid.Parse(from)
	if err != nil {
		return apperr.New(apperr.NotFound, "Job not found.")
	}
	j, err := d.Jobs.Get(c.UserContext(), s.Account.ID, id)
	if err != nil {
		return err
	}
	if j.Kind != string(a.Kind) {
		return apperr.New(apperr.NotFound, "Job not found.")
	}
	prefill(data.Fields, j.Request)
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	if json.Unmarshal(j.Result, &page) == nil && page.NextCursor != nil {
		data.Cursor = *page.NextCursor
	}
	return nil
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
	data.Cursor = strings.Clone(strings.TrimSpace(c.FormValue("cursor")))
	req, err := readForm(c, a, data.Fields)
	if err == nil {
		err = d.check(c.UserContext(), a, req)
	}
	if err == nil {
		err = d.checkCursor(a, req, s.Account.ID.String())
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

// checkCursor refuses, before anything is charged, a cursor that is altered, expired,
// another account's or sent with other values, as the API does.
func (d *Dashboard) checkCursor(a report.Analysis, req report.Request, account string) error {
	p, ok := req.(report.PagedRequest)
	if !ok || p.PageQuery().Cursor == "" || d.Cursors == nil {
		return nil
	}
	_, err := d.Cursors.Open(a.Kind, account, p, d.Clock.Now())
	return err
}

// fieldOf reads the field a validation message is about: its first word, as the request
// types' messages begin ("domain must be…", "competitors[1] is…"; "competitor x.com
// resolves…" from the address checks).
var fieldOf = regexp.MustCompile(`^([a-z_]+(?:\.[a-z_]+)?)(?:\.min|\.max)?(\[\d+\])?:?\s`)

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
				f.markKey(m[2])
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

// markKey marks the order key a message's index names ("[1]" in "order_by[1] names…"):
// the index counts the rows filled in, as readForm sends them.
func (f *formField) markKey(index string) {
	n, err := strconv.Atoi(strings.Trim(index, "[]"))
	if err != nil {
		return
	}
	for i := range f.Keys {
		if f.Keys[i].Field == "" {
			continue
		}
		if n == 0 {
			f.Keys[i].Invalid = true
			return
		}
		n--
	}
}

// readForm fills the form's fields from the posted values (kept for the page shown again)
// and decodes them into a request of the analysis, as the API decodes its JSON body: lists
// one item per line (or per word), numbers as numbers, a filter under "filters", the order
// keys filled in as "<field>.<direction>" in their rows' order, empty fields left out. A
// cursor the form carries (the next page of an answer) goes with them.
func readForm(c *fiber.Ctx, a report.Analysis, fields []formField) (report.Request, error) {
	body := map[string]any{}
	filters := map[string]any{}
	// put sets a request field, or a filter for "filters.<key>".
	put := func(name string, v any) {
		if key, ok := strings.CutPrefix(name, "filters."); ok {
			filters[key] = v
			return
		}
		body[name] = v
	}
	var bad error
	number := func(name, v string, whole bool) (any, bool) {
		if v = strings.TrimSpace(v); v == "" {
			return nil, false
		}
		if whole {
			n, err := strconv.Atoi(v)
			if err != nil && bad == nil {
				bad = apperr.Invalid("%s must be a whole number", name)
			}
			return n, true
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil && bad == nil {
			bad = apperr.Invalid("%s must be a number", name)
		}
		return x, true
	}
	for i := range fields {
		f := &fields[i]
		v := strings.Clone(c.FormValue(f.Name))
		f.Value = v
		switch f.Input {
		case "checkbox":
			f.Checked = v != ""
			body[f.Name] = f.Checked
		case "choices":
			f.Chosen = nil
			for _, x := range c.Request().PostArgs().PeekMulti(f.Name) {
				f.Chosen = append(f.Chosen, string(x))
			}
			if len(f.Chosen) > 0 {
				put(f.Name, f.Chosen)
			}
		case "range":
			f.Value, f.Max = strings.Clone(c.FormValue(f.Name+".min")), strings.Clone(c.FormValue(f.Name+".max"))
			r := map[string]any{}
			if x, ok := number(f.Name+".min", f.Value, false); ok {
				r["min"] = x
			}
			if x, ok := number(f.Name+".max", f.Max, false); ok {
				r["max"] = x
			}
			if len(r) > 0 {
				put(f.Name, r)
			}
		case "order":
			var keys []string
			for j := range f.Keys {
				k := &f.Keys[j]
				row := f.Name + "." + strconv.Itoa(k.N)
				k.Field, k.Dir = strings.Clone(c.FormValue(row+".field")), strings.Clone(c.FormValue(row+".dir"))
				if k.Field != "" {
					keys = append(keys, k.Field+"."+k.Dir)
				}
			}
			if keys != nil {
				put(f.Name, keys)
			}
		case "textarea":
			if !f.List {
				put(f.Name, v)
				continue
			}
			var items []string
			for line := range strings.Lines(v) {
				if line = strings.TrimSpace(line); line != "" {
					items = append(items, line)
				}
			}
			if items != nil {
				put(f.Name, items)
			}
		case "number":
			if x, ok := number(f.Name, v, true); ok {
				put(f.Name, x)
			}
		default:
			switch {
			case v == "":
			case f.List:
				if words := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || isSpace(r) }); len(words) > 0 {
					put(f.Name, words)
				}
			default:
				put(f.Name, v)
			}
		}
	}
	if bad != nil {
		return nil, bad
	}
	if len(filters) > 0 {
		body["filters"] = filters
	}
	if cur := strings.TrimSpace(c.FormValue("cursor")); cur != "" {
		body["cursor"] = strings.Clone(cur)
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

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// prefill sets the form's fields from a stored request (the JSON the API took), so that a
// form opened from a job asks the same again.
func prefill(fields []formField, request json.RawMessage) {
	var body map[string]any
	if json.Unmarshal(request, &body) != nil {
		return
	}
	filters, _ := body["filters"].(map[string]any)
	for i := range fields {
		f := &fields[i]
		var v any
		if key, ok := strings.CutPrefix(f.Name, "filters."); ok {
			v = filters[key]
		} else {
			v = body[f.Name]
		}
		switch x := v.(type) {
		case string:
			f.Value = x
		case bool:
			f.Checked = x
		case float64:
			f.Value = strconv.FormatFloat(x, 'f', -1, 64)
		case map[string]any: // a range
			if m, ok := x["min"].(float64); ok {
				f.Value = strconv.FormatFloat(m, 'f', -1, 64)
			}
			if m, ok := x["max"].(float64); ok {
				f.Max = strconv.FormatFloat(m, 'f', -1, 64)
			}
		case []any:
			var items []string
			for _, e := range x {
				if s, ok := e.(string); ok {
					items = append(items, s)
				}
			}
			switch f.Input {
			case "choices":
				f.Chosen = items
			case "order":
				for j := range min(len(items), len(f.Keys)) {
					f.Keys[j].Field, f.Keys[j].Dir, _ = strings.Cut(items[j], ".")
				}
			case "textarea":
				f.Value = strings.Join(items, "\n")
			default:
				f.Value = strings.Join(items, " ")
			}
		}
	}
}
