#!/usr/bin/env bash
# bench.sh measures CleanAds on this machine, in one run (a few minutes):
#   1. the ceiling: a bare net/http handler that reads the body and answers 204;
#      then the floor: that handler plus one row committed through the store's
#      group commit (fsynced before the 204), the least a durable request costs;
#   2. POST /v1/collect with varied visits (new and returning visitors, fbclids);
#   3. POST /v1/leads with varied leads (clean, grey and junk; scored, stored
#      with their outbox rows; most with the form token of a visit);
#   4. the floor, collect and leads again at half of their maximum rate, for p99
#      latency (with the log's fsync p99 over the step, from /metrics);
#   5. the delivery runner draining 100,000 queued events into a local Graph
#      stand-in (a Go benchmark): lead events from the outbox, and PageViews
#      from their queue.
# The server runs on SQLite, every 2xx committed and fsynced first (group
# commit: the summary shows how many requests shared a commit), its delivery
# runner live against the stand-in. Figures are noisy on a shared
# machine: run it more than once.
#
#   scripts/bench.sh                 # defaults: 10 s per step, 256 connections
#   DURATION=5s CONNS=64 scripts/bench.sh
#   PPROF=127.0.0.1:6060 scripts/bench.sh   # the server profiler on, for go tool pprof
#
# 256 connections, because a request that waits for its commit's fsync
# needs company to fill a commit: at 64 collect and leads answered 25-40%
# fewer requests a second with cores to spare, while the ceiling is the
# same (42,000-45,000 requests/s at 64, 256 and 512 here).
set -euo pipefail

DURATION=${DURATION:-10s}
CONNS=${CONNS:-256}
PORT=${PORT:-18480}
CEIL_PORT=$((PORT + 1))
GRAPH_PORT=$((PORT + 2))
METRICS_PORT=$((PORT + 3))
FLOOR_PORT=$((PORT + 4))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
for p in "$PORT" "$CEIL_PORT" "$GRAPH_PORT" "$METRICS_PORT" "$FLOOR_PORT"; do
	if (echo >/dev/tcp/127.0.0.1/"$p") 2>/dev/null; then
		echo "port $p is taken (a server left from an earlier run?): stop it, or pick others with PORT=N (uses N to N+4)" >&2
		exit 1
	fi
done

echo "building into $WORK"
(cd "$ROOT" && go build -o "$WORK/cleanads" ./cmd/cleanads && go build -o "$WORK/cleanads-load" ./cmd/cleanads-load)

cat >"$WORK/bench.yaml" <<YAML
listen: "127.0.0.1:$PORT"
metrics_listen: "127.0.0.1:$METRICS_PORT"
database: "sqlite:$WORK/data/cleanads.db"
trusted_proxies: ["127.0.0.1/32"]
secret_key: "bench-only-secret-key-0123456789abcdef"
log: {level: warn}
meta: {graph_url: "http://127.0.0.1:$GRAPH_PORT", api_version: "v25.0"}
delivery: {workers: 4, poll: 1s}
sites:
  - id: dent
    name: "Istanbul Dental"
    origins: ["https://www.istanbuldis.example"]
    country: TR
    meta: {pixel_id: "123456789012345", mode: live, access_token: "bench-token"}
YAML

wait_port() { for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; exit 1; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
field() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }
# writer: the SQLite writer's counters from /metrics, as "commits calls syncs"
# (zeros for the ceiling step, before the server runs).
writer() {
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$METRICS_PORT") 2>/dev/null; then
		echo "0 0 0"
		return
	fi
	exec 3<>"/dev/tcp/127.0.0.1/$METRICS_PORT"
	printf 'GET /metrics HTTP/1.0\r\nHost: bench\r\n\r\n' >&3
	awk '/^cleanads_store_commits_total/ {c = $2} /^cleanads_store_commit_calls_total/ {n = $2} /^cleanads_store_log_syncs_total/ {s = $2}
		/^cleanads_store_log_sync_duration_seconds_bucket/ {match($0, /le="[^"]*"/); b = b " " substr($0, RSTART + 4, RLENGTH - 5) ":" $2}
		END {printf "%d %d %d%s\n", c, n, s, b}' <&3
	exec 3>&-
}
# sync_p99 BEFORE AFTER: from two writer lines, the bound of the fsync
# histogram bucket that holds the step's 99th percentile, in ms ("-" without
# fsyncs, ">1000" past the last bound).
sync_p99() {
	echo "$1 / $2" | awk '{
		for (i = 4; $i != "/"; i++) { split($i, kv, ":"); before[kv[1]] = kv[2] }
		for (i++; i <= NF; i++) { split($i, kv, ":"); les[++n] = kv[1]; d[kv[1]] = kv[2] - before[kv[1]] }
		total = d["+Inf"]
		if (total <= 0) { print "-"; exit }
		for (j = 1; j <= n; j++) if (d[les[j]] >= 0.99 * total) { print (les[j] == "+Inf" ? ">1000" : les[j] * 1000); exit }
	}'
}

"$WORK/cleanads-load" -serve "127.0.0.1:$CEIL_PORT" -graph "127.0.0.1:$GRAPH_PORT" >"$WORK/standin.log" 2>&1 &
PIDS+=($!)
STANDIN=$!
wait_port "$CEIL_PORT"

# settle PID: waits (at most a minute) until the server is idle, i.e. its
# delivery runner has sent what the last step queued, so each step is
# measured alone.
settle() {
	local a b t0=$SECONDS
	for _ in $(seq 60); do
		a=$(cpu_ticks "$1")
		sleep 1
		b=$(cpu_ticks "$1")
		[ $((b - a)) -lt $(($(getconf CLK_TCK) / 20)) ] && break
	done
	echo "   (server idle again after $((SECONDS - t0)) s: delivery caught up)"
}

# run NAME PID ARGS...: one load step; prints its line and server CPU per request.
run() {
	local name=$1 pid=$2
	shift 2
	local before after out w0 w1
	w0=$(writer)
	before=$(cpu_ticks "$pid")
	out=$("$WORK/cleanads-load" -q -c "$CONNS" -d "$DURATION" "$@")
	after=$(cpu_ticks "$pid")
	w1=$(writer)
	local ok
	ok=$(echo "$out" | field ok)
	local cpu_us=$(((after - before) * 1000000 / $(getconf CLK_TCK) / (ok > 0 ? ok : 1)))
	# Requests (and runner transactions) per commit, commits per fsync.
	local shared
	shared=$(echo "$(echo "$w0" | cut -d' ' -f1-3) $(echo "$w1" | cut -d' ' -f1-3)" | awk '{c = $4 - $1; n = $5 - $2; s = $6 - $3; if (c > 0 && s > 0) printf "%.1f/%.1f", n / c, c / s; else printf "-"}')
	local sync99
	sync99=$(sync_p99 "$w0" "$w1")
	echo "$out cpu_us=$cpu_us shared=$shared sync99=$sync99" >"$WORK/$name.res"
	printf '%-14s %s  server CPU %d us/request, calls/commit and commits/fsync %s, fsync p99 <= %s ms\n' "$name" "$(echo "$out" | sed 's/^result //; s/ status=.*//')" "$cpu_us" "$shared" "$sync99"
}

echo "== ceiling: bare handler, $CONNS connections, $DURATION"
run ceiling "$STANDIN" -url "http://127.0.0.1:$CEIL_PORT/" -kind bare
half() { awk -v r="$(field rps <"$WORK/$1.res")" 'BEGIN{printf "%d", r / 2}'; }

echo "== floor: the bare handler plus one durable SQLite row per request (group commit, fsynced)"
mkdir -p "$WORK/floor"
"$WORK/cleanads-load" -floor "127.0.0.1:$FLOOR_PORT" -floor-db "$WORK/floor/floor.db" >"$WORK/floor.log" 2>&1 &
FLOOR=$!
PIDS+=($FLOOR)
wait_port "$FLOOR_PORT"
run floor "$FLOOR" -url "http://127.0.0.1:$FLOOR_PORT" -kind collect
run floor_half "$FLOOR" -url "http://127.0.0.1:$FLOOR_PORT" -kind collect -rate "$(half floor)"
kill "$FLOOR"
wait "$FLOOR" 2>/dev/null || true
rm -rf "$WORK/floor"

"$WORK/cleanads" serve --config "$WORK/bench.yaml" ${PPROF:+--pprof "$PPROF"} >"$WORK/server.log" 2>&1 &
PIDS+=($!)
SERVER=$!
wait_port "$PORT"
URL="http://127.0.0.1:$PORT"

echo "== cleanads at full speed"
run collect "$SERVER" -url "$URL" -kind collect -save-tokens "$WORK/tokens"
settle "$SERVER"
run leads "$SERVER" -url "$URL" -kind leads -tokens "$WORK/tokens"
settle "$SERVER"
echo "== cleanads at half of the maximum rate"
run collect_half "$SERVER" -url "$URL" -kind collect -rate "$(half collect)"
settle "$SERVER"
run leads_half "$SERVER" -url "$URL" -kind leads -rate "$(half leads)"
RSS_KB=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
sleep 2 # let the runner send what the last step queued
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
kill "$STANDIN"
wait "$STANDIN" 2>/dev/null || true
grep -h "graph received" "$WORK/standin.log" || true
if grep -q 'level=ERROR' "$WORK/server.log"; then
	echo "server errors:"
	grep 'level=ERROR' "$WORK/server.log" | head -5
fi

echo "== delivery: 100,000 queued events drained into a local Graph stand-in"
(cd "$ROOT" && go test ./internal/deliver -run '^$' -bench 'BenchmarkDrain100k' -benchtime 1x -count 1) |
	grep -E '^BenchmarkDrain' | tee "$WORK/drain.res"

echo
echo "== summary ($(date -u +%Y-%m-%d), $(nproc) CPUs: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1))"
C=$(field rps <"$WORK/ceiling.res")
printf '%-22s %10s %7s %9s %9s %8s %14s %11s %8s\n' step "requests/s" ratio "p50 ms" "p99 ms" "CPU us" "calls/commit" "fsync p99" target
row() {
	local name=$1 target=$2 r p50 p99
	r=$(field rps <"$WORK/$name.res")
	p50=$(field p50_ms <"$WORK/$name.res")
	p99=$(field p99_ms <"$WORK/$name.res")
	printf '%-22s %10s %7s %9s %9s %8s %14s %11s %8s\n' "$name" "$r" "$(awk -v a="$r" -v b="$C" 'BEGIN{printf "%.2f", a / b}')" "$p50" "$p99" "$(field cpu_us <"$WORK/$name.res")" "$(field shared <"$WORK/$name.res" | cut -d/ -f1)" "$(field sync99 <"$WORK/$name.res")" "$target"
}
row ceiling "1.00"
row floor ""
row floor_half ""
row collect ">= 0.50"
row leads ">= 0.25"
row collect_half "p99<10ms"
row leads_half "p99<10ms"
printf 'server peak RSS (VmHWM): %d MB (target < 150 MB)\n' $((RSS_KB / 1024))
awk '{name = $1; sub(/^[^\/]*\//, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 1; i <= NF; i++) if ($i == "events/s") print "delivery drain (" name "): " $(i-1) " events/s (target >= 20000); peak Go heap " $(i+1) " MB"}' "$WORK/drain.res"
