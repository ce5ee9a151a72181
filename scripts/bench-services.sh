#!/usr/bin/env bash
# bench-services.sh: the two services side by side with the floor program of ../shared/perf,
# on SQLite and on PostgreSQL, RUNS times each; prints one JSON line per load run (a .jsonl
# under $OUT) and then the ratio table (medians over the runs). See BENCHMARKS.md.
#
# Environment (all optional):
#   PERF_DIR      the perf harness (default ../shared/perf from the repository root)
#   ENGINES       "sqlite postgres" (default); postgres needs PERF_PG_URL
#   PERF_PG_URL   a PostgreSQL server URL whose user may create databases (default
#                 postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable); the script
#                 creates and drops perf_floor, perf_credit and perf_topup on it
#   RUNS          runs per engine (default 3); MODES, CONCURRENCY, D, WARMUP as run-floor.sh
#   OUT           where the JSON lines go (default ./bench-out)
#   SERVICE_ENV   extra NAME=VALUE words for both services only (e.g. GOGC=200), not the floor
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/bench-lib.sh
source "$root/scripts/bench-lib.sh"
RUNS="${RUNS:-3}"
export MODES CONCURRENCY # run-floor.sh reads them
export D="${D:-10s}" WARMUP="${WARMUP:-2s}"
OUT="${OUT:-$root/bench-out}"
export JWT_SECRET=bench-jwt-secret-0123456789abcdef TOPUP_SERVICE_KEY=bench-topup-key
mkdir -p "$OUT"

work="$(mktemp -d /tmp/bench-services.XXXXXX)"
pids=()
trap 'stop_services; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

echo "bench-services: building the services into $work/bin" >&2
(cd "$root" && go build -o "$work/bin/" ./services/credit ./services/topup)

# start NAME PORT DATABASE_URL [ENV=V...]: start a service, wait for /up, print its start-up
# time and idle RSS as a JSON line.
start() {
  local name=$1 port=$2 dsn=$3
  shift 3
  local t0 t1 pid i rss
  t0=$(date +%s%N)
  # In the work directory: the development e-mails (./data/outbox) stay out of the checkout.
  # shellcheck disable=SC2086 # SERVICE_ENV is a list of words
  (cd "$work" && exec env PORT="$port" APP_ENV=development DATABASE_URL="$dsn" "$@" ${SERVICE_ENV:-} \
    "$work/bin/$name") >"$work/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for i in $(seq 1 500); do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port/up" 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$work/$name.log" >&2; return 1; fi
    sleep 0.01
  done
  t1=$(date +%s%N)
  sleep 2
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  printf '{"startup_of":"%s","engine":"%s","ms_to_up":%d,"idle_rss_kb":%d}\n' \
    "$name" "$engine" $(((t1 - t0) / 1000000)) "$rss"
}

for engine in $ENGINES; do
  for run in $(seq 1 "$RUNS"); do
    out="$OUT/$engine-$run.jsonl"
    if [[ $engine == postgres ]]; then
      pg_recreate perf_floor; pg_recreate perf_credit; pg_recreate perf_topup
      export FLOOR_DSN; FLOOR_DSN="$(pg_db perf_floor)"
      credit_db="$(pg_db perf_credit)" topup_db="$(pg_db perf_topup)"
    else
      unset FLOOR_DSN
      rm -rf "$work/data"; mkdir -p "$work/data"
      credit_db="$work/data/credit.db" topup_db="$work/data/topup.db"
    fi
    {
      start credit 3005 "$credit_db" JWT_SECRET="$JWT_SECRET"
      start topup 3004 "$topup_db" TOPUP_SERVICE_KEY="$TOPUP_SERVICE_KEY" \
        CARRIER_MOCK_MODE=false CARRIER_SPR_URL=http://127.0.0.1:18480/carrier/spr
    } >"$out"
    CREDIT_URL=http://127.0.0.1:3005 TOPUP_URL=http://127.0.0.1:3004 \
      "$PERF_DIR/run-floor.sh" >>"$out" || echo "bench-services: a run failed ($out)" >&2
    stop_services
    echo "bench-services: $engine run $run -> $out" >&2
  done
done

# Ratios per engine, mode and c: the median over the runs of each side-by-side figure.
cat "$OUT"/*.jsonl | jq -s -r '
  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def r2: . * 100 | round / 100;
  [.[] | select(.label) | .engine = (if (.label | startswith("floor")) then (.label | split("/")[1]) else null end)] as $runs
  # The credit flow also gives p99/p50 per flow and of its worst step (per request, the three
  # steps of different cost make one distribution with two humps); the last column is p99/p50
  # of the floor program.
  | def steps: if .step_latency_ms then [.step_latency_ms[] | .p99 / .p50] | max else null end;
    def flow: if .flow_latency_ms then .flow_latency_ms.p99 / .flow_latency_ms.p50 else null end;
    def col(f): map(.s | f) | if any(. == null) then "-" else median | r2 | tostring end;
    "| engine | mode | c | floor rate/s | service rate/s | rate ratio | floor p50 ms | service p50 ms | p50 ratio | service p99/p50 | per flow | worst step | floor p99/p50 |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ( [range(0; $runs | length)] | map(select($runs[.].engine != null and ($runs[. + 1].label // "") == "service"))
      | map({engine: $runs[.].engine, mode: $runs[.].mode, c: $runs[.].c, f: $runs[.], s: $runs[. + 1]})
      | group_by([.engine, .mode, .c])[]
      | "| \(.[0].engine) | \(.[0].mode) | \(.[0].c) | \(map(.f.rate) | median | round) | \(map(.s.rate) | median | round) | \(map(.s.rate / .f.rate) | median | r2) | \(map(.f.latency_ms.p50) | median | r2) | \(map(.s.latency_ms.p50) | median | r2) | \(map(.s.latency_ms.p50 / .f.latency_ms.p50) | median | r2) | \(map(.s.latency_ms.p99 / .s.latency_ms.p50) | median | r2) | \(col(flow)) | \(col(steps)) | \(map(.f.latency_ms.p99 / .f.latency_ms.p50) | median | r2) |" ),
    "",
    "| service | engine | start to /up ms | idle RSS MB |",
    "|---|---|---|---|",
    ( [.[] | select(.startup_of)] | group_by([.startup_of, .engine])[]
      | "| \(.[0].startup_of) | \(.[0].engine) | \(map(.ms_to_up) | median) | \(map(.idle_rss_kb) | median / 1024 | r2) |" )'
