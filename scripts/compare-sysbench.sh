#!/usr/bin/env bash
# Compares two builds of `waterline serve` under one sysbench workload in alternating pairs
# (baseline, then candidate, PAIRS times, each on a fresh in-memory server, in one sitting)
# and writes results/<date>-<host>/<NAME>/: RUN.md, pairs.csv (every run's transactions and
# deadlock retries per second, with the isolation level each server reported; the servers run
# in memory, without --data-dir)
# and summary.md (the median of the pair ratios candidate/baseline).
#
# Usage: scripts/compare-sysbench.sh BASE_BINARY BASE_COMMIT NEW_BINARY NAME PAIRS -- \
#          TEST [SYSBENCH ARGS...]        e.g. -- oltp_read_write --threads=16 --time=20
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
base=$1 base_commit=$2 new=$3 name=$4 pairs=$5
shift 5
[ "${1:-}" = "--" ] && shift
test=$1
shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
port=3417
common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root
  --mysql-db=sbtest --tables=1 --table-size=10000)
ask() { mariadb -h 127.0.0.1 -P $port -u root -N -B -e "$1"; }
echo "pair,build,tps,deadlocks_per_sec,isolation" > "$dir/pairs.csv"
for pair in $(seq 1 "$pairs"); do
  for build in base new; do
    binary=$base
    [ "$build" = new ] && binary=$new
    "$binary" --transparent-huge-pages off serve --listen 127.0.0.1:$port > /dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do ask "SELECT 1" > /dev/null 2>&1 && break; sleep 0.1; done
    ask "CREATE DATABASE IF NOT EXISTS sbtest" > /dev/null 2>&1 || true
    isolation=$(ask "SELECT @@transaction_isolation")
    sysbench "$test" "${common[@]}" prepare > /dev/null
    report=$(sysbench "$test" "${common[@]}" "$@" run)
    kill "$server"
    wait "$server" 2>/dev/null || true
    tps=$(echo "$report" | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}')
    retries=$(echo "$report" | awk '/ignored errors:/ {gsub(/[(]/, "", $4); print $4}')
    echo "$pair,$build,$tps,$retries,$isolation" >> "$dir/pairs.csv"
  done
done
scripts/pairs-summary.py "$dir/pairs.csv" tps tps > "$dir/summary.md"
{
  echo "# ${name}"
  echo
  echo "- command: \`sysbench ${test} ${common[*]} $* run\` against \`waterline serve\`, ${pairs} alternating pairs, a fresh in-memory server per run"
  echo "- baseline: ${base_commit}"
  run_info candidate "$new"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
