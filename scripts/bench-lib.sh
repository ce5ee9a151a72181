# bench-lib.sh: what scripts/bench-services.sh and scripts/cpu-per-request.sh share; sourced
# after setting root (the repository). Both keep the pids of what they start in the array pids.

# The settings both read, with their defaults (bench-services.sh documents them).
PERF_DIR="${PERF_DIR:-$root/../shared/perf}"
ENGINES="${ENGINES:-sqlite postgres}"
PERF_PG_URL="${PERF_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
MODES="${MODES:-webhook authorize credit-flow}"
CONCURRENCY="${CONCURRENCY:-1 8}"

# stop_services stops every process in pids and waits for it.
stop_services() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

pg_db() { # name -> URL of that database on PERF_PG_URL's server
  local base="${PERF_PG_URL%%\?*}" query=""
  [[ "$PERF_PG_URL" == *\?* ]] && query="?${PERF_PG_URL#*\?}"
  echo "${base%/*}/$1$query"
}

pg_recreate() { # name
  psql -q -v ON_ERROR_STOP=1 "$PERF_PG_URL" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
}
