package testkit

import (
	"testing"
	"time"
)

// Patience is how long WaitFor waits before it fails the test: generous,
// since it guards against a hang on a busy machine and measures nothing.
const Patience = 20 * time.Second

// WaitFor polls cond every few milliseconds until it holds, and fails the
// test, naming what it waited for, when it has not held within Patience.
// Tests wait for conditions this way and never assert a time.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, Patience, what, cond)
}

// WaitWithin is WaitFor with its own limit, for a test that knows the
// condition comes later than Patience (a certificate's renewal) or wants to
// fail sooner. The limit still guards a hang; it says nothing about speed.
func WaitWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s after %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
