# bench-lib.sh: what scripts/bench-services.sh and scripts/cpu-per-request.sh share; sourced.
# Both set PERF_PG_URL and keep the pids of what they start in the array pids.

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
