# Sourced by the scripts that compare waterline with MariaDB: starts Debian's mariadbd in a
# temporary directory, without the binary log, as `waterline serve` has none; asks either
# server a question and waits for them to answer.
# start_mariadb DIR PORT FLUSH ISOLATION: FLUSH is innodb_flush_log_at_trx_commit (1: fsync
# per commit, 0: none), ISOLATION is REPEATABLE-READ or READ-COMMITTED. Sets md_pid; the
# server's error log is DIR/mariadb.log. The caller waits for it to answer and stops it.
start_mariadb() {
  local dir=$1 port=$2 flush=$3 isolation=$4
  mkdir -p "$dir/data" "$dir/tmp"
  mariadb-install-db --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" \
    --auth-root-authentication-method=normal --skip-test-db --user="$(id -un)" > /dev/null
  /usr/sbin/mariadbd --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" \
    --socket="$dir/sock" --port="$port" --bind-address=127.0.0.1 --user="$(id -un)" \
    --innodb-buffer-pool-size=2G --innodb-log-file-size=512M --skip-log-bin \
    --innodb-flush-log-at-trx-commit="$flush" --transaction-isolation="$isolation" \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_bin --max-connections=2000 \
    > "$dir/mariadb.log" 2>&1 &
  md_pid=$!
}

# A phrase for RUN.md: the MariaDB version and how it was started.
mariadb_described() {
  echo "MariaDB $(/usr/sbin/mariadbd --version | awk '{print $3}'), binlog off, 2 GiB buffer pool"
}

# ask PORT SQL: runs SQL on the server at 127.0.0.1:PORT as root, tab-separated, no headers.
ask() { mariadb -h 127.0.0.1 -P "$1" -u root -N -B -e "$2"; }

# wait_for PORT...: until each server answers (up to 20 s each).
wait_for() {
  local port
  for port in "$@"; do
    for _ in $(seq 100); do ask "$port" "SELECT 1" > /dev/null 2>&1 && break; sleep 0.2; done
  done
}
