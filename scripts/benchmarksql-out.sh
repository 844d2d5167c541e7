# Sourced by the scripts that run BenchmarkSQL: what one runBenchmark.sh run measured.
# measured OUT: sets tpmc and total (Measured tpmC and tpmTOTAL) and errors (the
# transactions BenchmarkSQL saw fail: a deadlock's victim, which it rolls back and goes on
# from, or anything else, as it logs them); prints OUT's end and fails without a tpmC.
measured() {
  local out=$1
  tpmc=$(echo "$out" | awk -F'= ' '/Measured tpmC/ {print $2}' | tr -d ' ')
  total=$(echo "$out" | awk -F'= ' '/Measured tpmTOTAL/ {print $2}' | tr -d ' ')
  if [ -z "$tpmc" ]; then
    echo "$out" | tail -30 >&2
    return 1
  fi
  errors=$(echo "$out" | grep -c "Unexpected SQLException" || true)
}
