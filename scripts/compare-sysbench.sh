#!/usr/bin/env bash
# Compares two builds of `waterline serve` under one sysbench workload in alternating pairs
# (baseline, then candidate, PAIRS times, each on a fresh server, in one sitting) and writes
# results/<date>-<host>/<NAME>/: RUN.md, pairs.csv (every run's transactions and deadlock
# retries per second, the isolation level and durability each server reported, the mean
# fdatasync it measured and the share of CPU time the hypervisor stole during the run) and
# summary.md (the median of the pair ratios candidate/baseline). The servers run in memory,
# or with --durable each with a fresh --data-dir and --flush every-commit (fdatasync per
# group).
#
# Usage: scripts/compare-sysbench.sh BASE_BINARY BASE_COMMIT NEW_BINARY NAME PAIRS \
#          [--durable] -- TEST [SYSBENCH ARGS...]  e.g. -- oltp_read_write --threads=16 --time=20
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
base=$1 base_commit=$2 new=$3 name=$4 pairs=$5
warn_profile "$base" "$new"
shift 5
durable=()
if [ "${1:-}" = "--durable" ]; then
  durable=(--flush every-commit)
  shift
fi
[ "${1:-}" = "--" ] && shift
test=$1
shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
port=3417
common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root
  --mysql-db=sbtest --tables=1 --table-size=10000)
ask() { mariadb -h 127.0.0.1 -P $port -u root -N -B -e "$1"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "pair,build,tps,deadlocks_per_sec,isolation,durability,fsync_us_mean,steal_pct" > "$dir/pairs.csv"
for pair in $(seq 1 "$pairs"); do
  for build in base new; do
    binary=$base
    [ "$build" = new ] && binary=$new
    data=()
    [ ${#durable[@]} -gt 0 ] && data=(--data-dir "$scratch/data-$build-$pair" "${durable[@]}")
    "$binary" --transparent-huge-pages off serve --listen 127.0.0.1:$port "${data[@]}" \
      > /dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do ask "SELECT 1" > /dev/null 2>&1 && break; sleep 0.1; done
    ask "CREATE DATABASE IF NOT EXISTS sbtest" > /dev/null 2>&1 || true
    isolation=$(ask "SELECT @@transaction_isolation")
    durability=$(ask "SELECT @@waterline_durability")
    sysbench "$test" "${common[@]}" prepare > /dev/null
    # The server's own count and time of its log syncs, around the run only (not the
    # prepare's): the mean fdatasync (n/a in memory).
    syncs() { ask "SHOW GLOBAL STATUS LIKE 'Waterline_fsync%'" | awk '{ printf "%s ", $2 }'; }
    before=$(syncs)
    mark=$(cpu_mark)
    report=$(sysbench "$test" "${common[@]}" "$@" run)
    steal=$(steal_since "$mark")
    fsync_us=$(echo "$before $(syncs)" | awk '{ n = $3 - $1; us = $4 - $2 }
      END { print n ? sprintf("%.0f", us / n) : "n/a" }')
    kill "$server"
    wait "$server" 2>/dev/null || true
    tps=$(echo "$report" | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}')
    retries=$(echo "$report" | awk '/ignored errors:/ {gsub(/[(]/, "", $4); print $4}')
    echo "$pair,$build,$tps,$retries,$isolation,$durability,$fsync_us,$steal" >> "$dir/pairs.csv"
  done
done
scripts/pairs-summary.py "$dir/pairs.csv" tps tps > "$dir/summary.md"
{
  echo "# ${name}"
  echo
  echo "- command: \`sysbench ${test} ${common[*]} $* run\` against \`waterline serve ${durable[*]:+--data-dir DIR ${durable[*]}}\`, ${pairs} alternating pairs, a fresh server per run (durability as pairs.csv reports it)"
  echo "- baseline: ${base_commit}"
  echo "- baseline's build profile: $(build_profile "$base")"
  run_info candidate "$new"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
