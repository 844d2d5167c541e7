# Sourced by the scripts that write results/: the lines of RUN.md that say what ran where.
# Prints "- candidate: <commit>" (or with another label), "- ran: ..." and "- machine: ...".
run_info() {
  local label=${1:-built from}
  echo "- ${label}: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with uncommitted changes)')"
  echo "- ran: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
}
