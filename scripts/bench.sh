#!/usr/bin/env bash
# bench.sh measures CleanAds on this machine, in one run (about 3 minutes):
#   1. the ceiling: a bare net/http handler that reads the body and answers 204;
#      then the floor: that handler plus one row committed in an InTx of its
#      own (fsynced before the 204), the least a durable request costs; then
#      the floor again at half of its maximum rate, for p99, at $CONNS and at
#      $LOW_CONNS connections;
#   2. POST /v1/collect with varied visits (new and returning visitors, fbclids)
#      and POST /v1/leads with varied leads (clean, grey and junk; scored,
#      stored with their outbox rows; most with the form token of a visit),
#      at full speed: their ratio to the floor;
#   3. collect and leads at half of the FLOOR's maximum rate, at $CONNS and at
#      $LOW_CONNS connections, for p99 (with the log's fsync p99 over the step,
#      from /metrics); a step that cannot keep that rate says so, and the rate
#      it reached;
#   4. collect and leads at half of their own maximum rate (context);
#   5. the delivery runner draining 100,000 queued events into a local Graph
#      stand-in (a Go benchmark): lead events from the outbox, and PageViews
#      from their queue.
# The summary gives each figure with its target and whether it is met.
#
# On SQLite (the default) one server runs, every 2xx committed and fsynced
# first (group commit: the summary shows how many requests shared a commit).
# With DATABASE=postgres://... two servers run on that PostgreSQL, the load
# split evenly over them, against a floor of two floor processes writing to
# the same PostgreSQL; the script makes two fresh databases next to the
# URL's (cleanads_bench_PID and cleanads_bench_PID_floor, with psql) and
# drops them at the end. The servers' delivery runners send live to the
# stand-in. Figures are noisy on a shared machine: run it more than once.
#
#   scripts/bench.sh                 # defaults: 10 s per step, 256 and 32 connections
#   DURATION=5s CONNS=64 LOW_CONNS=16 scripts/bench.sh
#   DATABASE='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' scripts/bench.sh
#   PPROF=127.0.0.1:6060 scripts/bench.sh   # the (first) server's profiler on, for go tool pprof
#   TAGS=netgo scripts/bench.sh              # server and floor built with those build tags
#   CLEANADS_BIN=/tmp/old/cleanads scripts/bench.sh   # another server binary (an older commit's,
#                                            # for an A/B run in turn), with this tree's load and floor
#
# 256 connections, because a request that waits for its commit's fsync
# needs company to fill a commit: at 64 collect and leads answered 25-40%
# fewer requests a second with cores to spare, while the ceiling is the
# same (42,000-45,000 requests/s at 64, 256 and 512 here). 32, because a
# latency target must hold with few clients too, where commits are small.
set -euo pipefail

DURATION=${DURATION:-10s}
CONNS=${CONNS:-256}
LOW_CONNS=${LOW_CONNS:-32}
DATABASE=${DATABASE:-}
PORT=${PORT:-18480}
CEIL_PORT=$((PORT + 1))
GRAPH_PORT=$((PORT + 2))
METRICS_PORT=$((PORT + 3))
FLOOR_PORT=$((PORT + 4))
PORT2=$((PORT + 5)) # PostgreSQL: the second node,
METRICS_PORT2=$((PORT + 6))
FLOOR_PORT2=$((PORT + 7)) # and the second floor process
# Targets: ratios to the floor (issue 33's; issue 23 asked 0.8 and 0.5),
# p99 at half of the floor's maximum rate (issue 23's), memory, drain.
COLLECT_TARGET=0.50
LEADS_TARGET=0.25
P99_TARGET_MS=10
RSS_TARGET_MB=150
DRAIN_TARGET=25000

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
PIDS=()
PG_DBS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for d in "${PG_DBS[@]}"; do psql "$DATABASE" -qAtX -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || echo "could not drop database $d" >&2; done
	rm -rf "$WORK"
}
trap cleanup EXIT

ENGINE=sqlite
NODES=1
case "$DATABASE" in
"") ;;
postgres://* | postgresql://*)
	ENGINE=postgres
	NODES=2
	command -v psql >/dev/null || {
		echo "DATABASE=postgres://...: needs psql to create the run's databases" >&2
		exit 1
	}
	;;
*)
	echo "DATABASE: want a postgres:// URL (or nothing, for SQLite)" >&2
	exit 1
	;;
esac
LAST_PORT=$FLOOR_PORT
[ "$NODES" = 2 ] && LAST_PORT=$FLOOR_PORT2
for p in $(seq "$PORT" "$LAST_PORT"); do
	if (echo >/dev/tcp/127.0.0.1/"$p") 2>/dev/null; then
		echo "port $p is taken (a server left from an earlier run?): stop it, or pick others with PORT=N (uses N to N+7)" >&2
		exit 1
	fi
done

# pg_db URL NAME: the URL with its database replaced by NAME.
pg_db() { echo "$1" | sed -E "s#^(postgres(ql)?://[^/?]*)(/[^?]*)?#\\1/$2#"; }
if [ "$ENGINE" = postgres ]; then
	name=cleanads_bench_$$
	for d in "$name" "${name}_floor"; do
		psql "$DATABASE" -qAtX -v ON_ERROR_STOP=1 -c "CREATE DATABASE $d" >/dev/null
		PG_DBS+=("$d")
	done
	APP_DB=$(pg_db "$DATABASE" "$name")
	FLOOR_DB=$(pg_db "$DATABASE" "${name}_floor")
	echo "PostgreSQL: databases $name and ${name}_floor (dropped at the end)"
else
	APP_DB="sqlite:$WORK/data/cleanads.db"
fi

echo "building into $WORK"
(cd "$ROOT" && go build ${TAGS:+-tags "$TAGS"} -o "$WORK/cleanads" ./cmd/cleanads && go build ${TAGS:+-tags "$TAGS"} -o "$WORK/cleanads-load" ./cmd/cleanads-load)
if [ -n "${CLEANADS_BIN:-}" ]; then
	cp "$CLEANADS_BIN" "$WORK/cleanads"
fi
echo "server: $("$WORK/cleanads" version 2>/dev/null || echo "$CLEANADS_BIN")"

# config N LISTEN METRICS: node N's configuration file.
config() {
	cat >"$WORK/bench$1.yaml" <<YAML
listen: "127.0.0.1:$2"
metrics_listen: "127.0.0.1:$3"
database: "$APP_DB"
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
}
config 1 "$PORT" "$METRICS_PORT"
config 2 "$PORT2" "$METRICS_PORT2"

wait_port() { for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; exit 1; }
# cpu_ticks PID...: their user and system CPU, in clock ticks.
cpu_ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s += $1} END {print s}'; }
# db_ticks DB: on PostgreSQL, the CPU in clock ticks of the server's
# backends connected to database DB (the floor's or the servers'), found by
# their process titles; 0 on SQLite, which runs inside the server.
db_ticks() {
	[ "$ENGINE" = postgres ] || {
		echo 0
		return
	}
	local f
	for f in /proc/[0-9]*; do # processes may end meanwhile: no messages
		tr '\0' ' ' <"$f/cmdline" | grep -q "^postgres: .* $1 " && awk '{print $14 + $15}' "$f/stat" || true
	done 2>/dev/null | awk '{s += $1} END {print s + 0}'
}
field() { grep -o "\\b$1=[^ ]*" | head -1 | cut -d= -f2; }
# writer: the SQLite writer's counters from /metrics, as "commits calls syncs"
# (zeros before the server runs; on PostgreSQL, without a group committer,
# they stay zero).
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

# settle PID...: waits (at most a minute) until the servers are idle, i.e.
# their delivery runners have sent what the last step queued, so each step
# is measured alone.
settle() {
	local a b t0=$SECONDS
	for _ in $(seq 60); do
		a=$(cpu_ticks "$@")
		sleep 1
		b=$(cpu_ticks "$@")
		[ $((b - a)) -lt $(($(getconf CLK_TCK) / 20)) ] && break
	done
	echo "   (server idle again after $((SECONDS - t0)) s: delivery caught up)"
}

# run NAME CONNS RATE PIDS ARGS...: one load step over CONNS connections at
# RATE requests/s (0: full speed) against the processes PIDS (a
# comma-separated list) on database STEP_DB (PostgreSQL); prints its line
# and their CPU per request (and PostgreSQL's).
run() {
	local name=$1 conns=$2 rate=$3 pids
	IFS=, read -ra pids <<<"$4"
	shift 4
	local before after db0 db1 out w0 w1
	w0=$(writer)
	before=$(cpu_ticks "${pids[@]}")
	db0=$(db_ticks "$STEP_DB")
	out=$("$WORK/cleanads-load" -q -c "$conns" -d "$DURATION" -rate "$rate" "$@")
	after=$(cpu_ticks "${pids[@]}")
	db1=$(db_ticks "$STEP_DB")
	w1=$(writer)
	local ok
	ok=$(echo "$out" | field ok)
	local cpu_us=$(((after - before) * 1000000 / $(getconf CLK_TCK) / (ok > 0 ? ok : 1)))
	local db_us=- db_note=""
	if [ "$ENGINE" = postgres ]; then
		db_us=$(((db1 - db0) * 1000000 / $(getconf CLK_TCK) / (ok > 0 ? ok : 1)))
		db_note=" (PostgreSQL's backends $db_us)"
	fi
	# Requests (and runner transactions) per commit, commits per fsync.
	local shared
	shared=$(echo "$(echo "$w0" | cut -d' ' -f1-3) $(echo "$w1" | cut -d' ' -f1-3)" | awk '{c = $4 - $1; n = $5 - $2; s = $6 - $3; if (c > 0 && s > 0) printf "%.1f/%.1f", n / c, c / s; else printf "-"}')
	local sync99
	sync99=$(sync_p99 "$w0" "$w1")
	echo "$out conns=$conns due=$rate cpu_us=$cpu_us db_us=$db_us shared=$shared sync99=$sync99" >"$WORK/$name.res"
	local reached=""
	if [ "$rate" != 0 ]; then
		reached=$(awk -v r="$(echo "$out" | field rps)" -v d="$rate" 'BEGIN {if (r < 0.95 * d) printf "  RATE NOT REACHED: %d of %d/s", r, d}')
	fi
	printf '%-14s %s  server CPU %d us/request%s, calls/commit and commits/fsync %s, fsync p99 <= %s ms%s\n' "$name" "$(echo "$out" | sed 's/^result //; s/ status=.*//')" "$cpu_us" "$db_note" "$shared" "$sync99" "$reached"
}
half() { awk -v r="$(field rps <"$WORK/$1.res")" 'BEGIN{printf "%d", r / 2}'; }
# urls PORT...: -url flags for them.
urls() { for p in "$@"; do printf -- '-url http://127.0.0.1:%s ' "$p"; done; }

STEP_DB=none
echo "== ceiling: bare handler, $CONNS connections, $DURATION"
run ceiling "$CONNS" 0 "$STANDIN" -url "http://127.0.0.1:$CEIL_PORT/" -kind bare

FLOORS=() FLOOR_PORTS=("$FLOOR_PORT")
if [ "$ENGINE" = postgres ]; then
	echo "== floor: the bare handler plus one durable PostgreSQL row per request, two floor processes on one database"
	FLOOR_PORTS+=("$FLOOR_PORT2")
	for p in "${FLOOR_PORTS[@]}"; do
		"$WORK/cleanads-load" -floor "127.0.0.1:$p" -floor-db "$FLOOR_DB" >"$WORK/floor$p.log" 2>&1 &
		FLOORS+=($!)
		PIDS+=($!)
		wait_port "$p"
	done
else
	echo "== floor: the bare handler plus one durable SQLite row per request (group commit, fsynced)"
	mkdir -p "$WORK/floor"
	"$WORK/cleanads-load" -floor "127.0.0.1:$FLOOR_PORT" -floor-db "$WORK/floor/floor.db" >"$WORK/floor.log" 2>&1 &
	FLOORS+=($!)
	PIDS+=($!)
	wait_port "$FLOOR_PORT"
fi
STEP_DB=${PG_DBS[1]:-none}
FLOOR_PIDS=$(
	IFS=,
	echo "${FLOORS[*]}"
)
# shellcheck disable=SC2046 # urls gives several words on purpose
run floor "$CONNS" 0 "$FLOOR_PIDS" $(urls "${FLOOR_PORTS[@]}") -kind collect
HALF_FLOOR=$(half floor)
echo "== the floor at half of its maximum rate ($HALF_FLOOR/s): the rate for every latency step below"
# shellcheck disable=SC2046
run floor_h$CONNS "$CONNS" "$HALF_FLOOR" "$FLOOR_PIDS" $(urls "${FLOOR_PORTS[@]}") -kind collect
# shellcheck disable=SC2046
run floor_h$LOW_CONNS "$LOW_CONNS" "$HALF_FLOOR" "$FLOOR_PIDS" $(urls "${FLOOR_PORTS[@]}") -kind collect
for p in "${FLOORS[@]}"; do kill "$p"; done
wait "${FLOORS[@]}" 2>/dev/null || true
rm -rf "$WORK/floor"

STEP_DB=${PG_DBS[0]:-none}
SERVERS=() SERVER_PORTS=("$PORT")
[ "$NODES" = 2 ] && SERVER_PORTS+=("$PORT2")
for i in $(seq "$NODES"); do
	pprof=()
	[ -n "${PPROF:-}" ] && [ "$i" = 1 ] && pprof=(--pprof "$PPROF")
	"$WORK/cleanads" serve --config "$WORK/bench$i.yaml" "${pprof[@]}" >"$WORK/server$i.log" 2>&1 &
	SERVERS+=($!)
	PIDS+=($!)
	wait_port "${SERVER_PORTS[$((i - 1))]}" # one at a time: the first migrates
done
SERVER_PIDS=$(
	IFS=,
	echo "${SERVERS[*]}"
)
URLS=$(urls "${SERVER_PORTS[@]}")
TOKENS="$WORK/tokens" # collect steps add to it, leads steps take from it

# step NAME CONNS RATE KIND: one step against the servers, then wait for
# their runners.
step() {
	local extra=(-tokens "$TOKENS")
	[ "$4" = collect ] && extra=(-save-tokens "$TOKENS")
	# shellcheck disable=SC2086 # URLS is several words
	run "$1" "$2" "$3" "$SERVER_PIDS" $URLS -kind "$4" "${extra[@]}"
	settle "${SERVERS[@]}"
}
if [ "$ENGINE" = postgres ]; then
	# PostgreSQL plans a prepared statement from the table's statistics, and
	# each connection keeps a generic plan it made once: made on the empty
	# tables of a fresh database, intake's look-ups scan every lead of the
	# site instead of seeking its unique index (2 ms of PostgreSQL's CPU per
	# lead at 6,000 leads, and growing). A database in service has been
	# analysed by autovacuum, which also has the plans made again; this run
	# is a minute old. So a short warm-up writes some of each, ANALYZE gives
	# the statistics, and the steps measure the plans a running install uses.
	echo "== warm-up on PostgreSQL: 3 s of collect and of leads, then ANALYZE"
	# shellcheck disable=SC2086 # URLS is several words
	"$WORK/cleanads-load" -q -c "$CONNS" -d 3s $URLS -kind collect -save-tokens "$TOKENS" >/dev/null
	# shellcheck disable=SC2086
	"$WORK/cleanads-load" -q -c "$CONNS" -d 3s $URLS -kind leads -tokens "$TOKENS" >/dev/null
	settle "${SERVERS[@]}"
	psql "$APP_DB" -qAtX -v ON_ERROR_STOP=1 -c "ANALYZE" >/dev/null
fi
echo "== cleanads at full speed ($NODES node(s) on $ENGINE)"
step collect "$CONNS" 0 collect
step leads "$CONNS" 0 leads
echo "== cleanads at half of the floor's maximum rate ($HALF_FLOOR/s)"
step collect_h$CONNS "$CONNS" "$HALF_FLOOR" collect
step collect_h$LOW_CONNS "$LOW_CONNS" "$HALF_FLOOR" collect
step leads_h$CONNS "$CONNS" "$HALF_FLOOR" leads
step leads_h$LOW_CONNS "$LOW_CONNS" "$HALF_FLOOR" leads
echo "== cleanads at half of its own maximum rate (context)"
step collect_half "$CONNS" "$(half collect)" collect
step leads_half "$CONNS" "$(half leads)" leads
RSS_KB=$(for p in "${SERVERS[@]}"; do awk '/VmHWM/ {print $2}' "/proc/$p/status"; done | sort -n | tail -1)
if [ "$ENGINE" = postgres ]; then
	# The form tokens collect saved from either node, as the leads found
	# them on either node: every one should be valid.
	TOKENS_SEEN=$(psql "$APP_DB" -qAtX -F ' ' -c "SELECT count(*) FILTER (WHERE data LIKE '%\"valid\":true%'),
		count(*) FILTER (WHERE data LIKE '%\"problem\":\"forged\"%'), count(*) FILTER (WHERE data LIKE '%\"problem\":\"replayed\"%'), count(*)
		FROM lead_history WHERE kind = 'verdict' AND data LIKE '%\"form_token\"%'" 2>&1) &&
		echo "form tokens across the two nodes: $(echo "$TOKENS_SEEN" | awk '{printf "%s valid, %s forged, %s replayed of %s checked", $1, $2, $3, $4}')" ||
		echo "form tokens across the two nodes: could not count them: $TOKENS_SEEN"
fi
for p in "${SERVERS[@]}"; do kill "$p"; done
wait "${SERVERS[@]}" 2>/dev/null || true
kill "$STANDIN"
wait "$STANDIN" 2>/dev/null || true
grep -h "graph received" "$WORK/standin.log" || true
if grep -q 'level=ERROR' "$WORK"/server*.log; then
	echo "server errors:"
	grep -h 'level=ERROR' "$WORK"/server*.log | head -5
fi

echo "== delivery: 100,000 queued events drained into a local Graph stand-in ($ENGINE)"
drain_env=()
[ "$ENGINE" = postgres ] && drain_env=(CLEANADS_TEST_ENGINE=postgres "CLEANADS_TEST_POSTGRES=$APP_DB")
(cd "$ROOT" && env "${drain_env[@]}" go test ./internal/deliver -run '^$' -bench 'BenchmarkDrain100k' -benchtime 1x -count 1) |
	grep -E '^BenchmarkDrain' | tee "$WORK/drain.res"

echo
echo "== summary ($(date -u +%Y-%m-%d), $(nproc) CPUs: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1); $ENGINE, $NODES node(s); $DURATION a step)"
F=$(field rps <"$WORK/floor.res")
# verdict OK: "met" or "NOT MET", counted in a file (it runs in subshells).
verdict() {
	echo "$1" >>"$WORK/verdicts"
	if [ "$1" = 1 ]; then echo met; else echo "NOT MET"; fi
}
printf '%-16s %5s %10s %8s %8s %8s %7s %7s %7s %9s  %-24s %s\n' step conns "requests/s" "to floor" "p50 ms" "p99 ms" "CPU us" "DB us" calls/c "fsync p99" target ""
# row NAME KIND: KIND is ratio:MIN (a ratio to the floor), p99 (p99 under
# the target at the step's rate), or - (context).
row() {
	local name=$1 kind=$2 r p50 p99 due ratio target="" result=""
	r=$(field rps <"$WORK/$name.res")
	p50=$(field p50_ms <"$WORK/$name.res")
	p99=$(field p99_ms <"$WORK/$name.res")
	due=$(field due <"$WORK/$name.res")
	ratio=$(awk -v a="$r" -v b="$F" 'BEGIN{printf "%.2f", a / b}')
	[ "$due" != 0 ] && ratio="" # paced: the rate is the script's, not a ratio
	case "$kind" in
	ratio:*)
		target=">= ${kind#ratio:} of the floor"
		result=$(verdict "$(awk -v a="$ratio" -v m="${kind#ratio:}" 'BEGIN{print (a >= m) ? 1 : 0}')")
		;;
	p99)
		target="p99 < $P99_TARGET_MS ms at $due/s"
		if awk -v r="$r" -v d="$due" 'BEGIN{exit !(r < 0.95 * d)}'; then
			result="$(verdict 0): rate not reached ($r of $due/s)"
		else
			result=$(verdict "$(awk -v p="$p99" -v m="$P99_TARGET_MS" 'BEGIN{print (p < m) ? 1 : 0}')")
		fi
		;;
	*)
		[ "$due" != 0 ] && target="context, at $due/s"
		if [ "$due" != 0 ] && awk -v r="$r" -v d="$due" 'BEGIN{exit !(r < 0.95 * d)}'; then
			result="rate not reached ($r of $due/s)"
		fi
		;;
	esac
	printf '%-16s %5s %10s %8s %8s %8s %7s %7s %7s %9s  %-24s %s\n' "$name" "$(field conns <"$WORK/$name.res")" "$r" "$ratio" "$p50" "$p99" \
		"$(field cpu_us <"$WORK/$name.res")" "$(field db_us <"$WORK/$name.res")" "$(field shared <"$WORK/$name.res" | cut -d/ -f1)" "$(field sync99 <"$WORK/$name.res")" "$target" "$result"
}
row ceiling -
row floor -
row floor_h$CONNS -
row floor_h$LOW_CONNS -
row collect ratio:$COLLECT_TARGET
row leads ratio:$LEADS_TARGET
row collect_h$CONNS p99
row collect_h$LOW_CONNS p99
row leads_h$CONNS p99
row leads_h$LOW_CONNS p99
row collect_half -
row leads_half -
RSS_MB=$((RSS_KB / 1024))
printf 'server peak RSS (VmHWM%s): %d MB, target < %d MB: %s\n' "$([ "$NODES" = 2 ] && echo ", the larger node's")" "$RSS_MB" "$RSS_TARGET_MB" "$(verdict $((RSS_MB < RSS_TARGET_MB)))"
while read -r line; do
	name=$(echo "$line" | awk '{n = $1; sub(/^[^\/]*\//, "", n); sub(/-[0-9]+$/, "", n); print n}')
	eps=$(echo "$line" | awk '{for (i = 1; i <= NF; i++) if ($i == "events/s") printf "%d", $(i-1)}')
	heap=$(echo "$line" | awk '{for (i = 1; i <= NF; i++) if ($i == "peak_heap_MB") print $(i-1)}')
	printf 'delivery drain (%s): %s events/s, target >= %d: %s; peak Go heap %s MB\n' "$name" "$eps" "$DRAIN_TARGET" "$(verdict $((eps >= DRAIN_TARGET)))" "$heap"
done <"$WORK/drain.res"
echo "(CPU us: the server's CPU per request, both nodes' on PostgreSQL, the floor's for the floor rows; DB us: PostgreSQL's backends';"
echo " calls/c: InTx calls per SQLite commit; fsync p99: bound of the histogram bucket holding the step's p99 of the log's fsyncs)"
echo "targets met: $(grep -c 1 "$WORK/verdicts"), not met: $(grep -c 0 "$WORK/verdicts")"
