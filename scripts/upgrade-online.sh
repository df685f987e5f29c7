#!/usr/bin/env bash
# upgrade-online.sh measures an upgrade of a filled SQLite database while
# the site is live: it starts this tree's `cleanads serve` on a copy of OLD
# (a database an older binary made, with migrations pending), times the
# first answer, sends the tracker's visits and leads with cleanads-load
# during the migrations, waits for /readyz, and prints what was answered,
# what the serve log says of the migrations and the replay, and the rows
# stored afterwards. With BASELINE=1 it first times `cleanads migrate` on
# another copy: how long the server answered nothing before.
#
#   OLD=/tmp/old.db scripts/upgrade-online.sh
#   OLD=/tmp/old.db SECS=90 VISITS=200 LEADS=20 SITE=scale ORIGIN=https://scale.example BASELINE=1 scripts/upgrade-online.sh
#
# A database of the shape before migration 0340: `git worktree add /tmp/old bc8f7d9^`, then in
# it `go run ./cmd/cleanads-scale -db sqlite:/tmp/old.db -sizes 100000 -fill-only`.
set -euo pipefail
: "${OLD:?set OLD to the SQLite file of an older version}"
SECS=${SECS:-90} VISITS=${VISITS:-200} LEADS=${LEADS:-20}
SITE=${SITE:-scale} ORIGIN=${ORIGIN:-https://scale.example} PORT=${PORT:-18470}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && go build -o "$dir/cleanads" ./cmd/cleanads && go build -o "$dir/load" ./cmd/cleanads-load)
config() {
	cat > "$dir/c.yaml" <<YAML
listen: "127.0.0.1:$PORT"
database: "sqlite:$1"
delivery: {poll: 1h}
meta: {graph_url: "http://127.0.0.1:9", api_version: "v25.0"}
YAML
}
if [ -n "${BASELINE:-}" ]; then
	cp "$OLD" "$dir/base.db"
	config "$dir/base.db"
	start=$(date +%s.%N)
	"$dir/cleanads" migrate --config "$dir/c.yaml" | tail -1
	echo "baseline: cleanads migrate took $(echo "$(date +%s.%N) - $start" | bc) s"
	rm -f "$dir"/base.db*
fi
cp "$OLD" "$dir/up.db"
config "$dir/up.db"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
"$dir/cleanads" serve --config "$dir/c.yaml" > "$dir/serve.log" 2>&1 &
pid=$!
until curl -s -o /dev/null -m 1 "http://127.0.0.1:$PORT/healthz"; do sleep 0.01; done
echo "first answer after $(echo "$(date +%s.%N) - $start" | bc) s: $(curl -s "http://127.0.0.1:$PORT/readyz")"
"$dir/load" -url "http://127.0.0.1:$PORT" -kind collect -site "$SITE" -origin "$ORIGIN" -c 8 -rate "$VISITS" -d "${SECS}s" -q > "$dir/visits.txt" 2>&1 &
v=$!
"$dir/load" -url "http://127.0.0.1:$PORT" -kind leads -site "$SITE" -origin "$ORIGIN" -c 4 -rate "$LEADS" -d "${SECS}s" -q > "$dir/leads.txt" 2>&1 &
l=$!
until [ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 "http://127.0.0.1:$PORT/readyz")" = 200 ]; do sleep 0.05; done
echo "ready after $(echo "$(date +%s.%N) - $start" | bc) s"
wait $v $l || true
echo "visits: $(head -1 "$dir/visits.txt")"
echo "leads:  $(head -1 "$dir/leads.txt")"
grep -E 'listening while|step=|migrated the database|replayed the requests' "$dir/serve.log" | cut -c1-220
echo "refused at replay: $(grep -c 'refused at replay' "$dir/serve.log" || true)"
kill "$pid"
wait "$pid" || true
echo "stored: $(sqlite3 "$dir/up.db" 'select count(*) from leads') leads, $(sqlite3 "$dir/up.db" 'select count(*) from visits') visits (the copy had $(sqlite3 "$OLD" 'select count(*) from leads') and $(sqlite3 "$OLD" 'select count(*) from visits'))"
