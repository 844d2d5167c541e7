# Sourced by the scripts that write results/: the lines of RUN.md that say what ran where.
# Prints "- candidate: <commit>" (or with another label), "- ran: ..." and "- machine: ...".
# BUILT_FROM=<commit> names the commit the measured binary was built from, if not HEAD.
run_info() {
  local label=${1:-built from}
  if [ -n "${BUILT_FROM:-}" ]; then
    echo "- ${label}: ${BUILT_FROM} (the binary; scripts from $(git rev-parse --short HEAD))"
  else
    echo "- ${label}: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with uncommitted changes)')"
  fi
  echo "- ran: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
}
