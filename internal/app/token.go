package app

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// The problems a form token can have (qualify.TokenCheck.Problem).
const (
	TokenForged   = "forged"
	TokenExpired  = "expired"
	TokenReplayed = "replayed"
)

// TokenMaxAge is how long a form token is accepted after it was issued.
const TokenMaxAge = 24 * time.Hour

// tokenSkew is how far ahead of this node's clock another node may have
// issued a token.
const tokenSkew = time.Minute

// formToken is the decoded content of a token: t1.<visitor>.<issued ms>.<nonce>.<mac>.
type formToken struct {
	visitor string
	issued  time.Time
	nonce   string
}

var b64 = base64.RawURLEncoding

// issueToken signs a new token for the site and visitor (empty without
// consent: the token still lets the server time the form).
func (s *Service) issueToken(key []byte, site model.SiteID, visitor string, now time.Time) string {
	// The nonce starts with the issue time (48 bits of milliseconds), then
	// 80 random bits: the tokens used in one commit were issued about the
	// same time, so their rows in form_token_uses, keyed by nonce, share a
	// few pages of its primary key, where random nonces dirtied a page of
	// their own each.
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(now.UnixMilli())<<16)
	rand.Read(n[6:])
	nonce := b64.EncodeToString(n[:])
	issued := strconv.FormatInt(now.UnixMilli(), 10)
	return "t1." + visitor + "." + issued + "." + nonce + "." + s.tokenMAC(key, site, visitor, issued, nonce)
}

// tokenMAC is HMAC-SHA256 over the site, visitor, issue time and nonce.
// Every visit signs a token and every lead checks one: an HMAC taken from
// s.macs was keyed before, and Reset gives it back its keyed state without
// hashing the key's two blocks again (two of a token's five).
func (s *Service) tokenMAC(key []byte, site model.SiteID, visitor, issued, nonce string) string {
	m, _ := s.macs.Get().(*keyedMAC)
	if m == nil || !bytes.Equal(m.key, key) {
		m = &keyedMAC{key: key, h: hmac.New(sha256.New, key)}
	}
	m.h.Reset()
	m.msg = append(append(append(append(append(append(append(append(m.msg[:0],
		"t1\x00"...), site...), 0), visitor...), 0), issued...), 0), nonce...)
	m.h.Write(m.msg)
	m.sum = m.h.Sum(m.sum[:0])
	mac := b64.EncodeToString(m.sum)
	s.macs.Put(m)
	return mac
}

// keyedMAC is an HMAC with the key it was made with, and room for a
// token's message and MAC.
type keyedMAC struct {
	key      []byte
	h        hash.Hash
	msg, sum []byte
}

// parseToken checks a token's form and signature for the site.
func (s *Service) parseToken(key []byte, site model.SiteID, tok string) (formToken, bool) {
	p := strings.Split(tok, ".")
	if len(p) != 5 || p[0] != "t1" || len(p[3]) != 22 {
		return formToken{}, false
	}
	want := s.tokenMAC(key, site, p[1], p[2], p[3])
	if !hmac.Equal([]byte(want), []byte(p[4])) {
		return formToken{}, false
	}
	ms, err := strconv.ParseInt(p[2], 10, 64)
	if err != nil {
		return formToken{}, false
	}
	return formToken{visitor: p[1], issued: time.UnixMilli(ms), nonce: p[3]}, true
}

// readToken judges a lead's form token ahead of the lead's transaction:
// its form, signature and age. A genuine, fresh token is judged valid as if
// its nonce were unused, and use says the transaction must use the nonce up
// (useToken), which may find it used.
func (s *Service) readToken(key []byte, site *model.Site, tok string, now time.Time) (tc qualify.TokenCheck, ft formToken, use bool) {
	if tok == "" {
		return qualify.TokenCheck{}, formToken{}, false
	}
	tc = qualify.TokenCheck{Checked: true}
	ft, ok := s.parseToken(key, site.ID, tok)
	if !ok || ft.issued.Sub(now) > tokenSkew {
		tc.Problem = TokenForged
		return tc, formToken{}, false
	}
	tc.ServerFillMS = max(0, now.Sub(ft.issued).Milliseconds())
	if now.Sub(ft.issued) > TokenMaxAge {
		tc.Problem = TokenExpired
		return tc, ft, false
	}
	tc.Valid = true
	return tc, ft, true
}

// useToken uses up a genuine, fresh token's nonce inside the lead's
// transaction, so a second lead with the same token is a replay: it returns
// the token check readToken made, judged replayed when the nonce was used.
func (s *Service) useToken(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, tc qualify.TokenCheck, ft formToken, use bool, now time.Time) (qualify.TokenCheck, error) {
	if !use {
		return tc, nil
	}
	switch err := tx.FormTokenUse(ctx, site.ID, ft.nonce, lead.ID, now); {
	case errors.Is(err, model.ErrConflict):
		tc.Valid, tc.Problem = false, TokenReplayed
		return tc, nil
	case err != nil:
		return qualify.TokenCheck{}, err
	}
	return tc, nil
}

// tokenKey returns the key that signs form tokens: derived from the
// configured secret_key, or else a random key generated once and kept in
// the database so that every node shares it. Call it outside a transaction:
// on SQLite the transaction holds the only writer.
func (s *Service) tokenKey(ctx context.Context) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	if s.secret != "" {
		// A derived key: the secret may serve other purposes too.
		m := hmac.New(sha256.New, []byte(s.secret))
		m.Write([]byte("cleanads form token v1"))
		s.key = m.Sum(nil)
		return s.key, nil
	}
	var fresh [32]byte
	rand.Read(fresh[:])
	v, err := s.db.ServerKey(ctx, "form_token", hex.EncodeToString(fresh[:]), s.now())
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(v)
	if err != nil || len(k) < 32 {
		return nil, fmt.Errorf("app: the stored form token key is damaged")
	}
	s.key = k
	return k, nil
}

// tokenFacts is a token check as the lead's history keeps it.
func tokenFacts(tc qualify.TokenCheck) map[string]any {
	m := map[string]any{"checked": tc.Checked, "valid": tc.Valid, "server_fill_ms": tc.ServerFillMS}
	if tc.Problem != "" {
		m["problem"] = tc.Problem
	}
	return m
}
