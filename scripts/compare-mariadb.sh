#!/usr/bin/env bash
# `waterline serve` against MariaDB from Debian's package, at equal durability and isolation:
# both servers start here in a temporary directory, each says what it does (read back; a
# mismatch stops the script before anything is measured), then every workload runs on both
# in alternating pairs (the idle server stopped with SIGSTOP meanwhile, so its background
# work cannot take the other's CPU). Writes results/<date>-<host>/<NAME>/: RUN.md (what ran
# where), runs-<workload>.csv (every run: transactions per second, deadlocks per 1,000
# transactions from the server's own Innodb_deadlocks, what the server reported) and
# summary.md (per workload: the pairs, each ratio waterline / MariaDB, the median).
#
# Usage: scripts/compare-mariadb.sh WATERLINE_BINARY NAME PAIRS DURABILITY ISOLATION SECONDS \
#          [-- WATERLINE SERVE FLAGS...]
#   DURABILITY  durable: waterline --data-dir, fdatasync per group, against
#                        innodb_flush_log_at_trx_commit=1;
#               memory:  waterline in memory against innodb_flush_log_at_trx_commit=0.
#   ISOLATION   read-committed or repeatable-read, for both servers.
#   SECONDS     measured per run (after a 3 s warm-up for tpcc, none for sysbench).
#   WATERLINE SERVE FLAGS  e.g. --lock-release early
# e.g. scripts/compare-mariadb.sh target/release/waterline vs-mariadb-durable 3 durable \
#        read-committed 20 -- --lock-release early
# The workloads: `waterline tpcc` over mysql:// at 64 clients (tokio tasks; loaded afresh
# each run), and sysbench oltp_read_write at 16 and 64 threads, oltp_write_only at 16 and
# oltp_point_select at 16 (one table of 10,000 rows, prepared once per server).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
. scripts/mariadb-server.sh
command="$*"
binary=$(realpath "$1") name=$2 pairs=$3 durability=$4 isolation=$5 seconds=$6
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
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
rm -f "$dir"/runs-*.csv
work=$(mktemp -d)
trap 'kill -CONT $wl_pid $md_pid 2>/dev/null; kill $wl_pid $md_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
wl_port=4427 md_port=4428

wl_args=(--transparent-huge-pages off serve --listen 127.0.0.1:$wl_port --database tpcc
  --database sbtest --isolation "$isolation" --max-connections 2000 "${serve_flags[@]}")
[ "$durability" = durable ] && wl_args+=(--data-dir "$work/waterline" --flush every-commit)
"$binary" "${wl_args[@]}" > "$work/waterline.log" 2>&1 &
wl_pid=$!
start_mariadb "$work/mariadb" $md_port $flush $md_isolation

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

deadlocks() { ask "$1" "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'" | awk '{print $2}'; }
sysbench_common() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size=10000
}
for port in $wl_port $md_port; do
  # shellcheck disable=SC2046
  sysbench oltp_read_write $(sysbench_common $port) prepare > /dev/null
done

# run_one WORKLOAD PORT: prints "tps transactions" for one measured run.
run_one() {
  local workload=$1 port=$2 out
  case "$workload" in
    tpcc-64)
      out="$work/tpcc-$port"
      rm -rf "$out"
      "$binary" tpcc --backend "mysql://root@127.0.0.1:$port/tpcc" --clients 64 \
        --runtime tasks --isolation "$isolation" --duration "$seconds" --warmup 3 \
        --report-dir "$out" > "$out.log" 2>&1
      python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
print(round(p["txn_per_sec"], 1), sum(t["committed"] for t in p["transactions"].values()))' "$out/results.json"
      ;;
    *)
      local test=${workload%-*} threads=${workload##*-}
      # shellcheck disable=SC2046
      sysbench "$test" $(sysbench_common "$port") --threads="$threads" --time="$seconds" \
        --report-interval=0 run | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3, $2}'
      ;;
  esac
}

workloads=(tpcc-64 oltp_read_write-16 oltp_read_write-64 oltp_write_only-16 oltp_point_select-16)
for workload in "${workloads[@]}"; do
  csv="$dir/runs-$workload.csv"
  echo "pair,build,server,tps,deadlocks_per_1000,flush_isolation" > "$csv"
  for pair in $(seq 1 "$pairs"); do
    for build in new base; do
      if [ "$build" = new ]; then
        port=$wl_port server=waterline run=$wl_pid idle=$md_pid said=$wl_reported
      else
        port=$md_port server=mariadb run=$md_pid idle=$wl_pid said=$md_reported
      fi
      kill -STOP $idle
      kill -CONT $run
      before=$(deadlocks $port)
      read -r tps transactions < <(run_one "$workload" $port) || true
      if [ -z "${tps:-}" ]; then
        echo "$workload on $server measured nothing; see $work (kept)" >&2
        trap - EXIT
        kill -CONT $wl_pid $md_pid; kill $wl_pid $md_pid
        exit 1
      fi
      after=$(deadlocks $port)
      kill -CONT $idle
      per_1000=$(python3 -c "import sys; d, t = int(sys.argv[1]), float(sys.argv[2]); print(f'{1000 * d / t:.2f}' if t else 'n/a')" \
        $((after - before)) "$transactions")
      echo "$pair,$build,$server,$tps,$per_1000,$said" >> "$csv"
      echo "$workload pair $pair $server: $tps txn/s, $per_1000 deadlocks per 1,000"
    done
  done
done

{
  echo "Transactions per second, waterline (candidate) against MariaDB (baseline), ${durability}, ${isolation}:"
  for workload in "${workloads[@]}"; do
    echo
    echo "## ${workload}"
    echo
    scripts/pairs-summary.py "$dir/runs-$workload.csv" tps txn/s
    python3 -c 'import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for server in ("waterline", "mariadb"):
    v = [float(r["deadlocks_per_1000"]) for r in rows if r["server"] == server and r["deadlocks_per_1000"] != "n/a"]
    print(f"Deadlocks per 1,000 transactions, {server}: median {statistics.median(v):.2f}" if v else f"{server}: no transactions")' \
      "$dir/runs-$workload.csv"
  done
} > "$dir/summary.md"
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/compare-mariadb.sh ${command}\` (PAIRS ${pairs}, ${durability}, ${isolation}, ${seconds} s a run), the waterline run first in each pair"
  echo "- waterline: \`waterline ${wl_args[*]}\`, reporting flush/isolation '${wl_reported}', waterline_durability=${wl_durability}, waterline_lock_release=${wl_release}"
  echo "- MariaDB: $(mariadb_described), reporting flush/isolation '${md_reported}'"
  echo "- sysbench $(sysbench --version | awk '{print $2}'): one table of 10,000 rows per server, prepared once"
  run_info "waterline built from" "$binary"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
