#!/usr/bin/env bash
# Compares two builds of one criterion bench binary in alternating pairs (baseline, then
# candidate, PAIRS times, in one sitting) and writes results/<date>-<host>/<NAME>/: RUN.md,
# pairs.csv (every run's criterion estimate per benchmark, in µs) and summary.md (per
# benchmark the median of the pair ratios candidate/baseline).
#
# Usage: scripts/compare-bench.sh BASE_BINARY BASE_COMMIT NEW_BINARY NAME PAIRS -- BENCH ARGS
#   The binaries are criterion bench executables (`cargo bench --bench B --no-run` prints
#   where it put one; copy it, as the next build overwrites it); NEW_BINARY is built from
#   this checkout. BENCH ARGS go to both as they are, e.g. `--bench engine_commit
#   --warm-up-time 2 --measurement-time 5`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
base=$1 base_commit=$2 new=$3 name=$4 pairs=$5
shift 5
[ "${1:-}" = "--" ] && shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/compare-bench.sh ${base##*/} ${base_commit} ${new##*/} ${name} ${pairs} -- $*\`"
  echo "- baseline: ${base_commit}"
  run_info candidate
} > "$dir/RUN.md"
echo "pair,build,benchmark,estimate_us,steal_pct" > "$dir/pairs.csv"
for pair in $(seq 1 "$pairs"); do
  for build in base new; do
    binary=$base
    [ "$build" = new ] && binary=$new
    mark=$(cpu_mark)
    # criterion prints the benchmark's id, then "time: [low estimate high]" with units.
    report=$("$binary" "$@" --noplot 2>&1)
    steal=$(steal_since "$mark")
    echo "$report" | awk -v pair="$pair" -v build="$build" -v steal="$steal" '
      /^[A-Za-z0-9_-]+\/[^ ]+$/ { id = $1 }
      /^[A-Za-z0-9_-]+\/[^ ]+ +time:/ { id = $1 }
      /time:/ && id != "" {
        sub(/.*time: *\[/, ""); split($0, f, " ")
        v = f[3]; u = f[4]
        if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "s") v *= 1e6
        printf "%s,%s,%s,%.3f,%s\n", pair, build, id, v, steal
        id = ""
      }' >> "$dir/pairs.csv"
    echo "pair ${pair} ${build}: $(grep -c "^${pair},${build}," "$dir/pairs.csv") benchmarks, ${steal}% stolen" >&2
  done
done
python3 - "$dir" <<'PY'
import csv, statistics, sys
d = sys.argv[1]
runs = {}
steal = []
for r in csv.DictReader(open(f"{d}/pairs.csv")):
    runs.setdefault(r["benchmark"], {}).setdefault(r["pair"], {})[r["build"]] = float(r["estimate_us"])
    steal.append(float(r["steal_pct"]))
out = [f"# Criterion estimates, candidate against baseline, in alternating pairs", "",
       "| benchmark | baseline µs (per pair) | candidate µs (per pair) | ratios | median ratio |",
       "|---|---|---|---|---|"]
for bench, pairs in runs.items():
    keys = sorted(p for p in pairs if {"base", "new"} <= pairs[p].keys())
    ratios = [pairs[p]["new"] / pairs[p]["base"] for p in keys]
    fmt = lambda b: ", ".join(f"{pairs[p][b]:.2f}" for p in keys)
    med = f"{statistics.median(ratios):.3f}" if ratios else "n/a"
    out.append(f"| {bench} | {fmt('base')} | {fmt('new')} | {', '.join(f'{r:.3f}' for r in ratios)} | {med} |")
out += ["", "A ratio below 1 is a faster candidate (criterion's estimate is time per element).",
        f"CPU time stolen by the hypervisor during the runs: median {statistics.median(steal):.1f}%, at most {max(steal):.1f}%."]
open(f"{d}/summary.md", "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
python3 scripts/results-index.py
