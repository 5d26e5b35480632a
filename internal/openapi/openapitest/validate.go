// Package openapitest checks the API against its OpenAPI document (internal/openapi): the
// document against the OpenAPI 3.1 schema, and answers and webhooks against the document.
// It is imported by tests only, so the validator library (libopenapi-validator and its
// JSON Schema engine) is linked into test binaries and never into the api binary.
package openapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/contentapi/contentapi/internal/openapi"
)

// ErrUndocumented is returned (wrapped) by ValidateResponse for an operation the document
// does not describe that answered anything but a documented 404.
var ErrUndocumented = errors.New("openapi: operation not in the document")

// The validator is built on first use, once per test binary.
var (
	buildOnce sync.Once
	built     *checker
	buildErr  error
)

// checker holds the document's model and its validators. libopenapi-validator keeps
// caches, so calls are serialised.
type checker struct {
	mu      sync.Mutex
	doc     libopenapi.Document
	model   *v3.Document
	v       validator.Validator
	lenient validator.Validator // without strict mode, for the document's own answer
	schemas schema_validation.SchemaValidator
	// routing holds, by status, the bodies of a routing refusal, which no operation
	// documents: 404 for an unknown path, 405 for a method the path does not take (each in
	// the validation or the billing shape).
	routing map[int][]*base.Schema
	// maps names the properties whose values are maps (additionalProperties with a schema,
	// no declared properties: competitor_positions, endpoints). Strict mode reports their
	// keys as undeclared; their values are still checked against the schema.
	maps map[string]bool
}

func load() (*checker, error) {
	buildOnce.Do(func() {
		built, buildErr = newChecker(openapi.JSON(""))
	})
	return built, buildErr
}

func newChecker(spec []byte) (*checker, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse document: %w", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi: build model: %w", err)
	}
	// Strict mode reports any property or header the document does not declare, so an
	// addition to an answer must be documented too; formats (uuid, date-time, uri, email)
	// are asserted, not just annotated.
	opts := []config.Option{config.WithFormatAssertions(), config.WithStrictMode()}
	c := &checker{doc: doc, model: &m.Model, v: validator.NewValidatorFromV3Model(&m.Model, opts...),
		lenient: validator.NewValidatorFromV3Model(&m.Model, config.WithFormatAssertions()),
		schemas: schema_validation.NewSchemaValidator(config.WithFormatAssertions()),
		maps:    mapProperties(&m.Model), routing: map[int][]*base.Schema{}}
	for status, names := range map[int][]string{
		http.StatusNotFound:         {"NotFound", "BillingNotFound"},
		http.StatusMethodNotAllowed: {"MethodNotAllowed", "BillingMethodNotAllowed"},
	} {
		for _, name := range names {
			r := m.Model.Components.Responses.GetOrZero(name)
			if r == nil {
				return nil, fmt.Errorf("openapi: components.responses.%s is missing", name)
			}
			mt := r.Content.GetOrZero("application/json")
			if mt == nil || mt.Schema == nil {
				return nil, fmt.Errorf("openapi: components.responses.%s has no JSON schema", name)
			}
			c.routing[status] = append(c.routing[status], mt.Schema.Schema())
		}
	}
	return c, nil
}

// ValidateDocument checks the document against the OpenAPI 3.1 specification's JSON schema
// (libopenapi-validator's embedded copy) and builds its model, so every $ref resolves.
func ValidateDocument() error {
	if _, err := load(); err != nil {
		return err
	}
	return validateSpec(openapi.JSON(""))
}

func validateSpec(spec []byte) error {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return fmt.Errorf("openapi: parse document: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return fmt.Errorf("openapi: %w", errors.Join(errs...))
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return describe("the document does not conform to OpenAPI 3.1", verrs)
	}
	return nil
}

// ValidateResponse checks one answer of the API against the document: that its status is
// documented for the operation, and that its headers and body match that response's
// headers and schema (strictly: no undocumented property or header). path is the request's
// path (a query is ignored) or the document's template ("/v1/jobs/{id}"). A 404 from a path
// the document does not describe must be the documented NOT_FOUND body, a 405 from a method
// a documented path does not take the documented METHOD_NOT_ALLOWED body with an Allow
// header; any other answer from either is ErrUndocumented.
func ValidateResponse(method, path string, status int, header http.Header, body []byte) error {
	c, err := load()
	if err != nil {
		return err
	}
	if method == http.MethodHead {
		return nil // no body; GET's answer is the one documented
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	req := &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}}
	res := &http.Response{StatusCode: status, Header: header.Clone(), Request: req,
		Body: io.NopCloser(bytes.NewReader(body))}
	if res.Header == nil {
		res.Header = http.Header{}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.v
	if path == "/v1/openapi.json" {
		v = c.lenient // the document is described loosely; it describes itself
	}
	ok, verrs := v.ValidateHttpResponse(req, res)
	if !ok {
		verrs = c.withoutMapKeys(verrs)
		ok = len(verrs) == 0
	}
	if ok {
		return nil
	}
	if undocumented(verrs) {
		if schemas, ok := c.routing[status]; ok {
			if status == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
				return fmt.Errorf("openapi: %s %s: 405 without an Allow header", method, path)
			}
			for _, s := range schemas {
				if ok, _ := c.schemas.ValidateSchemaBytes(s, body); ok {
					return nil
				}
			}
			return fmt.Errorf("openapi: %s %s: %d body is not the documented routing error: %s", method, path, status, body)
		}
		return fmt.Errorf("%w: %s %s answered %d", ErrUndocumented, method, path, status)
	}
	return describe(fmt.Sprintf("%s %s answered %d, which the document does not allow", method, path, status), verrs)
}

func undocumented(errs []*liberrors.ValidationError) bool {
	for _, e := range errs {
		if (e.ValidationType == helpers.PathValidation && e.ValidationSubType == helpers.ValidationMissing) ||
			e.ValidationSubType == helpers.ValidationMissingOperation {
			return true
		}
	}
	return false
}

// describe turns the validator's findings into one readable error.
func describe(what string, errs []*liberrors.ValidationError) error {
	var b strings.Builder
	b.WriteString("openapi: ")
	b.WriteString(what)
	b.WriteString(":")
	for _, e := range errs {
		b.WriteString("\n  - ")
		b.WriteString(e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			b.WriteString(": ")
			b.WriteString(e.Reason)
		}
		for _, s := range e.SchemaValidationErrors {
			b.WriteString("\n      ")
			if s.FieldPath != "" {
				b.WriteString(s.FieldPath)
				b.WriteString(": ")
			} else if s.KeywordLocation != "" {
				b.WriteString(s.KeywordLocation)
				b.WriteString(": ")
			}
			b.WriteString(s.Reason)
		}
	}
	return errors.New(b.String())
}

// mapProperties collects the names of properties declared as maps: an object schema with
// additionalProperties as a schema and no properties of its own.
func mapProperties(m *v3.Document) map[string]bool {
	out := map[string]bool{}
	seen := map[*base.Schema]bool{}
	var walk func(s *base.Schema)
	walk = func(s *base.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Properties != nil {
			for name, p := range s.Properties.FromOldest() {
				ps := p.Schema()
				if ps != nil && ps.AdditionalProperties != nil && ps.AdditionalProperties.IsA() &&
					(ps.Properties == nil || ps.Properties.Len() == 0) {
					out[name] = true
				}
				walk(ps)
			}
		}
		for _, list := range [][]*base.SchemaProxy{s.AllOf, s.OneOf, s.AnyOf} {
			for _, p := range list {
				walk(p.Schema())
			}
		}
		if s.Items != nil && s.Items.IsA() {
			walk(s.Items.A.Schema())
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.IsA() {
			walk(s.AdditionalProperties.A.Schema())
		}
	}
	walkResponses := func(rs *v3.Responses) {
		if rs == nil {
			return
		}
		for _, r := range rs.Codes.FromOldest() {
			if r.Content == nil {
				continue
			}
			for _, mt := range r.Content.FromOldest() {
				if mt.Schema != nil {
					walk(mt.Schema.Schema())
				}
			}
		}
	}
	if m.Paths != nil {
		for _, item := range m.Paths.PathItems.FromOldest() {
			for _, op := range item.GetOperations().FromOldest() {
				walkResponses(op.Responses)
			}
		}
	}
	return out
}

// withoutMapKeys drops strict mode's reports of keys of map properties.
func (c *checker) withoutMapKeys(errs []*liberrors.ValidationError) []*liberrors.ValidationError {
	out := errs[:0:0]
	for _, e := range errs {
		if e.ValidationType == liberrors.StrictValidationType && e.ValidationSubType == liberrors.StrictSubTypeProperty &&
			c.maps[parentName(e.Message, e.ParameterName)] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// parentName finds, in strict mode's message "response property 'NAME' at 'PATH' is not
// declared in schema", the name of the object holding NAME ("competitor_positions" of
// "$.body.data.gaps[0].competitor_positions['a.example']").
func parentName(message, name string) string {
	_, rest, ok := strings.Cut(message, "' at '")
	if !ok {
		return ""
	}
	path, _, ok := strings.Cut(rest, "' is not declared")
	if !ok {
		return ""
	}
	for _, suffix := range []string{"['" + name + "']", "." + name} {
		if strings.HasSuffix(path, suffix) {
			path = strings.TrimSuffix(path, suffix)
			break
		}
	}
	for strings.HasSuffix(path, "]") && !strings.HasSuffix(path, "']") { // array indexes
		i := strings.LastIndex(path, "[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	if strings.HasSuffix(path, "']") {
		i := strings.LastIndex(path, "['")
		return path[i+2 : len(path)-2]
	}
	return path[strings.LastIndex(path, ".")+1:]
}

// ValidateWebhook checks a request the API sends to its callers (a webhook of the
// document, such as "jobFinished") against the document: its required headers and its
// JSON body.
func ValidateWebhook(name string, header http.Header, body []byte) error {
	c, err := load()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	item := c.model.Webhooks.GetOrZero(name)
	if item == nil || item.Post == nil {
		return fmt.Errorf("%w: webhook %s", ErrUndocumented, name)
	}
	op := item.Post
	var problems []string
	for _, p := range op.Parameters {
		if p.In != "header" {
			continue
		}
		v := header.Get(p.Name)
		if v == "" {
			if p.Required != nil && *p.Required {
				problems = append(problems, "header "+p.Name+" is missing")
			}
			continue
		}
		if p.Schema != nil {
			raw, _ := json.Marshal(v)
			if ok, errs := c.schemas.ValidateSchemaBytes(p.Schema.Schema(), raw); !ok {
				problems = append(problems, describe("header "+p.Name+" = "+v+" is not as documented", errs).Error())
			}
		}
	}
	if op.RequestBody != nil {
		mt := op.RequestBody.Content.GetOrZero("application/json")
		if mt == nil || mt.Schema == nil {
			return fmt.Errorf("openapi: webhook %s has no JSON body schema", name)
		}
		if ok, errs := c.schemas.ValidateSchemaBytes(mt.Schema.Schema(), body); !ok {
			problems = append(problems, describe("the body is not as documented", errs).Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("openapi: webhook %s: %s", name, strings.Join(problems, "; "))
	}
	return nil
}
