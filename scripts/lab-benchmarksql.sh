#!/usr/bin/env bash
# `waterline lab thread-pool` with the book's own tool: BenchmarkSQL (../shared/tools/
# benchmarksql, unmodified, over Connector/J) instead of waterline's driver, against the
# same three servers: one thread per connection, the thread pool (pool-of-threads), and an
# admission limit of 4 per CPU. Each server is started here in memory, loaded by
# BenchmarkSQL's own build script, run once per terminal count, and stopped. What each ran
# is read back from it (@@thread_handling, the pool's size, @@waterline_admission), and its
# CPU time and context switches from its SHOW STATUS around each run.
#
# Writes results/<date>-<host>/<NAME>/: RUN.md, runs.csv (one row per server and terminal
# count: tpmC, tpmTOTAL, the failed transactions BenchmarkSQL logged, the server's CPU
# milliseconds and voluntary/involuntary context switches per 1,000 transactions, what the
# server reported) and summary.md; then regenerates results/README.md.
#
# Usage: scripts/lab-benchmarksql.sh WATERLINE_BINARY NAME MINUTES WAREHOUSES TERMINALS...
#   BenchmarkSQL runs at most 10 terminals per warehouse (terminalWarehouseFixed).
# e.g. scripts/lab-benchmarksql.sh target/measure/waterline bmsql-thread-pool 1 10 10 50 100
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
. scripts/benchmarksql-out.sh
command="$*"
binary=$(realpath "$1") name=$2 minutes=$3 warehouses=$4
warn_profile "$binary"
shift 4
terminals=("$@")
[ ${#terminals[@]} -gt 0 ] || { echo "give one or more terminal counts" >&2; exit 2; }
for t in "${terminals[@]}"; do
  if [ "$t" -gt $((warehouses * 10)) ]; then
    echo "$t terminals need $(((t + 9) / 10)) warehouses or more" >&2
    exit 2
  fi
done
kit=$(realpath ../shared/tools/benchmarksql)
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$kit" "$work/kit"
(cd "$work/kit" && ant -q > /dev/null)
port=4419
limit=$((4 * $(nproc)))
most=$(printf '%s\n' "${terminals[@]}" | sort -n | tail -1)
common=(serve --listen 127.0.0.1:$port --database tpcc --max-connections $((most + 64)))
configs=("one-thread-per-connection" "pool-of-threads" "limit:$limit")
flags_of() {
  case "$1" in
    pool-of-threads) echo "--thread-handling pool-of-threads" ;;
    limit:*) echo "--admission $1" ;;
    *) echo "" ;;
  esac
}

ask() { mariadb -h 127.0.0.1 -P $port -u root -N -B -e "$1"; }
status() { ask "SHOW STATUS LIKE '$1'" | cut -f2; }
sed -e "s#localhost:4000/tpcc#127.0.0.1:$port/tpcc#" -e "s/^warehouses=.*/warehouses=$warehouses/" \
  -e "s/^runMins=.*/runMins=$minutes/" -e "s/^resultDirectory=/\/\/resultDirectory=/" \
  "$work/kit/run/props.mysql" > "$work/kit/run/props.base"

echo "config,terminals,tpmC,tpmTOTAL,errors,cpu_ms_per_1000_txn,voluntary_switches_per_1000_txn,involuntary_switches_per_1000_txn,steal_pct,reported" > "$dir/runs.csv"
for config in "${configs[@]}"; do
  # shellcheck disable=SC2046
  "$binary" "${common[@]}" $(flags_of "$config") > "$work/serve-${config//:/-}.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do ask "SELECT 1" > /dev/null 2>&1 && break; sleep 0.2; done
  reported=$(ask "SELECT CONCAT('thread_handling=', @@thread_handling, ' thread_pool_size=', @@thread_pool_size, ' admission=', @@waterline_admission)")
  (cd "$work/kit/run" && ./runDatabaseBuild.sh props.base > "$work/build-${config//:/-}.log" 2>&1)
  for t in "${terminals[@]}"; do
    sed -e "s/^terminals=.*/terminals=$t/" "$work/kit/run/props.base" > "$work/kit/run/props.run"
    before=($(status Waterline_cpu_user_us) $(status Waterline_cpu_system_us) \
      $(status Waterline_voluntary_context_switches) $(status Waterline_involuntary_context_switches) \
      $(status Waterline_commits))
    mark=$(cpu_mark)
    out=$(cd "$work/kit/run" && ./runBenchmark.sh props.run 2>&1)
    steal=$(steal_since "$mark")
    after=($(status Waterline_cpu_user_us) $(status Waterline_cpu_system_us) \
      $(status Waterline_voluntary_context_switches) $(status Waterline_involuntary_context_switches) \
      $(status Waterline_commits))
    measured "$out" || exit 1
    # Per 1,000 commits over the run (BenchmarkSQL's ramp-up included, as the server sees it).
    per=$(python3 -c "
b=[int(x) for x in '${before[*]}'.split()]; a=[int(x) for x in '${after[*]}'.split()]
n=max(a[4]-b[4],1)
print(f'{((a[0]-b[0])+(a[1]-b[1]))/n:.1f},{(a[2]-b[2])*1000/n:.0f},{(a[3]-b[3])*1000/n:.0f}')")
    echo "$config,$t,$tpmc,$total,$errors,$per,$steal,\"$reported\"" >> "$dir/runs.csv"
    echo "$config, $t terminals: tpmC $tpmc"
  done
  kill $pid
  wait $pid 2>/dev/null || true
  pid=""
  cp "$work/serve-${config//:/-}.log" "$dir/"
done

python3 - "$dir/runs.csv" > "$dir/summary.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
configs = list(dict.fromkeys(r["config"] for r in rows))
terms = sorted({int(r["terminals"]) for r in rows})
get = {(r["config"], int(r["terminals"])): r for r in rows}
print("# BenchmarkSQL against a thread per connection, the thread pool and an admission limit\n")
print("Book: Fig 8-33, 8-35, with the book's own TPC-C kit (one run per point: not a median).\n")
print("| terminals | " + " | ".join(f"{c} tpmC" for c in configs) + " | "
      + " | ".join(f"{c} / {configs[0]}" for c in configs[1:]) + " |")
print("|---" * (1 + 2 * len(configs) - 1) + "|")
for t in terms:
    base = float(get[(configs[0], t)]["tpmC"])
    cells = [get[(c, t)]["tpmC"] for c in configs]
    ratios = [f"{float(get[(c, t)]['tpmC']) / base:.2f}" if base else "-" for c in configs[1:]]
    print(f"| {t} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
print("\nThe server's CPU ms and context switches (voluntary + involuntary) per 1,000 commits:\n")
print("| terminals | " + " | ".join(f"{c}: CPU ms | {c}: switches" for c in configs) + " |")
print("|---" * (1 + 2 * len(configs)) + "|")
for t in terms:
    cells = []
    for c in configs:
        r = get[(c, t)]
        cells += [r["cpu_ms_per_1000_txn"], f"{r['voluntary_switches_per_1000_txn']} + {r['involuntary_switches_per_1000_txn']}"]
    print(f"| {t} | " + " | ".join(cells) + " |")
stolen = max(rows, key=lambda r: float(r["steal_pct"]))
print(f"\nCPU time stolen by the hypervisor during a run: at most {stolen['steal_pct']}% "
      f"({stolen['config']}, {stolen['terminals']} terminals)"
      + (": a busy host, so the points measure its load as much as the servers." if float(stolen["steal_pct"]) > 5 else "."))
print("\nWhat each server reported:\n")
for c in configs:
    print(f"- `{c}`: {get[(c, terms[0])]['reported']}")
EOF
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/lab-benchmarksql.sh ${command}\`: BenchmarkSQL 5.0 (MySQL fork, unmodified, Connector/J 8.0.13 with \`props.mysql\`'s URL options), ${warehouses} warehouse(s), ${minutes} min a run, terminals ${terminals[*]}, each server loaded once, in memory"
  for config in "${configs[@]}"; do
    echo "- server \`${config}\`: \`waterline ${common[*]} $(flags_of "$config")\`"
  done
  run_info "built from" "$binary"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
