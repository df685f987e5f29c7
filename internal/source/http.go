package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/model"
)

// DefaultBody is the largest body a route reads when it says nothing:
// webhooks batch several events in one post.
const DefaultBody = 1 << 20

// BrowserBody is the largest body a Browser route reads when it says
// nothing: a visit or a form is small, and anyone on the web may post one.
const BrowserBody = 64 << 10

// JSON answers v as JSON with status, never cached.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ReadBody reads the request's body, which the server limits to the
// route's Body: 413 over the limit, 408 when it came too slowly, 400 when
// it was cut off. A signature is checked over these bytes before they are
// decoded.
func ReadBody(r *http.Request) ([]byte, error) {
	// Sized by the Content-Length a browser's post carries (io.ReadAll
	// starts at 512 bytes and grows), up to BrowserBody: the route's limit
	// still bounds what is read.
	b := make([]byte, 0, min(max(r.ContentLength, 0), BrowserBody)+1)
	for {
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ReadError(err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	return b, nil
}

// ReadError turns a failure to read a request body into its answer; nothing
// was stored in any case.
func ReadError(err error) error {
	var mb *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mb):
		return err
	case errors.As(err, &ne) && ne.Timeout():
		return Error(http.StatusRequestTimeout, "the request body did not arrive in time")
	}
	return Error(http.StatusBadRequest, "the request body was cut off")
}

// DecodeJSON reads one JSON value from b into v, refusing invalid UTF-8
// (Go's decoder would silently replace it), unknown fields when strict,
// and trailing data; the error names the field at fault.
func DecodeJSON(b []byte, v any, strict bool) error {
	if !utf8.Valid(b) {
		return model.Invalid("", "the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return model.Invalid(te.Field, "has the wrong type: want "+te.Type.String())
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return model.Invalid(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
		case errors.Is(err, io.EOF):
			return model.Invalid("", "the body is empty: want a JSON object")
		}
		return model.Invalid("", "malformed JSON: "+err.Error())
	}
	if dec.More() {
		return model.Invalid("", "malformed JSON: data after the object")
	}
	return nil
}

// StripPort removes a port from a host or address: "example.com:8080",
// "1.2.3.4:5678", "[::1]:5678"; a bare IPv6 address is left alone.
func StripPort(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		if end := strings.IndexByte(s, ']'); end > 0 {
			return s[1:end]
		}
	}
	if strings.Count(s, ":") == 1 {
		return s[:strings.IndexByte(s, ':')]
	}
	return s
}
