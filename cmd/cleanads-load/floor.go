package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// floorSite is the site the floor's rows belong to.
const floorSite model.SiteID = "floor"

// openFloor opens (and migrates) the floor handler's database, with one
// site its rows belong to: where is a SQLite file, or a postgres:// URL
// (several floor processes may share one PostgreSQL database, as the
// server's nodes do).
func openFloor(ctx context.Context, where string) (*store.DB, error) {
	dsn := where
	if !strings.HasPrefix(where, "postgres://") && !strings.HasPrefix(where, "postgresql://") {
		dsn = "sqlite:" + strings.TrimPrefix(where, "sqlite:")
	}
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.SiteUpsert(ctx, &model.Site{ID: floorSite, Name: "floor"}, time.Now()); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// floor is the least a durable request costs with CleanAds' storage: the
// ceiling's handler plus the smallest write the server makes, one row into
// the PageView queue (a single B-tree) in an InTx of its own (on SQLite
// through the store's group commit; on PostgreSQL one transaction on the
// pool), answered 204 only once its commit is fsynced, exactly as a
// collect is.
// Between the ceiling and it lies what SQLite and the disk cost; between it
// and collect, what the server's own work costs.
func floor(db *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "read the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		d := &model.Delivery{SiteID: floorSite, Kind: model.KindPageView, EventID: model.NewUUIDv7(now), PixelID: "floor", Payload: body, CreatedAt: now}
		err = db.InTx(r.Context(), func(tx *store.Tx) error {
			_, err := tx.PageViewEnqueue(r.Context(), d)
			return err
		})
		if err != nil {
			http.Error(w, fmt.Sprintf("store: %v", err), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
