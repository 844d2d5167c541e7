#!/usr/bin/env bash
# BenchmarkSQL (../shared/tools/benchmarksql, the book's kit, unmodified) against
# `waterline serve` and against MariaDB from Debian's package, each started here in a
# temporary directory at the same durability and isolation (read back from each server; a
# mismatch stops the script), each loaded once by BenchmarkSQL's own build script, then
# measured in alternating runs (the idle server stopped with SIGSTOP meanwhile, so its
# background work cannot take the other's CPU). Writes results/<date>-<host>/<NAME>/:
# RUN.md (what ran where), runs.csv (every run's tpmC and tpmTOTAL, the transactions that
# failed, deadlocks' victims among them, and the configuration each server reported) and summary.md (each pair's ratio waterline / MariaDB and the median).
#
# Usage: scripts/compare-benchmarksql.sh WATERLINE_BINARY NAME RUNS DURABILITY MINUTES TERMINALS
#   DURABILITY  durable: waterline --data-dir (fdatasync per group) against MariaDB with
#                        innodb_flush_log_at_trx_commit=1;
#               memory:  waterline in memory against innodb_flush_log_at_trx_commit=0.
# e.g. scripts/compare-benchmarksql.sh target/measure/waterline bmsql-durable 3 durable 1 8
# The binary says which commit it was built from (`waterline --version`; see run-info.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
. scripts/benchmarksql-out.sh
. scripts/mariadb-server.sh
binary=$(realpath "$1") name=$2 runs=$3 durability=$4 minutes=$5 terminals=$6
warn_profile "$binary"
case "$durability" in
  durable) flush=1 ;;
  memory) flush=0 ;;
  *) echo "DURABILITY is durable or memory" >&2; exit 2 ;;
esac
kit=$(realpath ../shared/tools/benchmarksql)
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
work=$(mktemp -d)
trap 'kill -CONT $wl_pid $md_pid 2>/dev/null; kill $wl_pid $md_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$kit" "$work/kit"
(cd "$work/kit" && ant -q > /dev/null)
wl_port=4417 md_port=4418

wl_args=(serve --listen 127.0.0.1:$wl_port --database tpcc)
[ "$durability" = durable ] && wl_args+=(--data-dir "$work/waterline" --flush every-commit)
"$binary" "${wl_args[@]}" > "$work/waterline.log" 2>&1 &
wl_pid=$!

start_mariadb "$work/mariadb" $md_port $flush REPEATABLE-READ

wait_for $wl_port $md_port
ask $md_port "CREATE DATABASE tpcc"

# What each server says it does, not what it was told.
wl_flush=$(ask $wl_port "SELECT @@innodb_flush_log_at_trx_commit")
md_flush=$(ask $md_port "SELECT @@innodb_flush_log_at_trx_commit")
wl_isolation=$(ask $wl_port "SELECT @@transaction_isolation")
md_isolation=$(ask $md_port "SELECT @@tx_isolation")
wl_durability=$(ask $wl_port "SELECT @@waterline_durability")
if [ "$wl_flush" != "$md_flush" ] || [ "$wl_isolation" != "$md_isolation" ]; then
  echo "refused: waterline flush=$wl_flush $wl_isolation, MariaDB flush=$md_flush $md_isolation" >&2
  exit 1
fi

props() {
  sed -e "s#localhost:4000/tpcc#127.0.0.1:$1/tpcc#" -e "s/^terminals=.*/terminals=$terminals/" \
    -e "s/^runMins=.*/runMins=$minutes/" -e "s/^resultDirectory=/\/\/resultDirectory=/" \
    "$work/kit/run/props.mysql" > "$work/kit/run/props.$1"
}
props $wl_port
props $md_port
for port in $wl_port $md_port; do
  (cd "$work/kit/run" && ./runDatabaseBuild.sh "props.$port" > "$work/build.$port.log" 2>&1)
done

echo "pair,build,server,tpmC,tpmTOTAL,errors,flush,isolation,steal_pct" > "$dir/runs.csv"
for pair in $(seq 1 "$runs"); do
  for build in base new; do
    if [ "$build" = new ]; then
      port=$wl_port server=waterline f=$wl_flush i=$wl_isolation run=$wl_pid idle=$md_pid
    else
      port=$md_port server=mariadb f=$md_flush i=$md_isolation run=$md_pid idle=$wl_pid
    fi
    kill -STOP $idle
    kill -CONT $run
    mark=$(cpu_mark)
    out=$(cd "$work/kit/run" && ./runBenchmark.sh "props.$port" 2>&1)
    steal=$(steal_since "$mark")
    kill -CONT $idle
    measured "$out" || exit 1
    echo "$pair,$build,$server,$tpmc,$total,$errors,$f,$i,$steal" >> "$dir/runs.csv"
    echo "run $pair $server: tpmC $tpmc"
  done
done

{
  echo "BenchmarkSQL tpmC, waterline (candidate) against MariaDB (baseline):"
  echo
  scripts/pairs-summary.py "$dir/runs.csv" tpmC tpmC
} > "$dir/summary.md"
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/compare-benchmarksql.sh $* \`: BenchmarkSQL 5.0 (MySQL fork, unmodified, Connector/J 8.0.13 with \`props.mysql\`'s URL options), 1 warehouse, ${terminals} terminals, ${minutes} min a run, ${runs} alternating pairs after one load of each server"
  echo "- waterline: \`${wl_args[*]}\`, reporting innodb_flush_log_at_trx_commit=${wl_flush}, waterline_durability=${wl_durability}, ${wl_isolation}"
  echo "- MariaDB: $(mariadb_described), reporting innodb_flush_log_at_trx_commit=${md_flush}, ${md_isolation}"
  run_info "waterline built from" "$binary"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
