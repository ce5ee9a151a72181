#!/usr/bin/env bash
# cpu-per-request.sh: CPU time per request of each process on the machine (the floor program or
# the service, the floor's upstream, PostgreSQL's processes, the load generator), the floor and
# the service alternated per mode and concurrency, one JSON line each. See BENCHMARKS.md, "CPU
# per request, by process". Read c=8: at c=1 the Go runtime's idle spinning between requests
# inflates every Go process's figure. Run it with nothing else on the machine: the PostgreSQL
# figure sums every process of the server, whichever database it works for.
#
# Environment (all optional, as scripts/bench-services.sh): PERF_DIR, ENGINES, PERF_PG_URL,
# MODES, CONCURRENCY, D (measured seconds per run, default 8s).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/bench-lib.sh
source "$root/scripts/bench-lib.sh"
D="${D:-8s}"
JWT_SECRET=bench-jwt-secret-0123456789abcdef TOPUP_SERVICE_KEY=bench-topup-key

work="$(mktemp -d /tmp/cpu-per-request.XXXXXX)"
pids=()
trap 'stop_services; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

(cd "$root" && go build -o "$work/bin/" ./services/credit ./services/topup)
(cd "$PERF_DIR" && CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/load ./cmd/floor ./cmd/upstream)

cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; } # clock ticks
pg_cpu() {
  local p sum=0
  for p in $(pgrep -x postgres || true); do sum=$((sum + $(cpu "$p"))); done
  echo "$sum"
}
wait_up() {
  local i
  for i in $(seq 1 500); do
    curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$1/up" 2>/dev/null && return 0
    sleep 0.01
  done
  return 1
}

# measure LABEL PORT MODE C PID: a 2 s warm-up, then D measured.
measure() {
  local label=$1 port=$2 mode=$3 c=$4 pid=$5 tick s0 p0 u0 s1 p1 u1
  tick=$(getconf CLK_TCK)
  "$work/bin/load" -mode "$mode" -url "http://127.0.0.1:$port" -c "$c" -d 2s \
    -jwt-secret "$JWT_SECRET" -service-key "$TOPUP_SERVICE_KEY" >/dev/null
  s0=$(cpu "$pid") p0=$(pg_cpu) u0=$(cpu "$upstream")
  /usr/bin/time -f '%U %S' -o "$work/time" "$work/bin/load" -mode "$mode" -url "http://127.0.0.1:$port" \
    -c "$c" -d "$D" -jwt-secret "$JWT_SECRET" -service-key "$TOPUP_SERVICE_KEY" >"$work/load.json"
  s1=$(cpu "$pid") p1=$(pg_cpu) u1=$(cpu "$upstream")
  jq -c --arg lab "$label" --argjson tick "$tick" --argjson s $((s1 - s0)) --argjson p $((p1 - p0)) \
    --argjson u $((u1 - u0)) --argjson l "$(awk '{print $1 + $2}' "$work/time")" '
    def us(t): t * 1e6 / .requests | round;
    {label: $lab, mode, c, req_rate: (.req_rate // .rate | round), p50_ms: .latency_ms.p50,
     us_per_request: {process: us($s / $tick), upstream: us($u / $tick), postgres: us($p / $tick), load: us($l)}}' \
    "$work/load.json"
}

for engine in $ENGINES; do
  rm -rf "$work/data"; mkdir -p "$work/data"
  if [[ $engine == postgres ]]; then
    pg_recreate perf_floor; pg_recreate perf_credit; pg_recreate perf_topup
    floor_db=$(pg_db perf_floor) credit_db=$(pg_db perf_credit) topup_db=$(pg_db perf_topup)
  else
    floor_db=$work/data/floor.db credit_db=$work/data/credit.db topup_db=$work/data/topup.db
  fi
  "$work/bin/upstream" -addr 127.0.0.1:18480 >"$work/upstream.log" 2>&1 &
  upstream=$!
  "$work/bin/floor" -addr 127.0.0.1:18481 -dsn "$floor_db" -reset -jwt-secret "$JWT_SECRET" \
    -service-key "$TOPUP_SERVICE_KEY" >"$work/floor.log" 2>&1 &
  floor=$!
  (cd "$work" && exec env PORT=3005 APP_ENV=development DATABASE_URL="$credit_db" JWT_SECRET="$JWT_SECRET" \
    "$work/bin/credit") >"$work/credit.log" 2>&1 &
  credit=$!
  (cd "$work" && exec env PORT=3004 APP_ENV=development DATABASE_URL="$topup_db" TOPUP_SERVICE_KEY="$TOPUP_SERVICE_KEY" \
    CARRIER_MOCK_MODE=false CARRIER_SPR_URL=http://127.0.0.1:18480/carrier/spr "$work/bin/topup") >"$work/topup.log" 2>&1 &
  topup=$!
  pids=("$upstream" "$floor" "$credit" "$topup")
  wait_up 18481 && wait_up 3005 && wait_up 3004
  for mode in $MODES; do
    for c in $CONCURRENCY; do
      port=3005 pid=$credit
      if [[ $mode == webhook ]]; then port=3004 pid=$topup; fi
      measure "floor/$engine" 18481 "$mode" "$c" "$floor"
      measure "service/$engine" "$port" "$mode" "$c" "$pid"
    done
  done
  stop_services
done
