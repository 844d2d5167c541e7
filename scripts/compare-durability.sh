#!/usr/bin/env bash
# What durability costs `waterline serve`: the same binary and flags twice, once with
# --data-dir (fdatasync per group, the candidate) and once in memory (the baseline), under
# the workloads of scripts/server-pairs.sh in alternating pairs. Each server's durability,
# isolation and lock release are read back from it (in memory there are no locks to release
# early: n/a); the script stops before measuring unless the first reports
# fdatasync-per-group, the second in-memory, and both the same isolation. Writes
# results/<date>-<host>/<NAME>/: RUN.md, runs-<workload>.csv and summary.md (per workload:
# the pairs, each ratio durable / in memory, the median).
#
# Usage: scripts/compare-durability.sh WATERLINE_BINARY NAME PAIRS ISOLATION SECONDS \
#          [-- WATERLINE SERVE FLAGS...]
#   ISOLATION   read-committed or repeatable-read, for both servers.
#   SECONDS     measured per run (after a 3 s warm-up for tpcc, none for sysbench).
#   WATERLINE SERVE FLAGS  for both servers, e.g. --lock-release early
# e.g. scripts/compare-durability.sh target/measure/waterline durable-vs-memory-early 3 \
#        read-committed 10 -- --lock-release early
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
. scripts/server-pairs.sh
command="$*"
binary=$(realpath "$1") name=$2 pairs=$3 isolation=$4 seconds=$5
warn_profile "$binary"
shift 5
[ "${1:-}" = "--" ] && shift
serve_flags=("$@")
case "$isolation" in
  read-committed | repeatable-read) ;;
  *) echo "ISOLATION is read-committed or repeatable-read" >&2; exit 2 ;;
esac
begin_comparison "$name"

serve() {
  echo --transparent-huge-pages off serve --listen "127.0.0.1:$1" --database tpcc \
    --database sbtest --isolation "$isolation" --max-connections 2000
}
# shellcheck disable=SC2207
new_args=($(serve $new_port) "${serve_flags[@]}" --data-dir "$work/data" --flush every-commit)
# shellcheck disable=SC2207
base_args=($(serve $base_port) "${serve_flags[@]}")
"$binary" "${new_args[@]}" > "$work/durable.log" 2>&1 &
new_pid=$!
"$binary" "${base_args[@]}" > "$work/memory.log" 2>&1 &
base_pid=$!
wait_for $new_port $base_port

# What each server says it does, not what it was told.
reported() {
  ask "$1" "SELECT @@waterline_durability, @@tx_isolation, @@waterline_lock_release" | tr '\t' ' '
}
new_said=$(reported $new_port) base_said=$(reported $base_port)
read -r new_durability new_isolation _ <<< "$new_said"
read -r base_durability base_isolation _ <<< "$base_said"
if [ "$new_durability" != fdatasync-per-group ] || [ "$base_durability" != in-memory ] ||
  [ "$new_isolation" != "$base_isolation" ]; then
  echo "refused: the durable server reports '$new_said', the in-memory one '$base_said'" >&2
  exit 1
fi

sysbench_prepare $new_port $base_port
new_name=waterline-durable base_name=waterline-memory
run_pairs "$dir" "$pairs"
summarize "$dir" "Transactions per second, waterline durable (candidate) against waterline in memory (baseline), ${isolation}, ${serve_flags[*]:-no further flags}:"
{
  echo "# ${name}"
  echo
  echo "- command: \`scripts/compare-durability.sh ${command}\` (PAIRS ${pairs}, ${isolation}, ${seconds} s a run), the durable run first in each pair"
  echo "- durable: \`waterline ${new_args[*]}\`, reporting durability, isolation, lock release '${new_said}'"
  echo "- in memory: \`waterline ${base_args[*]}\`, reporting '${base_said}'"
  tools_described
} > "$dir/RUN.md"
end_comparison
