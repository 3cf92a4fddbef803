#!/usr/bin/env bash
# Start a private, throwaway PostgreSQL server for the test suite, on loopback only.
#
#   scripts/postgres.sh start DIR [PORT]   initdb DIR (if new), start the server, print the test URL
#   scripts/postgres.sh stop DIR           stop it
#
# It uses the Debian server binaries (apt-get install postgresql) but not the Debian cluster, so
# it never touches a system database and needs no password: the data folder, the socket and the
# log all live in DIR, and only 127.0.0.1 is listened on, with "trust" for the local test user.
# As root, the server runs as the "postgres" user (PostgreSQL refuses to run as root).
set -euo pipefail

action=${1:?usage: scripts/postgres.sh start|stop DIR [PORT]}
dir=${2:?usage: scripts/postgres.sh start|stop DIR [PORT]}
port=${3:-55432}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
  echo "PostgreSQL server binaries not found; install them: apt-get install -y postgresql" >&2
  exit 1
fi

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    # runuser keeps the environment small; the server must not run as root.
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$action" in
  start)
    mkdir -p "$dir"
    if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
      as_owner "$bindir/initdb" --pgdata="$dir/data" --username=campus --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # fsync off: a test database that a crash may lose; it makes CREATE DATABASE per test cheap.
    as_owner "$bindir/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null || { tail -n 30 "$dir/server.log" >&2; exit 1; }
    "$bindir/psql" -h 127.0.0.1 -p "$port" -U campus -d postgres -qtA \
      -c "SELECT 1 FROM pg_database WHERE datname = 'campus_test'" | grep -q 1 \
      || "$bindir/createdb" -h 127.0.0.1 -p "$port" -U campus campus_test
    echo "postgresql+asyncpg://campus@127.0.0.1:$port/campus_test"
    ;;
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_owner "$bindir/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null
    fi
    ;;
  *)
    echo "unknown action $action; use start or stop" >&2
    exit 2
    ;;
esac
