#!/usr/bin/env bash
# Runs one `waterline lab` experiment into results/<date>-<host>/<experiment>/ and writes
# RUN.md beside its report: the command, the commit it was built from, and the machine.
#
# Usage: scripts/lab-results.sh BINARY EXPERIMENT [-- TPCC FLAGS...]
#   BINARY is a release build of this checkout (cargo build --release [--features numa]).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
binary=$1
experiment=$2
shift 2
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${experiment}"
mkdir -p "$dir"
"$binary" lab "$experiment" --report-dir "$dir" "$@"
{
  echo "# ${experiment}"
  echo
  echo "- command: \`waterline lab ${experiment} --report-dir ${dir} $*\`"
  run_info "built from"
  echo
  echo "The report's summary.md states each configuration as the engine read it back."
} > "$dir/RUN.md"
echo "results: $dir"
