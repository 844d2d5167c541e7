#!/usr/bin/env bash
# `waterline serve` against MariaDB from Debian's package, at equal durability and isolation:
# both servers start here in a temporary directory, each says what it does (read back; a
# mismatch stops the script before anything is measured), then every workload runs on both
# in alternating pairs (scripts/server-pairs.sh). Writes results/<date>-<host>/<NAME>/:
# RUN.md (what ran where), runs-<workload>.csv (every run: transactions per second, deadlocks
# per 1,000 transactions from the server's own Innodb_deadlocks, latency, what the server
# reported) and summary.md (per workload: the pairs, each ratio waterline / MariaDB, the
# median).
#
# Usage: scripts/compare-mariadb.sh WATERLINE_BINARY NAME PAIRS DURABILITY ISOLATION SECONDS \
#          [-- WATERLINE SERVE FLAGS...]
#   DURABILITY  durable: waterline --data-dir, fdatasync per group, against
#                        innodb_flush_log_at_trx_commit=1;
#               memory:  waterline in memory against innodb_flush_log_at_trx_commit=0.
#   ISOLATION   read-committed or repeatable-read, for both servers.
#   SECONDS     measured per run (after a 3 s warm-up for tpcc, none for sysbench).
#   WATERLINE SERVE FLAGS  e.g. --lock-release early
# e.g. scripts/compare-mariadb.sh target/measure/waterline vs-mariadb-durable 3 durable \
#        read-committed 20 -- --lock-release early
# The workloads are server-pairs.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
. scripts/server-pairs.sh
command="$*"
binary=$(realpath "$1") name=$2 pairs=$3 durability=$4 isolation=$5 seconds=$6
warn_profile "$binary"
shift 6
[ "${1:-}" = "--" ] && shift
serve_flags=("$@")
case "$durability" in
  durable) flush=1 ;;
  memory) flush=0 ;;
  *) echo "DURABILITY is durable or memory" >&2; exit 2 ;;
esac
case "$isolation" in
  read-committed) md_isolation=READ-COMMITTED ;;
  repeatable-read) md_isolation=REPEATABLE-READ ;;
  *) echo "ISOLATION is read-committed or repeatable-read" >&2; exit 2 ;;
esac
begin_comparison "$name"
wl_port=$new_port md_port=$base_port

wl_args=(--transparent-huge-pages off serve --listen 127.0.0.1:$wl_port --database tpcc
  --database sbtest --isolation "$isolation" --max-connections 2000 "${serve_flags[@]}")
[ "$durability" = durable ] && wl_args+=(--data-dir "$work/waterline" --flush every-commit)
"$binary" "${wl_args[@]}" > "$work/waterline.log" 2>&1 &
new_pid=$!
start_mariadb "$work/mariadb" $md_port $flush $md_isolation
base_pid=$md_pid

wait_for $wl_port $md_port
ask $md_port "CREATE DATABASE tpcc; CREATE DATABASE sbtest"

# What each server says it does, not what it was told.
reported() {
  # MariaDB 10.11 has no @@transaction_isolation; both have @@tx_isolation.
  ask "$1" "SELECT @@innodb_flush_log_at_trx_commit, @@tx_isolation" | tr '\t' ' '
}
wl_reported=$(reported $wl_port) md_reported=$(reported $md_port)
if [ "$wl_reported" != "$md_reported" ]; then
  echo "refused: waterline reports flush/isolation '$wl_reported', MariaDB '$md_reported'" >&2
  exit 1
fi
wl_durability=$(ask $wl_port "SELECT @@waterline_durability")
wl_release=$(ask $wl_port "SELECT @@waterline_lock_release")

sysbench_prepare $wl_port $md_port
new_name=waterline new_said=$wl_reported
base_name=mariadb base_said=$md_reported
run_pairs "$dir" "$pairs"
summarize "$dir" "Transactions per second, waterline (candidate) against MariaDB (baseline), ${durability}, ${isolation}:"
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/compare-mariadb.sh ${command}\` (PAIRS ${pairs}, ${durability}, ${isolation}, ${seconds} s a run), the waterline run first in each pair"
  echo "- waterline: \`waterline ${wl_args[*]}\`, reporting flush/isolation '${wl_reported}', waterline_durability=${wl_durability}, waterline_lock_release=${wl_release}"
  echo "- MariaDB: $(mariadb_described), reporting flush/isolation '${md_reported}'"
  tools_described
} > "$dir/RUN.md"
end_comparison
