package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Data sources an answer names in meta.data_source.
const (
	// sourceSynthetic: every keyword row behind the answer is made up (the sample set).
	sourceSynthetic = "synthetic"
	// sourceMixed: some keyword rows behind the answer are made up, some are not.
	sourceMixed = "mixed"
	// sourceImported: the rows are keyword data imported into this service's database.
	sourceImported = "imported"
	// sourceProvider: the rows come from the external keyword-data provider (DataForSEO).
	sourceProvider = "provider"
	// sourceCrawl: the answer rests on the crawl alone (content audit), no keyword data.
	sourceCrawl = "crawl"
)

// Meta is what an answer adds to the API's meta (docs/api.md): where its data came from and what the
// caller should know about it. The job stores it beside the result (job.Described).
type Meta struct {
	DataSource string   `json:"data_source"`
	Warnings   []string `json:"warnings"`
}

// syntheticWarning is the warning of an answer built only on synthetic rows.
const syntheticWarning = "This answer is built on the synthetic sample data set (ctl seed-sample): its keywords, " +
	"volumes, difficulties, CPCs and rankings are made up, not search data."

// rows counts the keyword rows an answer was built on, synthetic or not; made says what a
// made-up row is when the rows are not keyword rows ("" is "keyword rows are made up").
type rows struct {
	synthetic, real int
	made            string
}

// flag counts one row, made up or not.
func (c *rows) flag(synthetic bool) {
	if synthetic {
		c.synthetic++
	} else {
		c.real++
	}
}

func (c *rows) add(ks ...keywords.Keyword) {
	for _, k := range ks {
		c.flag(k.Synthetic)
	}
}

func (c *rows) addRankings(rs []keywords.Ranking) {
	for _, r := range rs {
		c.add(r.Keyword)
	}
}

func (c *rows) addGaps(gs []keywords.Gap) {
	for _, g := range gs {
		c.add(g.Keyword)
	}
}

// meta is the answer's Meta for the rows it was built on and its own warnings (which it
// keeps first). A provider other than the local one is "provider"; the local provider's
// rows are "imported", "synthetic" or "mixed", with a warning whenever any is made up.
func (b *Builder) meta(c rows, warnings []string) Meta {
	m := Meta{DataSource: sourceProvider, Warnings: append([]string{}, warnings...)}
	if b.Keywords.Name() != keywords.LocalName {
		return m
	}
	switch {
	case c.synthetic > 0 && c.real == 0:
		m.DataSource = sourceSynthetic
		m.Warnings = append(m.Warnings, syntheticWarning)
	case c.synthetic > 0:
		m.DataSource = sourceMixed
		m.Warnings = append(m.Warnings, fmt.Sprintf("Part of this answer is built on the synthetic sample data set "+
			"(ctl seed-sample): %d of its %d %s, not search data.", c.synthetic, c.synthetic+c.real,
			cmp.Or(c.made, "keyword rows are made up")))
	default:
		m.DataSource = sourceImported
	}
	return m
}

// described carries an answer's Meta, and the credits it costs when that depends on what it
// holds, inside its result without showing in the result's JSON: results embed it, and it
// makes them job.Described and job.Charged.
type described struct {
	meta Meta
	// charge is the answer's price for what it holds (Analysis.Settle); nil: the price
	// reserved.
	charge *int
}

// AnswerMeta is the answer's Meta.
func (d described) AnswerMeta() any { return d.meta }

// Charge is the credits the answer costs, when set: the job settles that much of its
// reservation and gives the rest back.
func (d described) Charge() (int, bool) {
	if d.charge == nil {
		return 0, false
	}
	return *d.charge, true
}

// settle prices the answer of req by the items it holds (Analysis.Settle of kind).
func (d *described) settle(kind Kind, req Request, items int) {
	a, ok := priced[kind]
	if !ok {
		return
	}
	n := a.Settle(req, items)
	d.charge = &n
}

// priced is Catalog by kind, for the answers that price themselves (Catalog's run functions
// build them, so they cannot read Catalog itself while it is initialised).
var priced = map[Kind]Analysis{}

func init() {
	for _, a := range Catalog {
		priced[a.Kind] = a
	}
}

// planMeta is the Meta of a plan (recommend, content map): built on the domain's rankings,
// the ideas and the gaps, with the plan's warnings and the competitors without ranking data.
func (b *Builder) planMeta(country, language string, g *gathered, warnings []string) Meta {
	var c rows
	c.addRankings(g.ranked)
	c.add(g.ideas...)
	c.addGaps(g.gaps)
	if w := unrankedWarning(g.unranked, country, language); w != "" {
		warnings = append(slices.Clone(warnings), w)
	}
	return b.meta(c, warnings)
}

// unrankedWarning names the competitors the provider holds no ranking data for, or "".
func unrankedWarning(unranked []string, country, language string) string {
	if len(unranked) == 0 {
		return ""
	}
	return fmt.Sprintf("This service holds no ranking data for %s in %s/%s: the gaps are those of the other competitors.",
		quotedList(unranked), country, language)
}

// StoredMeta decodes a job's stored meta; ok is false when the job has none (a job stored
// before answers carried it) or it cannot be read.
func StoredMeta(raw []byte) (m Meta, ok bool) {
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.DataSource == "" {
		return Meta{}, false
	}
	if m.Warnings == nil {
		m.Warnings = []string{}
	}
	return m, true
}
