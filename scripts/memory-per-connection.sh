#!/usr/bin/env bash
# Memory per idle connection of an optimized build: runs tests/connections.rs (2,000
# connections of the Rust `mysql` crate, logged in and idle, the server's resident memory
# read from /proc before and after) against BINARY, whose bound is 256 KiB a connection,
# and writes results/<date>-<host>/<NAME>/ (RUN.md, summary.md). The README's test command
# runs the same test against the debug build, whose unoptimized frames get twice the bound;
# an optimized build takes too long for CI, so this bound is checked here, with every
# measurement-profile build that is measured.
#
# Usage: scripts/memory-per-connection.sh BINARY [NAME]   (BINARY from
#          `cargo build --profile measure --locked --bin waterline`; NAME defaults to
#          memory-per-connection)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/run-info.sh
binary=$(realpath "$1") name=${2:-memory-per-connection}
warn_profile "$binary"
dir="results/$(date -u +%Y-%m-%d)-$(hostname)/${name}"
mkdir -p "$dir"
{
  echo "# Memory per idle connection: run"
  echo
  echo "- command: \`scripts/memory-per-connection.sh $*\`"
  run_info "built from" "$binary"
} > "$dir/RUN.md"
status=passed
output=$(WATERLINE_BIN=$binary cargo test --locked --test connections -- --nocapture 2>&1) \
  || status=failed
line=$(echo "$output" | grep "idle connections," || echo "(the test printed no measurement)")
{
  echo "# Memory per idle connection of an optimized build: ${status}"
  echo
  echo "\`tests/connections.rs\` against \`${binary##*/}\` (bound: 256 KiB a connection):"
  echo
  echo "    ${line#"$binary": }"
  if [ "$status" = failed ]; then
    echo
    echo '```text'
    echo "$output" | tail -20
    echo '```'
  fi
} > "$dir/summary.md"
cat "$dir/summary.md"
python3 scripts/results-index.py
[ "$status" = passed ]
