package auth

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/google/uuid"
)

// CallbackSecret returns the secret the account's job callbacks are signed with, creating it
// on first use.
func (a *Accounts) CallbackSecret(ctx context.Context, accountID uuid.UUID) (string, error) {
	fresh := "cbsec_" + rand.Text()
	var secret string
	err := a.pool.QueryRow(ctx, `
		UPDATE accounts SET callback_secret = COALESCE(callback_secret, $2) WHERE id = $1 RETURNING callback_secret`,
		accountID, fresh).Scan(&secret)
	if err != nil {
		return "", fmt.Errorf("auth: callback secret: %w", err)
	}
	return secret, nil
}
