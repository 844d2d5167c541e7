#!/usr/bin/env bash
# One `waterline tpcc` run (a sweep, a --compare, --rounds: whatever its flags say) into
# results/<date>-<host>/<NAME>/ with a RUN.md (the command, the commit the binary was built
# from, the machine), beside the report's own summary.md, CSV and JSON.
#
# Usage: scripts/tpcc-run.sh WATERLINE_BINARY NAME -- TPCC ARGS...
#   e.g. scripts/tpcc-run.sh target/measure/waterline lock-release-tpcc -- --data-dir /tmp/d \
#          --compare lock-release=after-sync,early --clients 64 --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
binary=$(realpath "$1") name=$2
warn_profile "$binary"
shift 2
[ "${1:-}" = "--" ] && shift
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
[ -e "$dir" ] && { echo "$dir exists" >&2; exit 1; }
"$binary" --transparent-huge-pages off tpcc --report-dir "$dir" "$@"
{
  echo "# ${name}"
  echo
  echo "- command: \`waterline --transparent-huge-pages off tpcc $*\`"
  run_info "built from" "$binary"
} > "$dir/RUN.md"
python3 scripts/results-index.py
echo "results: $dir"
