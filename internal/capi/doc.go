// Package capi owns everything about Meta's Conversions API: normalising and
// hashing customer data, building server events, the HTTP client and the
// classification of Meta's errors.
//
// Normalisation follows Meta's customer-information-parameters documentation
// and the rules of Meta's facebook/capi-param-builder (the library Meta's
// pixel-side and server-side tooling share), so that a value hashed here
// hashes to what the browser pixel and Meta's own SDKs produce. The
// conformance test checks every row of Meta's collected test vectors.
package capi
