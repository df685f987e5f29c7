package store

import (
	"context"
	"fmt"
	"time"
)

// ServerKey returns the server key stored under name, storing value first
// when there is none. Nodes racing to create it all end with the one that
// won, so every node signs with the same key.
func (q Q) ServerKey(ctx context.Context, name, value string, now time.Time) (string, error) {
	if _, err := q.exec(ctx, `/* Store.ServerKey */ INSERT INTO server_keys (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, value, now.UnixMilli()); err != nil {
		return "", fmt.Errorf("store: server key %s: %w", name, err)
	}
	var v string
	// Read through the writer: a reader could lag behind the insert above.
	if err := q.w.QueryRowContext(ctx, q.rebind(`/* Store.ServerKey */ SELECT value FROM server_keys WHERE name = ?`), name).Scan(&v); err != nil {
		return "", fmt.Errorf("store: server key %s: %w", name, err)
	}
	return v, nil
}
