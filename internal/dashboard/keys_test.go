package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	newKeyRE = regexp.MustCompile(`id="newkey" readonly value="(ap_[A-Za-z0-9]+)"`)
	keyIDRE  = regexp.MustCompile(`data-key-id="([0-9a-f-]{36})" data-status="active"`)
)

func newKeyOn(t *testing.T, p page) string {
	t.Helper()
	m := newKeyRE.FindStringSubmatch(p.Body)
	if p.Status != http.StatusCreated || m == nil {
		t.Fatalf("no new key shown: %d %s", p.Status, p.Body)
	}
	return m[1]
}

// keyID is the id of the active key of this name on the page.
func keyID(t *testing.T, p page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`data-key-id="([0-9a-f-]{36})" data-status="active">\s*<th scope="row">` + regexp.QuoteMeta(name) + `</th>`).
		FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no active key %q on %s", name, p.Body)
	}
	return m[1]
}

func activeKeyIDs(p page) []string {
	var ids []string
	for _, m := range keyIDRE.FindAllStringSubmatch(p.Body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// Keys made, rolled and revoked on the page work (and stop working) against the API; the
// last key goes only after a confirmation, and an account left with none makes a new one.
func TestKeysPage(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	first := e.signIn(t, b, uniqueEmail("keys"))
	keys := b.Get("/dashboard/keys")
	csrf := keys.CSRF(t)

	// Invalid input: a clear message, nothing created.
	for _, form := range []url.Values{
		{"csrf": {csrf}, "name": {"  "}},
		{"csrf": {csrf}, "name": {"ci"}, "expires_in_days": {"4000"}},
		{"csrf": {csrf}, "name": {strings.Repeat("n", 101)}},
	} {
		if p := b.Post("/dashboard/keys", form); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `role="alert"`) ||
			len(activeKeyIDs(p)) != 1 {
			t.Fatalf("form %v: %d %s", form, p.Status, p.Body)
		}
	}

	created := b.Post("/dashboard/keys", url.Values{"csrf": {csrf}, "name": {"CI runner"}, "expires_in_days": {"30"}})
	second := newKeyOn(t, created)
	if !strings.Contains(created.Body, "Your new key “CI runner”") {
		t.Fatalf("created page %s", created.Body)
	}
	// Shown once: the list afterwards has no key, only prefixes.
	listed := b.Get("/dashboard/keys")
	if strings.Contains(listed.Body, second) || !strings.Contains(listed.Body, second[:8]+"…") {
		t.Fatalf("key list shows %s", listed.Body)
	}
	for i := 0; i < 3; i++ {
		if status, body := e.call(t, second, http.MethodGet, "/v1/usage", ""); status != http.StatusOK {
			t.Fatalf("new key: %d %s", status, body)
		}
	}
	listed = b.Get("/dashboard/keys")
	row := regexp.MustCompile(`(?s)<th scope="row">CI runner</th>.*?</tr>`).FindString(listed.Body)
	if !strings.Contains(row, `<td data-label="Calls" class="num">3</td>`) || strings.Count(row, "—") != 0 {
		t.Fatalf("CI runner row after 3 calls: %s", row)
	}

	// Roll: a new key with the same name; the old one refused at once.
	if ids := activeKeyIDs(listed); len(ids) != 2 {
		t.Fatalf("active keys %v", ids)
	}
	rolled := b.Post("/dashboard/keys/"+keyID(t, listed, "CI runner")+"/roll", url.Values{"csrf": {csrf}})
	third := newKeyOn(t, rolled)
	if status, _ := e.call(t, second, http.MethodGet, "/v1/usage", ""); status != http.StatusUnauthorized {
		t.Fatalf("rolled-over key answered %d", status)
	}
	if status, _ := e.call(t, third, http.MethodGet, "/v1/usage", ""); status != http.StatusOK {
		t.Fatalf("rolled key answered %d", status)
	}

	// Another account's key is not found.
	other := e.newBrowser(t)
	e.signIn(t, other, uniqueEmail("other"))
	otherKeys := other.Get("/dashboard/keys")
	if p := other.Post("/dashboard/keys/"+keyID(t, rolled, "CI runner")+"/revoke", url.Values{"csrf": {otherKeys.CSRF(t)}}); p.Status != http.StatusNotFound {
		t.Fatalf("revoking another account's key: %d", p.Status)
	}

	// Revoke all: the last asks first.
	ids := activeKeyIDs(b.Get("/dashboard/keys"))
	if p := b.Post("/dashboard/keys/"+ids[0]+"/revoke", url.Values{"csrf": {csrf}}); len(activeKeyIDs(p)) != 1 {
		t.Fatalf("after revoking one of two: %s", p.Body)
	}
	last := activeKeyIDs(b.Get("/dashboard/keys"))[0]
	ask := b.Post("/dashboard/keys/"+last+"/revoke", url.Values{"csrf": {csrf}})
	if ask.Status != http.StatusOK || !strings.Contains(ask.Body, "only active key") || !strings.Contains(ask.Body, `name="confirm" value="yes"`) {
		t.Fatalf("revoking the last key asked: %d %s", ask.Status, ask.Body)
	}
	if p := b.Post("/dashboard/keys/"+last+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); len(activeKeyIDs(p)) != 0 {
		t.Fatalf("after confirming: %s", p.Body)
	}
	for _, k := range []string{first, third} {
		if status, _ := e.call(t, k, http.MethodGet, "/v1/usage", ""); status != http.StatusUnauthorized {
			t.Fatalf("revoked key answered %d", status)
		}
	}
	// Locked out no more: a new key from the dashboard.
	fresh := newKeyOn(t, b.Post("/dashboard/keys", url.Values{"csrf": {csrf}, "name": {"after lockout"}}))
	if status, body := e.call(t, fresh, http.MethodGet, "/v1/usage", ""); status != http.StatusOK {
		t.Fatalf("fresh key: %d %s", status, body)
	}
}
