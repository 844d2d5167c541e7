#!/usr/bin/env bash
# Compares two builds of waterline on one `waterline tpcc` workload in alternating pairs
# (baseline, then candidate, PAIRS times, in one sitting) and writes
# results/<date>-<host>/<NAME>/: RUN.md (the command, both builds, the machine), pairs.csv
# (every run's txn/s, tpmC, the share of CPU time the hypervisor stole over the measured time
# as `waterline tpcc` reports it, or over the whole invocation, load included, from a binary
# too old to report it, and the configuration the engine reported it ran) and summary.md
# (the median of the pair ratios candidate/baseline).
#
# Usage: scripts/compare-pairs.sh BASE_BINARY BASE_COMMIT NEW_BINARY NAME PAIRS -- TPCC ARGS...
#   NEW_BINARY is a measurement-profile build of this checkout (`cargo build --profile
#   measure --locked`, target/measure/waterline); BASE_COMMIT names what BASE_BINARY was
#   built from. TPCC ARGS go to `waterline tpcc` as they are (e.g. --backend sql
#   --clients 8 --duration 10 --warmup 2).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
base=$1 base_commit=$2 new=$3 name=$4 pairs=$5
warn_profile "$base" "$new"
shift 5
[ "${1:-}" = "--" ] && shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "pair,build,txn_per_sec,tpmc,steal_pct,effective" > "$dir/pairs.csv"
for pair in $(seq 1 "$pairs"); do
  for build in base new; do
    binary=$base
    [ "$build" = new ] && binary=$new
    out="$scratch/$build-$pair"
    mark=$(cpu_mark)
    "$binary" --transparent-huge-pages off tpcc --report-dir "$out" "$@" > "$out.log" 2>&1
    python3 - "$out/results.json" "$pair" "$build" "$(steal_since "$mark")" >> "$dir/pairs.csv" <<'EOF'
import json, sys
point = json.load(open(sys.argv[1]))["points"][0]
effective = point["effective"].replace('"', "'")
steal = point.get("cpu_steal_share")
steal = sys.argv[4] if steal is None else f"{100 * steal:.1f}"
print(f'{sys.argv[2]},{sys.argv[3]},{point["txn_per_sec"]:.0f},{point["tpmc"]:.0f},{steal},"{effective}"')
EOF
  done
done
scripts/pairs-summary.py "$dir/pairs.csv" txn_per_sec txn/s > "$dir/summary.md"
{
  echo "# ${name}"
  echo
  echo "- command: \`waterline --transparent-huge-pages off tpcc $*\`, ${pairs} alternating pairs"
  echo "- baseline: ${base_commit}"
  echo "- baseline's build profile: $(build_profile "$base")"
  run_info candidate "$new"
} > "$dir/RUN.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
