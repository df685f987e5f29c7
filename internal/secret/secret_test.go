package secret_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/secret"
)

const key = "0123456789abcdef0123456789abcdef-test"

func TestSealOpen(t *testing.T) {
	b, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	token := "EAAB-meta-token-xyz"
	sealed := b.Seal("site:dent", token)
	if !strings.HasPrefix(sealed, secret.Prefix) || strings.Contains(sealed, token) || !secret.IsSealed(sealed) {
		t.Fatalf("sealed %q", sealed)
	}
	if got, err := b.Open("site:dent", sealed); err != nil || got != token {
		t.Fatalf("open: %q %v", got, err)
	}
	if again := b.Seal("site:dent", token); again != sealed {
		t.Errorf("the same token sealed twice differs: SQL could not tell it is unchanged")
	}
	if other := b.Seal("site:other", token); other == sealed {
		t.Errorf("two sites' equal tokens seal alike")
	}
	if _, err := b.Open("site:other", sealed); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("a value moved to another site opened: %v", err)
	}
	other, _ := secret.NewBox(key + "-other")
	if _, err := other.Open("site:dent", sealed); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("another key opened it: %v", err)
	}
	for _, bad := range []string{secret.Prefix, secret.Prefix + "!!!", secret.Prefix + "AAAA", sealed[:len(sealed)-2]} {
		if _, err := b.Open("site:dent", bad); !errors.Is(err, secret.ErrDecrypt) {
			t.Errorf("damaged %q: %v", bad, err)
		}
	}
	if got, err := b.Open("site:dent", "clear-legacy"); err != nil || got != "clear-legacy" {
		t.Errorf("clear text: %q %v", got, err)
	}
	if b.Seal("site:dent", "") != "" {
		t.Errorf("an empty token is sealed")
	}
	if _, err := secret.NewBox(""); err == nil {
		t.Errorf("an empty key made a box")
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", secret.KeyFileName)
	k1, err := secret.LoadOrCreateKeyFile(path)
	if err != nil || len(k1) < secret.MinKeyLength {
		t.Fatalf("create: %q %v", k1, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	if k2, err := secret.LoadOrCreateKeyFile(path); err != nil || k2 != k1 {
		t.Fatalf("reload gave another key: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := secret.LoadOrCreateKeyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key file was used: %v", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := secret.LoadOrCreateKeyFile(path); err == nil {
		t.Errorf("a damaged key file was used")
	}
}
