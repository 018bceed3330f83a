#!/usr/bin/env bash
# Makes sure PostgreSQL answers on 127.0.0.1:5432, that user `postgres` may connect
# there without a password (trust), and that the `bor` database exists.
#
# Starts an installed Debian cluster when it is down; installs Debian's `postgresql`
# package (apt-get) when there is none. Idempotent; prints nothing on success and one
# clear message on failure. POSTGRES_PORT selects another port.
set -euo pipefail

HOST=127.0.0.1
PORT="${POSTGRES_PORT:-5432}"
DATABASE=bor
SOCKET_DIR=/var/run/postgresql

WORK_LOG="$(mktemp)"
trap 'rm -f "$WORK_LOG"' EXIT

fail() {
    echo "ensure-postgres: $*" >&2
    if [ -s "$WORK_LOG" ]; then
        echo "---- last output ----" >&2
        tail -n 20 "$WORK_LOG" >&2
    fi
    exit 1
}

. "$(dirname "$0")/debian.sh"

# Runs a command as the `postgres` system user.
as_postgres() {
    if [ "$(id -un)" = postgres ]; then
        "$@"
    elif [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        as_root runuser -u postgres -- "$@"
    fi
}

port_open() {
    (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
}

# psql as user postgres over TCP, never prompting for a password.
admin_psql() {
    psql -h "$HOST" -p "$PORT" -U postgres -w -d postgres -v ON_ERROR_STOP=1 -Atq "$@"
}

install_packages() {
    command -v apt-get >/dev/null 2>&1 ||
        fail "PostgreSQL is missing and this is not a Debian-like system (no apt-get); install PostgreSQL and start it on $HOST:$PORT"
    apt_install "$@" 2>>"$WORK_LOG" || fail "apt-get install $* failed"
}

server_installed() {
    command -v pg_lsclusters >/dev/null 2>&1 && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

# "VERSION NAME STATUS" of the cluster configured for $PORT, if any.
cluster_on_port() {
    pg_lsclusters --no-header 2>/dev/null | awk -v port="$PORT" '$3 == port { print $1, $2, $4; exit }'
}

start_cluster() {
    local cluster version name status
    server_installed || install_packages postgresql
    cluster="$(cluster_on_port)"
    if [ -z "$cluster" ]; then
        if [ -n "$(pg_lsclusters --no-header 2>/dev/null)" ] && [ "$PORT" = 5432 ]; then
            fail "no PostgreSQL cluster is configured for port $PORT (see pg_lsclusters)"
        fi
        version="$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)"
        name=main
        [ "$PORT" = 5432 ] || name="bor$PORT"
        # pg_createcluster runs initdb as the cluster owner (initdb refuses root).
        as_root pg_createcluster --port "$PORT" "$version" "$name" >>"$WORK_LOG" 2>&1 ||
            fail "could not create PostgreSQL cluster $version/$name"
        cluster="$(cluster_on_port)"
    fi
    read -r version name status <<<"$cluster"
    # Installing the package may have started it already.
    [ "$status" = online ] && return 0
    # Containers often lack these folders; the server runs as postgres and needs them.
    as_root install -d -o postgres -g postgres -m 2775 "$SOCKET_DIR"
    as_root install -d -o postgres -g postgres -m 1775 /var/log/postgresql
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >>"$WORK_LOG" 2>&1 ||
        fail "could not start PostgreSQL cluster $version/$name"
}

wait_until_ready() {
    for _ in $(seq 1 120); do
        if port_open && pg_isready -q -h "$HOST" -p "$PORT"; then
            return 0
        fi
        sleep 0.5
    done
    fail "PostgreSQL did not become ready on $HOST:$PORT within 60 seconds"
}

# Lets user postgres in from 127.0.0.1 without a password, unless it already can.
ensure_trust_auth() {
    admin_psql -c 'SELECT 1' >/dev/null 2>>"$WORK_LOG" && return 0
    [ -n "$(cluster_on_port)" ] ||
        fail "user postgres cannot connect to $HOST:$PORT without a password, and that server is not a local cluster this script can configure"
    local hba_file
    hba_file="$(as_postgres psql -p "$PORT" -Atqc 'SHOW hba_file' 2>>"$WORK_LOG")" ||
        fail "cannot read the server's pg_hba.conf location"
    # The first matching line wins, so the rule goes on top.
    as_root sed -i "1i host all postgres $HOST/32 trust  # local development and tests (bor)" "$hba_file"
    as_postgres psql -p "$PORT" -Atqc 'SELECT pg_reload_conf()' >>"$WORK_LOG" 2>&1 ||
        fail "cannot reload the PostgreSQL configuration"
    for _ in $(seq 1 20); do
        admin_psql -c 'SELECT 1' >/dev/null 2>>"$WORK_LOG" && return 0
        sleep 0.25
    done
    fail "user postgres still cannot connect to $HOST:$PORT without a password (edited $hba_file)"
}

ensure_database() {
    local exists
    exists="$(admin_psql -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'" 2>>"$WORK_LOG")" ||
        fail "cannot list databases on $HOST:$PORT"
    [ -n "$exists" ] && return 0
    # Another process may create it at the same moment: check again on failure.
    admin_psql -c "CREATE DATABASE $DATABASE" >>"$WORK_LOG" 2>&1 ||
        [ -n "$(admin_psql -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" ] ||
        fail "cannot create database $DATABASE"
}

if ! port_open; then
    start_cluster
    wait_until_ready
fi
command -v psql >/dev/null 2>&1 || install_packages postgresql-client
ensure_trust_auth
ensure_database
