#!/usr/bin/env bash
# make run: builds both services and runs them in development mode on the embedded defaults
# (SQLite under ./data, built-in fakes of the upstreams). CREDIT_PORT / TOPUP_PORT move them off
# 3005 / 3004. When either service exits, the other is stopped; the exit status is non-zero when
# either failed (a port taken, a bad setting). SIGINT/SIGTERM stop both, each draining its
# in-flight requests. The binaries run directly, not under `go run`, which dies on SIGTERM and
# leaves its child running.
set -uo pipefail
# wait -n -p (which service exited first) is bash 5.1.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
  echo "run: needs bash 5.1 or newer, found $BASH_VERSION" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
GO=${GO:-go}
mkdir -p data
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

echo "run: building the credit and top-up services (the first build takes a few minutes)..." >&2
if ! "$GO" build -o "$bin/" ./services/credit ./services/topup; then
  echo "run: build failed" >&2
  exit 1
fi

PORT=${CREDIT_PORT:-3005} "$bin/credit" &
credit=$!
PORT=${TOPUP_PORT:-3004} "$bin/topup" &
topup=$!
stopping=""
trap 'stopping=1; kill -TERM "$credit" "$topup" 2>/dev/null' INT TERM

# Wait for the first service to exit (or a signal), then stop the other.
declare -A rcs
first=""
wait -n -p first "$credit" "$topup"
rc=$?
first=${first:-}
[ -n "$first" ] && rcs[$first]=$rc
kill -TERM "$credit" "$topup" 2>/dev/null
status=0
for pid in "$credit" "$topup"; do
  if [ -z "${rcs[$pid]+set}" ]; then
    wait "$pid"
    rc=$?
    # A signal caught by the trap interrupts wait: wait again while the service drains.
    while [ "$rc" -gt 128 ] && kill -0 "$pid" 2>/dev/null; do
      wait "$pid"
      rc=$?
    done
    # The service may have exited between the interrupted wait and kill -0: read its status.
    if [ "$rc" -gt 128 ]; then
      wait "$pid"
      rc=$?
    fi
    rcs[$pid]=$rc
  fi
  name=credit
  [ "$pid" = "$topup" ] && name=topup
  if [ "${rcs[$pid]}" -ne 0 ]; then
    echo "run: the $name service exited with status ${rcs[$pid]}" >&2
    status=1
  elif [ -z "$stopping" ] && [ "$pid" = "$first" ]; then
    echo "run: the $name service stopped; stopping the other" >&2
  fi
done
exit "$status"
