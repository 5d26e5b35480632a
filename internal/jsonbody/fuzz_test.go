package jsonbody

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/report"
)

// FuzzDecodeRequest feeds one body to the decoder and Normalize of every analysis request
// kind and to registration. Nothing may panic; whatever is accepted holds no control
// character but tab, CR and LF, names only valid public domains, normalises to itself again,
// and is read back by the worker as the same request (it decodes stored requests without
// normalising them again).
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"domain":"coffee-sample.example","topic":"coffee"}`,
		`{"domain":"example.com","keywords":["cold brew","espresso"],"country":"uk","language":"en","limit":20}`,
		`{"domain":"example.com","competitors":["rival.com","www.other.co.uk"],"country":"us","limit":50}`,
		`{"domain":"https://www.Example.com/blog","sitemap_url":"https://example.com/sitemap.xml","max_pages":25}`,
		`{"domain":"example.com","focus_topics":["running shoes"],"brand_context":"We sell shoes.\nSince 1990.","competitors":["b.com"],"limit":5}`,
		`{"domain":"bücher.example","callback_url":"https://hooks.example.org/contentapi?x=1"}`,
		`{"email":"you@example.com","name":"laptop"}`,
		`{"email":" Ann@Example.COM "}`,
		`{"domain":"a.com","competitors":["a.com."]}`,
		`{"domain":"127.1"}`,
		`{"domain":"0x7f.1","competitors":["2130706433"]}`,
		`{"domAin":"example.com"}`,
		`{"domain":"example.com","topic":"x\u0000"}`,
		`{"email":"a@example.com","name":"\u0000"}`,
		"{\"domain\":\"a\xff.com\"}",
		`{"domain":"a..com","limit":1e400}`,
		`{"domain":"example.com"} {}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, spec := range report.Catalog {
			req := spec.NewRequest()
			if Decode(body, req) != nil {
				continue
			}
			checkText(t, string(spec.Kind)+" decoded", reflect.ValueOf(req))
			if req.Normalize(report.Options{}) != nil {
				continue
			}
			checkText(t, string(spec.Kind)+" normalised", reflect.ValueOf(req))
			for _, d := range domainsOf(t, req) {
				if !publicDomain(d) {
					t.Fatalf("%s accepted the domain %q from %q", spec.Kind, d, body)
				}
			}
			stored, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			read, err := spec.ReadStored(stored)
			if err != nil {
				t.Fatalf("%s: stored request %s cannot be read: %v", spec.Kind, stored, err)
			}
			if back, _ := json.Marshal(read); !bytes.Equal(back, stored) {
				t.Fatalf("%s: stored request %s reads back as %s", spec.Kind, stored, back)
			}
			again := spec.NewRequest()
			if err := Decode(stored, again); err != nil {
				t.Fatalf("%s: stored request %s does not decode: %v", spec.Kind, stored, err)
			}
			if err := again.Normalize(report.Options{}); err != nil {
				t.Fatalf("%s: stored request %s does not normalise: %v", spec.Kind, stored, err)
			}
			if twice, _ := json.Marshal(again); !bytes.Equal(twice, stored) {
				t.Fatalf("%s: normalising twice changed %s into %s", spec.Kind, stored, twice)
			}
		}
		var reg registerRequest
		if Decode(body, &reg) != nil {
			return
		}
		checkText(t, "register decoded", reflect.ValueOf(&reg))
		if email, err := auth.NormalizeEmail(reg.Email); err == nil {
			checkText(t, "email", reflect.ValueOf(email))
			if at := strings.LastIndexByte(email, '@'); at < 0 || !publicDomain(email[at+1:]) {
				t.Fatalf("accepted the e-mail address %q from %q", email, body)
			}
		}
		if name, err := auth.KeyName(reg.Name); err == nil {
			checkText(t, "key name", reflect.ValueOf(name))
		}
	})
}

// checkText fails on a string anywhere in v holding a control character but tab, CR and LF,
// or invalid UTF-8.
func checkText(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkText(t, what, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			checkText(t, what, v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			checkText(t, what, v.Index(i))
		}
	case reflect.String:
		if s := v.String(); hasControl(s) || !utf8.ValidString(s) {
			t.Fatalf("%s: accepted %q", what, s)
		}
	}
}

// domainsOf lists every host an accepted request names.
func domainsOf(t *testing.T, req report.Request) []string {
	t.Helper()
	var out []string
	host := func(raw string) {
		if raw == "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted the URL %q: %v", raw, err)
		}
		out = append(out, u.Host)
	}
	host(req.CallbackTarget())
	switch r := req.(type) {
	case *report.ResearchRequest:
		out = append(out, r.Domain)
	case *report.GapsRequest:
		out = append(append(out, r.Domain), r.Competitors...)
	case *report.RankingsRequest:
		out = append(out, r.Domain)
	case *report.CompetitorsRequest:
		out = append(out, r.Domain)
	case *report.AuditRequest:
		out = append(out, r.Domain)
		host(r.SitemapURL)
	case *report.RecommendRequest:
		out = append(append(out, r.Domain), r.Competitors...)
	case *report.ContentMapRequest:
		out = append(append(out, r.Domain), r.Competitors...)
	default:
		t.Fatalf("no domains listed for %T", req)
	}
	return out
}

var ldhName = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

// publicDomain is the rule written out independently of package hostname: lower-case LDH
// labels of 1 to 63, two at least, 253 characters at most, a last label that is no number.
func publicDomain(d string) bool {
	if len(d) > 253 || !ldhName.MatchString(d) {
		return false
	}
	tld := d[strings.LastIndexByte(d, '.')+1:]
	return strings.Trim(tld, "0123456789") != "" &&
		!(strings.HasPrefix(tld, "0x") && strings.Trim(tld[2:], "0123456789abcdef") == "")
}
