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
python3 - "$dir/pairs.csv" > "$dir/summary.md" <<'EOF'
import csv, statistics, sys
runs = {}
for r in csv.DictReader(open(sys.argv[1])):
    runs.setdefault(r["pair"], {})[r["build"]] = float(r["tps"])
ratios = [p["new"] / p["base"] for p in runs.values()]
print("| pair | baseline tps | candidate tps | ratio |")
print("|---|---|---|---|")
for pair, p in runs.items():
    print(f'| {pair} | {p["base"]:.0f} | {p["new"]:.0f} | {p["new"] / p["base"]:.3f} |')
print()
print(f"Median ratio (candidate / baseline): {statistics.median(ratios):.3f}")
print()
print("Isolation as each server reported it: see pairs.csv.")
EOF
{
  echo "# ${name}"
  echo
  echo "- command: \`sysbench ${test} ${common[*]} $* run\` against \`waterline serve\`, ${pairs} alternating pairs, a fresh in-memory server per run"
  echo "- baseline: ${base_commit}"
  echo "- candidate: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with uncommitted changes)')"
  echo "- ran: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
} > "$dir/RUN.md"
cat "$dir/summary.md"
echo "results: $dir"
