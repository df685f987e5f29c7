#!/usr/bin/env bash
# scale.sh fills a CleanAds database to given numbers of leads (about ten
# visits each, with their visitors, history, sent outbox rows and some won
# deals) through the store's own insert functions (the ones intake calls,
# counters and search index included), and at each size times every admin
# page and the API's lead read through the real handler on a real HTTP
# listener: the median and the slowest of RUNS requests after one warm-up.
# It prints a table per size, one of every size side by side with the
# largest size's time over the smallest's, and the bytes per visit (visits
# and visitors with their indexes) and per lead (every other table).
#
#   scripts/scale.sh                          # SQLite, 10,000 and 100,000 leads
#   SIZES=10000,100000,1000000 scripts/scale.sh
#   DATABASE='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' scripts/scale.sh
#   DB=sqlite:/tmp/kept.db scripts/scale.sh   # fill (or grow) and keep this database
#
# With DATABASE=postgres://... it makes a fresh database next to the URL's
# (cleanads_scale_PID, with psql) and drops it at the end. Filling is the
# slow part (about 150-400 leads a second on a busy 2-core machine: a
# million leads take one to two hours; WORKERS=2 fills PostgreSQL with two
# transactions at once); a kept database (DB=) grows from what it holds, so
# a later run measures at once.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-10000,100000}
RUNS=${RUNS:-7}
VISITS=${VISITS:-10}
WORKERS=${WORKERS:-1}
# After each fill, retention's shrink of finished events and its clearing of
# old leads' click identities, at their default ages (0 leaves them).
EVENT_DAYS=${EVENT_DAYS:-30}
CLICK_DAYS=${CLICK_DAYS:-90}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cleanads-scale" ./cmd/cleanads-scale
db=${DB:-}
if [[ -z "$db" && -n "${DATABASE:-}" ]]; then
	name="cleanads_scale_$$"
	psql "$DATABASE" -qc "CREATE DATABASE $name"
	trap 'psql "$DATABASE" -qc "DROP DATABASE IF EXISTS $name" || true; rm -rf "$work"' EXIT
	db=$(sed -E "s#/[^/?]*(\?|$)#/$name\1#" <<<"${DATABASE#*://}")
	db="${DATABASE%%://*}://$db"
fi
db=${db:-sqlite:$work/scale.db}
"$work/cleanads-scale" -db "$db" -sizes "$SIZES" -runs "$RUNS" -visits "$VISITS" -workers "$WORKERS" \
	-event-days "$EVENT_DAYS" -click-days "$CLICK_DAYS"
