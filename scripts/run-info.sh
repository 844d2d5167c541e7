# Sourced by the scripts that write results/: the lines of RUN.md that say what ran where.
# Prints "- candidate: <commit>" (or with another label), its build profile, "- ran: ..."
# and "- machine: ...".
# run_info LABEL BINARY: the commit and profile are the ones BINARY says it was built from and
# with (`waterline --version`); for a binary too old to say, BUILT_FROM=<commit> names it, or
# else HEAD is assumed.
run_info() {
  local label=${1:-built from} binary=${2:-}
  local built=""
  [ -n "$binary" ] && built=$(built_from "$binary")
  if [ -n "$built" ]; then
    echo "- ${label}: ${built} (scripts from $(git rev-parse --short HEAD))"
    if [ "$label" = "built from" ]; then
      echo "- build profile: $(build_profile "$binary")"
    else
      echo "- ${label}'s build profile: $(build_profile "$binary")"
    fi
  elif [ -n "${BUILT_FROM:-}" ]; then
    echo "- ${label}: ${BUILT_FROM} (the binary; scripts from $(git rev-parse --short HEAD))"
  else
    echo "- ${label}: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with uncommitted changes)')"
  fi
  echo "- ran: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  # The facts `waterline lab` writes (crates/tpcc/src/host.rs), from the same files.
  local model sockets cores nodes mem thp
  model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
  sockets=$(grep 'physical id' /proc/cpuinfo | sort -u | wc -l)
  cores=$(grep -E '^(physical id|core id)' /proc/cpuinfo | paste - - | sort -u | wc -l)
  [ "$cores" -gt 0 ] || cores=$(grep -c '^processor' /proc/cpuinfo)
  nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
  mem=$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
  thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)
  echo "- machine: ${model:-unknown CPU}, $((sockets > 0 ? sockets : 1)) socket(s), ${cores} core(s), $((nodes > 0 ? nodes : 1)) NUMA node(s), ${mem} GiB; Linux $(uname -r); transparent huge pages (system): ${thp}; $(nproc) CPUs"
}

# cpu_mark: the machine's CPU time so far, all CPUs, as "total stolen" in clock ticks (the
# first line of /proc/stat). steal_since MARK: the share of the CPU time since MARK that
# the hypervisor gave to other guests (the `st` of vmstat), in percent with one decimal.
# A run on a virtual machine whose host is busy measures the host as much as the build:
# lab-benchmarksql.sh writes this for every run (`waterline compare` reads the same counters).
cpu_mark() {
  awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9; exit }' /proc/stat
}
steal_since() {
  local total stolen
  read -r total stolen <<< "$1"
  cpu_mark | awk -v t="$total" -v s="$stolen" \
    '{ d = $1 - t; p = 0; if (d > 0) p = 100 * ($2 - s) / d; printf "%.1f\n", p }'
}

# built_from BINARY: the commit `BINARY --version` names (empty for a binary that cannot say).
built_from() {
  "$1" --version 2>/dev/null \
    | sed -n 's/.*(built from \(.*\); profile .*/\1/p; t; s/.*(built from \(.*\))$/\1/p'
}

# build_profile BINARY: the Cargo profile `BINARY --version` names, with its opt-level, LTO and
# codegen units, and a warning where it is not the measurement profile (Cargo.toml's
# `[profile.measure]`, which numbers are made with). A binary too old to say is "unknown".
build_profile() {
  local said
  said=$("$1" --version 2>/dev/null | sed -n 's/.*; profile \([^:]*\): \(.*\))$/\1 (\2)/p')
  case "$said" in
    "") echo "unknown (the binary does not say)" ;;
    "measure "*) echo "$said" ;;
    *) echo "$said; NOT the measurement profile (cargo build --profile measure)" ;;
  esac
}

# warn_profile BINARY...: says on standard error which of the binaries are not of the
# measurement profile, before a comparison spends its time on them.
warn_profile() {
  local binary profile
  for binary in "$@"; do
    profile=$(build_profile "$binary")
    case "$profile" in
      "measure "*) ;;
      *) echo "warning: $binary: build profile $profile" >&2 ;;
    esac
  done
}
