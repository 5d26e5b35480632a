package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/postgres"
)

// DefaultKeyName names a key when the caller gives no name.
const DefaultKeyName = "Default"

// MaxActiveKeys is how many keys an account may hold at once (neither revoked nor expired):
// enough for a key per server or environment, and a bound on what one caller can make the
// gate and the key list carry.
const MaxActiveKeys = 100

// Key is an API key as listed: never the key itself, which is not stored.
type Key struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	KeyPrefix  string     `json:"key_prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// Calls is how many authenticated requests the key made (as of the last flush); the
	// dashboard shows it, the API's key list does not.
	Calls int64 `json:"-"`
}

// Status is active, expired or revoked.
func (k Key) Status(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	}
	return "active"
}

// KeyName validates a key name, giving the default for an empty one. It is the one check of
// key names, the JSON API's and the dashboard's: PostgreSQL cannot store NUL or invalid
// UTF-8, and control characters, line separators and bidirectional-text controls (U+202E
// shows "yek-dab" as "bad-key") make a name on the key list say something other than it is.
func KeyName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultKeyName, nil
	}
	if !utf8.ValidString(s) {
		return "", apperr.Invalid("name must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > 100 {
		return "", apperr.Invalid("name must be at most 100 characters")
	}
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Bidi_Control) {
			return "", apperr.Invalid("name must not contain NUL, control characters, line breaks or bidirectional-text controls (like U+202E)")
		}
	}
	return s, nil
}

func insertKey(ctx context.Context, q postgres.Querier, accountID uuid.UUID, name, key string, expires *time.Time, now time.Time) error {
	name, err := KeyName(name)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `
		INSERT INTO api_keys (id, account_id, name, prefix, digest, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		uuid.New(), accountID, name, DisplayPrefix(key), Digest(key), now, expires)
	if err != nil {
		return fmt.Errorf("auth: insert key: %w", err)
	}
	return nil
}

// CreateKey issues a new key for the account; the key is returned here and never again.
// An account holding MaxActiveKeys active keys must revoke one first (VALIDATION_ERROR).
func (a *Accounts) CreateKey(ctx context.Context, accountID uuid.UUID, name string, expiresInDays int) (Key, string, error) {
	if expiresInDays < 0 || expiresInDays > 3650 {
		return Key{}, "", apperr.Invalid("expires_in_days must be from 1 to 3650")
	}
	name, err := KeyName(name)
	if err != nil {
		return Key{}, "", err
	}
	key, err := NewKey()
	if err != nil {
		return Key{}, "", fmt.Errorf("auth: new key: %w", err)
	}
	now := a.clock.Now()
	var expires *time.Time
	if expiresInDays > 0 {
		t := now.AddDate(0, 0, expiresInDays)
		expires = &t
	}
	err = postgres.InTx(ctx, a.pool, func(tx pgx.Tx) error {
		// The account row is locked (not against inserts referencing it) so that two
		// creations at once cannot both pass the count; the count is a statement of its own,
		// so its snapshot, taken after the lock, sees the key a creation before it committed.
		var one, active int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, accountID).Scan(&one); err != nil {
			return fmt.Errorf("auth: lock account: %w", err)
		}
		if err := tx.QueryRow(ctx, `
			SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL
				AND (expires_at IS NULL OR expires_at > $2)`, accountID, now).Scan(&active); err != nil {
			return fmt.Errorf("auth: count keys: %w", err)
		}
		if active >= MaxActiveKeys {
			return apperr.Invalid("An account can have at most %d active API keys; revoke one you no longer use "+
				"(DELETE /v1/keys/{id}) before creating another.", MaxActiveKeys)
		}
		return insertKey(ctx, tx, accountID, name, key, expires, now)
	})
	if err != nil {
		return Key{}, "", err
	}
	k, err := a.keyByDigest(ctx, Digest(key))
	return k, key, err
}

func (a *Accounts) keyByDigest(ctx context.Context, digest []byte) (Key, error) {
	rows, err := a.pool.Query(ctx, keySelect+` WHERE digest = $1`, digest)
	if err != nil {
		return Key{}, fmt.Errorf("auth: key: %w", err)
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Key])
}

const keySelect = `SELECT id, name, prefix, created_at, last_used_at, expires_at, revoked_at, calls FROM api_keys`

// ListKeys lists the account's keys, newest first.
func (a *Accounts) ListKeys(ctx context.Context, accountID uuid.UUID) ([]Key, error) {
	rows, err := a.pool.Query(ctx, keySelect+` WHERE account_id = $1 ORDER BY created_at DESC, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("auth: list keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Key])
	if err != nil {
		return nil, fmt.Errorf("auth: list keys: %w", err)
	}
	return keys, nil
}

// RevokeKey revokes one of the account's keys; it is refused from the next request on, on
// every replica. Revoking a revoked key changes nothing; another account's key is not found.
func (a *Accounts) RevokeKey(ctx context.Context, accountID, keyID uuid.UUID) (Key, error) {
	var revokedAt time.Time
	err := a.pool.QueryRow(ctx, `
		UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND account_id = $2
		RETURNING revoked_at`, keyID, accountID, a.clock.Now()).Scan(&revokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, apperr.New(apperr.NotFound, "API key not found")
	}
	if err != nil {
		return Key{}, fmt.Errorf("auth: revoke key: %w", err)
	}
	if a.gate != nil {
		if err := a.gate.Revoked(ctx, accountID, keyID); err != nil {
			return Key{}, err
		}
	}
	rows, err := a.pool.Query(ctx, keySelect+` WHERE id = $1`, keyID)
	if err != nil {
		return Key{}, fmt.Errorf("auth: key: %w", err)
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Key])
}
