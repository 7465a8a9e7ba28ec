#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for the tests (README, "Running on several
# hosts"). `start DIR` installs PostgreSQL from Debian's packages when missing, creates a
# cluster in DIR as an unprivileged user, starts it and prints the line to export;
# `stop DIR` stops it and removes DIR; `pause DIR` and `resume DIR` stop and start it again
# (a database restart, for the tests). The tests read AGGREGATE_TEST_POSTGRES.
# AGGREGATE_TEST_POSTGRES_CONF: lines added to the cluster's postgresql.conf (a benchmark's
# shared_buffers); the tests keep PostgreSQL's defaults.
set -euo pipefail
command=${1:?usage: test-postgres.sh start|stop|pause|resume DIR}
dir=${2:?usage: test-postgres.sh start|stop|pause|resume DIR}

# The first port from 15432 (or AGGREGATE_TEST_POSTGRES_PORT) that nothing listens on:
# below Linux's ephemeral range (32768-60999), where an outgoing connection's local port
# could take it. Remembered in DIR/port for `resume`.
choose_port() {
    local port=${1:-${AGGREGATE_TEST_POSTGRES_PORT:-15432}}
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    echo "$port"
}

bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

# The server must not keep descriptors the caller passed down (a test's pipe or the socket
# it watches for this script's exit): close every one above 2 before starting it.
close_inherited() {
    local fd
    for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $command in
start)
    close_inherited
    if [ -z "$(bin)" ]; then
        echo "test-postgres: installing PostgreSQL from Debian's packages" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    pgbin=$(bin)
    [ -n "$pgbin" ] || { echo "test-postgres: no PostgreSQL server binaries" >&2; exit 1; }
    # initdb refuses root: the cluster belongs to the packages' unprivileged `postgres` user.
    if [ "$(id -u)" = 0 ] && ! getent passwd postgres >/dev/null; then
        useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$pgbin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    if [ -n "${AGGREGATE_TEST_POSTGRES_CONF:-}" ]; then
        printf '%s\n' "$AGGREGATE_TEST_POSTGRES_CONF" >>"$dir/data/postgresql.conf"
    fi
    # A port can still be taken between the check and the bind: then try the next one.
    port=$(choose_port)
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        echo "$port" >"$dir/port"
        if as_owner "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >&2; then
            break
        fi
        if [ "$attempt" = 10 ] || ! grep -q "could not bind" "$dir/server.log"; then
            cat "$dir/server.log" >&2
            exit 1
        fi
        port=$(choose_port $((port + 1)))
    done
    # The tests connect with a password (and check that it is never printed).
    as_owner "$pgbin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE aggregate LOGIN CREATEDB PASSWORD 'test-secret-pw'" -c "CREATE DATABASE aggregate OWNER aggregate" >&2
    echo "export AGGREGATE_TEST_POSTGRES=postgres://aggregate:test-secret-pw@127.0.0.1:$port/aggregate"
    echo "export AGGREGATE_TEST_POSTGRES_DATA=$dir/data"
    ;;
pause)
    as_owner "$(bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >&2
    ;;
resume)
    close_inherited
    port=$(cat "$dir/port")
    as_owner "$(bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >&2
    ;;
stop)
    pgbin=$(bin)
    if [ -n "$pgbin" ] && [ -d "$dir/data" ]; then
        as_owner "$pgbin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: test-postgres.sh start|stop|pause|resume DIR" >&2
    exit 2
    ;;
esac
