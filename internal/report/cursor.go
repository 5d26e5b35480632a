package report

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/contentapi/contentapi/internal/apperr"
)

// A cursor continues a keyword answer where its page stopped. It is opaque to the caller and
// carries, signed with HMAC-SHA256 under the service's cursor key (CURSOR_SECRET, or the key
// the database keeps): the provider's own position token, the account it was issued to, a
// hash of the query it continues (the endpoint and every body field but cursor, limit and
// callback_url, normalised) and when it expires. The API refuses, before any charge, a
// cursor that is altered, expired, used by another account or sent with another query;
// the worker checks the signature, account and query again (not the expiry: a queued job
// may start after it) before it hands the token to the provider. The key is the only
// secret: the token inside is readable, and says no more than the page's last row.

// CursorTTL is how long a cursor may be used after the answer that carried it.
const CursorTTL = 24 * time.Hour

// maxCursorLength bounds a cursor; the provider tokens inside are short.
const maxCursorLength = 2048

const cursorVersion = 1

// Cursors seals and opens cursors under one key.
type Cursors struct {
	key []byte
}

// NewCursors returns the sealer of cursors under key (at least 32 bytes of secret).
func NewCursors(key []byte) *Cursors { return &Cursors{key: append([]byte(nil), key...)} }

type cursorBody struct {
	Version int    `json:"v"`
	Token   string `json:"t"`
	Account string `json:"a"`
	Query   string `json:"q"`
	Expires int64  `json:"e"`
}

// Seal returns the cursor continuing req (of kind, asked by account) at the provider's
// token, expiring CursorTTL after now.
func (c *Cursors) Seal(kind Kind, account string, req PagedRequest, token string, now time.Time) (string, error) {
	q, err := queryHash(kind, req)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(cursorBody{Version: cursorVersion, Token: token, Account: account, Query: q,
		Expires: now.Add(CursorTTL).Unix()})
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload)), nil
}

// Open checks req's cursor for account and returns the provider's token inside ("" when
// req has no cursor). A zero now skips the expiry check (the worker's second look).
func (c *Cursors) Open(kind Kind, account string, req PagedRequest, now time.Time) (string, error) {
	raw := req.PageQuery().Cursor
	if raw == "" {
		return "", nil
	}
	payload, sig, ok := strings.Cut(raw, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, c.mac(payload)) {
		return "", invalidCursor("cursor is not one this service issued, or was altered: send the next_cursor of an answer unchanged")
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	var body cursorBody
	if err != nil || json.Unmarshal(data, &body) != nil || body.Version != cursorVersion {
		return "", invalidCursor("cursor is not one this service issued, or was altered: send the next_cursor of an answer unchanged")
	}
	if body.Account != account {
		return "", invalidCursor("cursor was issued to another account")
	}
	q, err := queryHash(kind, req)
	if err != nil {
		return "", err
	}
	if !hmac.Equal([]byte(q), []byte(body.Query)) {
		return "", invalidCursor("cursor continues another query: send it with the same endpoint and fields as the call that returned it (only limit may change)")
	}
	if !now.IsZero() && now.Unix() >= body.Expires {
		return "", invalidCursor("cursor has expired (cursors last 24 hours): start again without a cursor")
	}
	return body.Token, nil
}

func invalidCursor(msg string) error { return apperr.New(apperr.InvalidCursor, "%s", msg) }

func (c *Cursors) mac(payload string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("contentapi cursor\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// queryHash hashes the query a cursor continues: the kind and the normalised request
// without cursor, limit and callback_url. encoding/json writes a map's keys sorted, so the
// hash does not depend on the order of the struct's fields either.
func queryHash(kind Kind, req PagedRequest) (string, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "cursor")
	delete(m, "limit")
	delete(m, "callback_url")
	canon, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(string(kind)+"\x00"), canon...))
	return base64.RawURLEncoding.EncodeToString(sum[:16]), nil
}

type accountKey struct{}

// WithAccount returns ctx carrying the id of the account a job runs for: an answer's
// next_cursor is sealed for it.
func WithAccount(ctx context.Context, account string) context.Context {
	return context.WithValue(ctx, accountKey{}, account)
}

func accountOf(ctx context.Context) string {
	a, _ := ctx.Value(accountKey{}).(string)
	return a
}

// pageToken returns the provider's token of req's cursor, checked again for the account the
// job runs for (see WithAccount); "" without a cursor.
func (b *Builder) pageToken(ctx context.Context, kind Kind, req PagedRequest) (string, error) {
	if req.PageQuery().Cursor == "" {
		return "", nil
	}
	if b.Cursors == nil {
		return "", invalidCursor("cursors are not enabled on this service")
	}
	return b.Cursors.Open(kind, accountOf(ctx), req, time.Time{})
}

// nextCursor seals the provider's next token for the account the job runs for; nil on the
// last page, or when the builder has no cursor key.
func (b *Builder) nextCursor(ctx context.Context, kind Kind, req PagedRequest, token string) (*string, error) {
	if token == "" || b.Cursors == nil {
		return nil, nil
	}
	c, err := b.Cursors.Seal(kind, accountOf(ctx), req, token, b.now())
	if err != nil {
		return nil, err
	}
	return &c, nil
}
