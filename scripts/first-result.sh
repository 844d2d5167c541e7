#!/usr/bin/env bash
# A newcomer's first result, timed: clones this repository's HEAD into a temporary folder,
# gives cargo an empty home (so every crate is downloaded and built, as on a fresh machine),
# runs the README's first command there, its build (`cargo build --release`) and then the
# command itself (`cargo run --release -- tpcc`, which finds the build done) each under GNU
# time, and writes results/<date>-<host>/<NAME>/: RUN.md (the command, the commit, the
# machine) and summary.md (the wall time of the two together, the build's, the largest
# compiler process's peak resident memory as GNU time reports it, the peak of the memory in
# use on the whole machine during the build above what was in use before, sampled every
# second, which counts the compiler processes cargo runs side by side, and the benchmark
# process's own peak resident memory).
#
# Usage: scripts/first-result.sh [NAME] [-- TPCC ARGS]   NAME defaults to first-result; TPCC
#   ARGS replace nothing: they are added after the README's `cargo run --release -- tpcc`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
name=${1:-first-result}
shift || true
[ "${1:-}" = "--" ] && shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
work=$(mktemp -d)
trap 'kill $sampler 2>/dev/null; rm -rf "$work"' EXIT
git clone -q . "$work/waterline"
commit=$(git -C "$work/waterline" rev-parse HEAD)
used() { awk '/MemTotal/ {t = $2} /MemAvailable/ {a = $2} END {print t - a}' /proc/meminfo; }
before=$(used)
(while true; do used; sleep 1; done) > "$work/memory" &
sampler=$!
started=$(date +%s.%N)
cargo_in_clone() {
  (cd "$work/waterline" && CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/target" "$@")
}
cargo_in_clone /usr/bin/time -v -o "$work/build-time" cargo build --release --locked \
  > "$work/build-out" 2> "$work/build-err"
built=$(date +%s.%N)
kill $sampler
cargo_in_clone /usr/bin/time -v -o "$work/run-time" cargo run --release --locked -- tpcc "$@" \
  > "$work/out" 2> "$work/err"
ended=$(date +%s.%N)
gib() { awk -F': ' '/Maximum resident/ {printf "%.2f", $2 / 1048576}' "$1"; }
span() { awk -v s="$1" -v e="$2" 'BEGIN {printf "%d min %02d s", (e - s) / 60, (e - s) % 60}'; }
largest=$(gib "$work/build-time")
run_peak=$(gib "$work/run-time")
peak=$(sort -n "$work/memory" | tail -1)
machine_peak=$(awk -v p="$peak" -v b="$before" 'BEGIN {printf "%.2f", (p - b) / 1048576}')
wall=$(span "$started" "$ended")
build=$(span "$started" "$built")
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/first-result.sh ${name}${*:+ -- $*}\`: in a fresh clone with an empty CARGO_HOME, \`cargo run --release --locked -- tpcc${*:+ $*}\`"
  echo "- commit: ${commit}"
  run_info "built from" "$work/target/release/waterline"
} > "$dir/RUN.md"
{
  echo "First result of the README's first command from a fresh clone and an empty cargo cache"
  echo
  echo "| what | value |"
  echo "|---|---|"
  echo "| wall time, clone to last line (downloads, build, load, warm-up, run, checks) | ${wall} |"
  echo "| of which the build, downloads included | ${build} |"
  echo "| the build's largest process, peak resident memory (GNU time) | ${largest} GiB |"
  echo "| the build's peak memory in use on the machine above before it (sampled each second) | ${machine_peak} GiB |"
  echo "| the benchmark process's peak resident memory (GNU time) | ${run_peak} GiB |"
  echo
  echo "The run's own report:"
  echo
  echo '```'
  grep -v '^report: ' "$work/out" | head -40
  echo '```'
} > "$dir/summary.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
echo "results: $dir"
