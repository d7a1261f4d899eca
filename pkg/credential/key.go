package credential

import (
	"crypto/sha256"
	"encoding/hex"
)

// Key returns an opaque key for token: a hash, so that caches keyed by
// credential never hold the token itself. Equal tokens give equal keys.
func Key(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
}

// CredentialKey is Key of the token the guard currently reads with. Caches
// of RS answers key on it, so answers read with a replaced token are not
// served for the new one.
func (g *Guard) CredentialKey() string { return Key(g.h.Token()) }
