# Sourced by the scripts that measure two running servers in alternating pairs
# (compare-mariadb.sh, compare-durability.sh): the workloads, the pairs (the idle server
# stopped with SIGSTOP meanwhile, so its background work cannot take the other's CPU), the
# CSV of every run and the summary.
#
# The caller calls begin_comparison, sets binary (the waterline binary, whose `tpcc` drives
# the TPC-C workload), isolation (read-committed or repeatable-read), seconds (measured per
# run), and for each side, new (the candidate) and base (the baseline): <side>_pid,
# <side>_name (a word for the CSV and the summary) and <side>_said (what that server
# reported of its configuration, one line).

. scripts/mariadb-server.sh

# begin_comparison NAME: sets dir (results/<date>-<host>/NAME, its earlier runs' CSVs
# removed), work (a temporary directory, removed at exit with both servers stopped) and the
# ports new_port and base_port; the caller then starts the servers as new_pid and base_pid.
begin_comparison() {
  dir="results/$(date -u +%Y-%m-%d)-$(hostname)/$1"
  mkdir -p "$dir"
  rm -f "$dir"/runs-*.csv
  work=$(mktemp -d)
  new_pid='' base_pid=''
  trap 'kill -CONT $new_pid $base_pid 2>/dev/null; kill $new_pid $base_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
  new_port=4427 base_port=4428
}

# tools_described: RUN.md's lines on sysbench and the waterline build.
tools_described() {
  echo "- sysbench $(sysbench --version | awk '{print $2}'): one table of 10,000 rows per server, prepared once"
  run_info "waterline built from" "$binary"
}

# end_comparison: shows the summary and lists the run in results/README.md.
end_comparison() {
  cat "$dir/summary.md"
  python3 scripts/results-index.py
  echo "results: $dir"
}

# The workloads every comparison runs: `waterline tpcc` over mysql:// at 64 clients (tokio
# tasks; loaded afresh each run) and sysbench at 16 and 64 threads (one table of 10,000 rows,
# prepared once per server by sysbench_prepare).
workloads=(tpcc-64 oltp_read_write-16 oltp_read_write-64 oltp_write_only-16 oltp_point_select-16)

sysbench_common() {
  echo --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size=10000
}

# sysbench_prepare PORT...: the sysbench table on each server (database sbtest must exist).
sysbench_prepare() {
  local port
  for port in "$@"; do
    # shellcheck disable=SC2046
    sysbench oltp_read_write $(sysbench_common "$port") prepare > /dev/null
  done
}

deadlocks() { ask "$1" "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'" | awk '{print $2}'; }
# checkpoints PORT: the checkpoints a waterline server has taken (empty for MariaDB and for a
# waterline too old to count them): one inside a run wrote the whole database meanwhile.
checkpoints() { ask "$1" "SHOW GLOBAL STATUS LIKE 'Waterline_checkpoints'" | awk '{print $2}'; }

# run_one WORKLOAD PORT: prints "tps transactions p95_ms max_ms" for one measured run. For
# tpcc the latency is NewOrder's 95th percentile and the maximum is the longest of any type;
# for sysbench both are over all its transactions, as sysbench reports them. For tpcc a fifth
# field: the percentage of CPU time stolen over the measured time as `waterline tpcc`
# reports it (its load and warm-up left out), or - from a binary too old to say.
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
t = p["transactions"]
steal = p.get("cpu_steal_share")
print(round(p["txn_per_sec"], 1), sum(x["committed"] for x in t.values()), t["new_order"]["p95_ms"],
      max(x["max_ms"] for x in t.values()), "-" if steal is None else f"{100 * steal:.1f}")' \
        "$out/results.json"
      ;;
    *)
      local test=${workload%-*} threads=${workload##*-}
      # shellcheck disable=SC2046
      sysbench "$test" $(sysbench_common "$port") --threads="$threads" --time="$seconds" \
        --report-interval=0 run | awk '
          /transactions:/ { gsub(/[(]/, "", $3); tps = $3; n = $2 }
          /95th percentile:/ { p95 = $3 }
          /max:/ { max = $2 }
          END { print tps, n, p95, max }'
      ;;
  esac
}

# run_pairs DIR PAIRS: every workload, PAIRS alternating pairs (the candidate first), into
# DIR/runs-<workload>.csv.
run_pairs() {
  local dir=$1 pairs=$2 workload pair side csv port name pid idle said before after
  local tps transactions p95 max measured per_1000 mark steal checkpointed
  for workload in "${workloads[@]}"; do
    csv="$dir/runs-$workload.csv"
    echo "pair,build,server,tps,deadlocks_per_1000,p95_ms,max_ms,steal_pct,checkpoints,reported" > "$csv"
    for pair in $(seq 1 "$pairs"); do
      for side in new base; do
        if [ "$side" = new ]; then
          port=$new_port name=$new_name pid=$new_pid idle=$base_pid said=$new_said
        else
          port=$base_port name=$base_name pid=$base_pid idle=$new_pid said=$base_said
        fi
        kill -STOP "$idle"
        kill -CONT "$pid"
        before=$(deadlocks "$port")
        checkpointed=$(checkpoints "$port")
        mark=$(cpu_mark)
        tps= measured=
        read -r tps transactions p95 max measured < <(run_one "$workload" "$port") || true
        if [ -z "$tps" ]; then
          echo "$workload on $name measured nothing; see $work (kept)" >&2
          trap - EXIT
          kill -CONT "$new_pid" "$base_pid"
          kill "$new_pid" "$base_pid"
          exit 1
        fi
        # The whole run's stolen time, unless the run measured its own (tpcc: without its load).
        steal=$(steal_since "$mark")
        [ -n "$measured" ] && [ "$measured" != - ] && steal=$measured
        after=$(deadlocks "$port")
        if [ -n "$checkpointed" ]; then
          checkpointed=$(($(checkpoints "$port") - checkpointed))
        else
          checkpointed=n/a
        fi
        kill -CONT "$idle"
        per_1000=$(python3 -c "import sys; d, t = int(sys.argv[1]), float(sys.argv[2]); print(f'{1000 * d / t:.2f}' if t else 'n/a')" \
          $((after - before)) "$transactions")
        echo "$pair,$side,$name,$tps,$per_1000,$p95,$max,$steal,$checkpointed,$said" >> "$csv"
        echo "$workload pair $pair $name: $tps txn/s, $per_1000 deadlocks per 1,000, p95 $p95 ms, max $max ms, $steal% stolen"
      done
    done
  done
}

# summarize DIR TITLE: DIR/summary.md from the runs' CSVs, headed by TITLE.
summarize() {
  local dir=$1 title=$2 workload
  {
    echo "$title"
    for workload in "${workloads[@]}"; do
      echo
      echo "## ${workload}"
      echo
      scripts/pairs-summary.py "$dir/runs-$workload.csv" tps txn/s
      python3 - "$dir/runs-$workload.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print()
for build in ("new", "base"):
    mine = [r for r in rows if r["build"] == build]
    name = mine[0]["server"]
    def median(column, unit=""):
        v = [float(r[column]) for r in mine if r[column] not in ("n/a", "")]
        return f"{statistics.median(v):.2f}{unit}" if v else "n/a"
    latency = "NewOrder's p95 latency" if "tpcc" in sys.argv[1] else "p95 latency"
    counted = [int(r["checkpoints"]) for r in mine if r.get("checkpoints", "n/a") != "n/a"]
    checkpoints = f", checkpoints during the runs {sum(counted)}" if counted else ""
    print(f"- {name}: median deadlocks per 1,000 transactions {median('deadlocks_per_1000')}, "
          f"{latency} {median('p95_ms', ' ms')}, maximum {median('max_ms', ' ms')}{checkpoints}")
EOF
    done
  } > "$dir/summary.md"
}
