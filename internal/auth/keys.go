// Package auth holds accounts and API keys: registration, key issue and revocation, and the
// gate that authenticates a request and applies the account's rate limit.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"hash/crc32"
	"math/big"
	"strings"
)

const (
	keyPrefix      = "ap_"
	keyBodyLen     = 32 // characters after the prefix
	checksumLen    = 6  // the last six characters of the body
	randomLen      = keyBodyLen - checksumLen
	displayLen     = 8 // key_prefix: the key's first 8 characters
	base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// NewKey returns a fresh key: "ap_", 26 characters from crypto/rand and a 6-character
// CRC-32 checksum of them (as GitHub's tokens carry), so a mistyped or made-up key is refused
// without a database lookup.
func NewKey() (string, error) {
	buf := make([]byte, randomLen)
	max := big.NewInt(int64(len(base62Alphabet)))
	for i := range buf {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		buf[i] = base62Alphabet[n.Int64()]
	}
	return keyPrefix + string(buf) + checksum(string(buf)), nil
}

// WellFormed reports whether key has the shape and checksum of a key we issue. The checksum
// is compared in constant time.
func WellFormed(key string) bool {
	if len(key) != len(keyPrefix)+keyBodyLen || !strings.HasPrefix(key, keyPrefix) {
		return false
	}
	body := key[len(keyPrefix):]
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62Alphabet, body[i]) < 0 {
			return false
		}
	}
	var want [checksumLen]byte
	checksumInto(&want, body[:randomLen])
	return subtle.ConstantTimeCompare(want[:], []byte(body[randomLen:])) == 1
}

// Digest is the SHA-256 of a key, the only form in which keys are stored. Lookups by digest
// are equality on a hash, so the key never meets a timing-sensitive comparison.
func Digest(key string) []byte {
	sum := keyDigest(key)
	return sum[:]
}

// keyDigest is Digest as an array, the cache's key: a key of our shape is hashed from a copy
// on the stack, not the heap.
func keyDigest(key string) [sha256.Size]byte {
	var buf [64]byte
	return sha256.Sum256(append(buf[:0], key...))
}

// DisplayPrefix is the key_prefix shown for a key.
func DisplayPrefix(key string) string { return key[:displayLen] }

func checksum(s string) string {
	var out [checksumLen]byte
	checksumInto(&out, s)
	return string(out[:])
}

// checksumInto writes s's checksum, base62 digits of its CRC-32, into out.
func checksumInto(out *[checksumLen]byte, s string) {
	n := crc32.ChecksumIEEE([]byte(s))
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62Alphabet[n%62]
		n /= 62
	}
}
