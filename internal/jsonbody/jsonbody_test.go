package jsonbody

import (
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/report"
)

func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		body string
		into func() any
		msg  string // "" when the body must be accepted
	}{
		{`{"domain":"example.com","callback_url":"https://h.example/x"}`, research, ""},
		{`{"domain":"a.com","topic":"line one\nline\ttwo\r"}`, research, ""},
		// Field names match exactly: another case is an unknown field, not the field.
		{`{"domAin":"example.com"}`, research, `unknown field "domAin"`},
		{`{"Domain":"example.com"}`, research, `unknown field "Domain"`},
		{`{"domain":"example.com","Callback_URL":"https://h.example"}`, research, `unknown field "Callback_URL"`},
		{`{"email":"a@example.com","nmae":"x"}`, register, `unknown field "nmae"`},
		{`{"domain":"a.com","domain":"b.com"}`, research, `duplicate field "domain"`},
		// Wrong types keep their messages, and name the element of a list.
		{`{"email":42}`, register, "email must be a string"},
		{`{"domain":"a.com","limit":"ten"}`, research, "limit must be a number"},
		{`{"domain":"a.com","limit":1.5}`, research, "limit must be a number"},
		{`{"domain":"a.com","keywords":"coffee"}`, research, "keywords must be an array"},
		{`{"domain":"a.com","keywords":["a",1]}`, research, "keywords[1] must be a string"},
		// Syntax and shape.
		{`not json`, research, "not valid JSON (at byte 1)"},
		{`{"domain":`, research, "not valid JSON"},
		{``, research, "must be a JSON object"},
		{"  \n", research, "must be a JSON object"},
		{`[]`, research, "must be a JSON object"},
		{`null`, research, "must be a JSON object"},
		{`"a.com"`, research, "must be a JSON object"},
		{`{} {}`, research, "single JSON object"},
		{`{}}`, research, "single JSON object"},
		// NUL and other control characters, escaped or raw, in any string field.
		{`{"domain":"a.com\u0000"}`, research, "domain must not contain NUL"},
		{"{\"domain\":\"a.com\x00\"}", research, "not valid JSON"}, // raw controls are not JSON at all
		{`{"domain":"a.com","topic":"x\u0000y"}`, research, "topic must not contain NUL"},
		{`{"domain":"a.com","keywords":["ok","b\u0000"]}`, research, "keywords[1] must not contain NUL"},
		{`{"domain":"a.com","topic":"bell\u0007"}`, research, "topic must not contain NUL or other control characters"},
		{`{"domain":"a.com","topic":"del\u007f"}`, research, "topic must not contain"},
		{`{"email":"a@example.com","name":"k\u0000"}`, register, "name must not contain NUL"},
		{`{"email":"a\u0000@example.com"}`, register, "email must not contain NUL"},
		{`{"plan":"pro","metadata":{"order":"x\u0000"}}`, checkout, "metadata.order must not contain NUL"},
		{`{"plan":"pro","metadata":{"o\u0000":"x"}}`, checkout, "field names must not contain NUL"},
		{`{"plan":"pro","metadata":{"list":[{"a":"\u0001"}]}}`, checkout, "metadata.list[0].a must not contain"},
		// Invalid UTF-8 is refused, naming the field, not replaced.
		{"{\"domain\":\"a\xff.com\"}", research, "domain must be valid UTF-8"},
		{"{\"email\":\"a@example.com\",\"name\":\"\xc3\"}", register, "name must be valid UTF-8"},
		{`{"domain":"\ud800.com"}`, research, "not valid JSON"},
	}
	for _, c := range cases {
		err := Decode([]byte(c.body), c.into())
		if c.msg == "" {
			if err != nil {
				t.Errorf("%q: %v", c.body, err)
			}
			continue
		}
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Validation || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%q: got %v, want a validation error with %q", c.body, err, c.msg)
		}
	}
}

// registerRequest is the body of POST /v1/auth/register.
type registerRequest struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// checkoutRequest has the shape of POST /v1/billing/checkout's body (free-form metadata).
type checkoutRequest struct {
	Plan     string         `json:"plan"`
	Metadata map[string]any `json:"metadata"`
}

func research() any { return &report.ResearchRequest{} }
func register() any { return &registerRequest{} }
func checkout() any { return &checkoutRequest{} }
