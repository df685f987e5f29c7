package store

// Statements TestNondeterministicCaught must find (lines 7, 12 and 16).

func (q Q) LeadPick() {
	q.exec(ctx, `/* Store.LeadPick */ SELECT id FROM leads
		ORDER BY random() LIMIT 1`)
}

func (q Q) DeliverySent() {
	q.exec(ctx, "/* Store.DeliverySent */ UPDATE deliveries SET sent_at = ? WHERE id = ?", at, id)
	q.exec(ctx, "/* Store.DeliverySent */ UPDATE deliveries SET sent_at = now() WHERE id = ?", id)
	q.exec(ctx, `/* Store.DeliverySent */ UPDATE deliveries
		SET attempts = attempts + 1,
			-- a comment: now() here is no call
			next_at = unixepoch('now') * 1000
		WHERE id = ?`, id)
}
