package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeDataForSEO is a local HTTP server answering like DataForSEO's v3 API, from the
// documented response shapes kept in the client's testdata. Tests steer it: fail makes every
// answer an error payload or status, hold makes the first request wait until released.
type fakeDataForSEO struct {
	*httptest.Server
	calls   atomic.Int32
	mu      sync.Mutex
	fail    string // fixture name to answer with instead ("error_40100"), or "500"
	held    chan struct{}
	arrived chan struct{}
	match   string // the body of the request to hold holds this
	bodies  []string
}

// sent returns the bodies of the requests received so far.
func (f *fakeDataForSEO) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

var fixtureOf = map[string]string{
	"keyword_ideas":           "keyword_ideas",
	"ranked_keywords":         "ranked_keywords",
	"domain_intersection":     "domain_intersection_beanery",
	"search_intent":           "search_intent",
	"bulk_keyword_difficulty": "bulk_keyword_difficulty",
	"competitors_domain":      "competitors_domain",
}

func newFakeDataForSEO(t testing.TB) *fakeDataForSEO {
	f := &fakeDataForSEO{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// holdFirst makes the next request whose body holds match wait until the returned release
// is called; arrived is closed when that request comes in. Matching the test's own topic
// keeps a job another test left in the package's database (run by this test's worker
// process) from being the one held.
func (f *fakeDataForSEO) holdFirst(match string) (arrived <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.match = match
	f.held = make(chan struct{})
	f.arrived = make(chan struct{})
	held := f.held
	var once sync.Once
	return f.arrived, func() { once.Do(func() { close(held) }) }
}

func (f *fakeDataForSEO) setFail(mode string) {
	f.mu.Lock()
	f.fail = mode
	f.mu.Unlock()
}

func (f *fakeDataForSEO) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if _, _, ok := r.BasicAuth(); !ok {
		http.Error(w, "no auth", http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	fail, held, arrived := f.fail, f.held, f.arrived
	if arrived != nil && strings.Contains(string(body), f.match) {
		f.held, f.arrived = nil, nil
	} else {
		held, arrived = nil, nil
	}
	f.mu.Unlock()
	if arrived != nil {
		close(arrived)
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case fail == "500":
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	case fail != "":
		serveFixture(w, fail)
		return
	}
	for part, name := range fixtureOf {
		if strings.Contains(r.URL.Path, "/"+part+"/") {
			serveFixture(w, name)
			return
		}
	}
	http.NotFound(w, r)
}

func serveFixture(w http.ResponseWriter, name string) {
	body, err := os.ReadFile(filepath.Join("..", "keywords", "dataforseo", "testdata", name+".json"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
