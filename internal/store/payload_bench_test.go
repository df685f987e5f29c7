package store

import "testing"

var benchShrunk = []byte(`{"action_source":"website","event_name":"Lead","event_time":1765078298,"match_keys":["client_ip_address","client_user_agent","country","em","fbc","fbp","fn","ln","ph"]}`)

// BenchmarkPayloadPack: what archiving costs an event in packing, and
// every reader of an archived event in unpacking.
func BenchmarkPayloadPack(b *testing.B) {
	b.Run("pack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			packPayload(benchShrunk)
		}
	})
	packed := packPayload(benchShrunk)
	b.Run("unpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			unpackPayload(packed)
		}
	})
}
