#!/usr/bin/env bash
# Build the OCI image from the Containerfile and run it for real (issue 27, point 1).
#
#   scripts/image.sh build          the base (debootstrap), then the image: localhost/campus-mcp:ci
#   scripts/image.sh test PG_URL    run that image against PostgreSQL and a Redis of its own
#   scripts/image.sh all PG_URL     both (what .ci/run does)
#
# PG_URL is the server's test URL (scripts/postgres.sh start prints one): the test makes a
# database of its own on that server and drops it at the end.
#
# Why this way: no image registry is reachable here, so the base image is made locally with
# `debootstrap --variant=minbase bookworm` and imported with buildah; `podman run` is refused on
# these machines (crun cannot set rlimits in the VM), while `buildah bud/run --isolation chroot`
# work. chroot isolation shares the host's network, so the server in the image listens on a
# loopback port of the host and reaches the host's PostgreSQL and Redis on 127.0.0.1.
#
# The base's tarball is kept in $CAMPUS_IMAGE_CACHE (default .cache/image, gitignored), and the
# imported base in buildah's storage: a second build on the same machine skips debootstrap
# (1 min 46 s here). Needs root and the Debian packages buildah and debootstrap.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
IMAGE=localhost/campus-mcp:ci
BASE=localhost/bookworm-minbase:latest
CACHE=${CAMPUS_IMAGE_CACHE:-$ROOT/.cache/image}
MIRROR=http://deb.debian.org/debian
PYTHON=$ROOT/.venv/bin/python

say() { echo "image: $*"; }

make_base() {
  if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
    say "base $BASE is in buildah's storage already"
    return
  fi
  local tarball=$CACHE/bookworm-minbase.tar.gz
  if [[ ! -s $tarball ]]; then
    local rootfs begin=$SECONDS
    mkdir -p "$CACHE"
    rootfs=$(mktemp -d /tmp/campus-image-rootfs.XXXXXX)
    say "debootstrap --variant=minbase bookworm (once; kept in $tarball)"
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1; then
      tail -n 30 "$rootfs.log" >&2
      rm -rf "$rootfs" "$rootfs.log"
      return 1
    fi
    # The public bookworm-slim image has the updates and security suites too; so does this base.
    cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar --numeric-owner -C "$rootfs" -czf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$rootfs" "$rootfs.log"
    say "base made in $((SECONDS - begin)) s"
  fi
  local container
  container=$(buildah from scratch)
  buildah add --quiet "$container" "$tarball" / >/dev/null
  buildah config --cmd /bin/bash "$container"
  buildah commit --quiet "$container" "$BASE" >/dev/null
  buildah rm "$container" >/dev/null
  say "base imported as $BASE"
}

build() {
  local begin=$SECONDS
  make_base
  # --format docker: the OCI format has no HEALTHCHECK (buildah drops it with a warning).
  # The host's CA bundle as a build secret: where HTTPS passes an inspecting proxy, pip in the
  # build stage needs it (the Containerfile's comment); no layer keeps it.
  local ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
  local build_begin=$SECONDS
  buildah bud --isolation chroot --layers --quiet --format docker \
    --secret "id=ca-certificates,src=$ca" \
    --build-arg "BASE_IMAGE=$BASE" \
    -f Containerfile -t "$IMAGE" . >/dev/null
  say "built $IMAGE: image build $((SECONDS - build_begin)) s, with the base $((SECONDS - begin)) s"
  check_size
  # What the image promises in its configuration (a HEALTHCHECK needs the docker format).
  local config
  config=$(buildah inspect --type image --format \
    '{{.Docker.Config.User}} {{.Docker.Config.Volumes}} {{.Docker.Config.Cmd}} {{.Docker.Config.Healthcheck.Test}}' "$IMAGE")
  say "config: $config"
  if [[ $config != "campus map[/var/lib/campus-mcp:{}] [campus-mcp serve] [CMD "*/healthz*CAMPUS_MCP_PORT* ]]; then
    echo "image: expected user campus, the volume /var/lib/campus-mcp, campus-mcp serve, a HEALTHCHECK on /healthz at CAMPUS_MCP_PORT" >&2
    return 1
  fi
}

# The image's size (podman reads buildah's storage; `podman run` alone is refused here), printed and
# held to MAX_MB (issue 35, point 8: it was 656-737 MB; docs/deployment.md says what is in it).
MAX_MB=300
check_size() {
  local bytes
  bytes=$(podman image inspect --format '{{.Size}}' "$IMAGE")
  say "size: $((bytes / 1000000)) MB ($bytes bytes; at most $MAX_MB MB)"
  if ((bytes > MAX_MB * 1000000)); then
    echo "image: $IMAGE is $((bytes / 1000000)) MB, over $MAX_MB MB: something that never runs got in (docs/deployment.md, The image)" >&2
    return 1
  fi
}

# --- test -------------------------------------------------------------------------------------
CONTAINER=""
REDIS_PID=""
SERVER_PID=""
WORK=""
DB_ADMIN=""
DB_NAME=""

# Stop the server as a container runtime would: TERM to the image's main process (uvicorn's
# supervisor stops its workers, in-flight requests finish), then KILL whatever is left after 40 s.
# buildah run passes no signal on: a TERM to it alone leaves the server running (seen here).
stop_server() {
  [[ -n $SERVER_PID ]] || return 0
  local -a pids
  read -r -a pids <<<"$(pids_of_image | tr '\n' ' ')"
  if ((${#pids[@]} > 0)); then kill -TERM "${pids[0]}" 2>/dev/null || true; fi
  local stopped=1
  for _ in $(seq 200); do
    if ! running "$SERVER_PID"; then stopped=0 && break; fi
    sleep 0.2
  done
  read -r -a pids <<<"$(pids_of_image | tr '\n' ' ')"
  for pid in "${pids[@]}" "$SERVER_PID"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  return "$stopped"
}

running() {  # PID: alive and not a zombie (an exited child not yet waited for)
  [[ -r /proc/$1/stat ]] && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]
}

cleanup() {
  stop_server || true
  if [[ -n $CONTAINER ]]; then buildah rm "$CONTAINER" >/dev/null 2>&1 || true; fi
  if [[ -n $REDIS_PID ]]; then kill "$REDIS_PID" 2>/dev/null || true; fi
  if [[ -n $DB_NAME ]]; then psql_admin -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" >/dev/null 2>&1 || true; fi
  if [[ -n $WORK ]]; then rm -rf "$WORK"; fi
}

psql_admin() { psql "$DB_ADMIN" -qtAX "$@"; }

# The server's processes (uvicorn's supervisor and workers): buildah's descendants, seen from the host
# (chroot isolation: one pid space).
pids_of_image() {
  local pid=${1:-$SERVER_PID} child
  [[ -n $pid ]] || return 0
  for child in $(pgrep -P "$pid" || true); do
    if tr '\0' ' ' <"/proc/$child/cmdline" 2>/dev/null | grep -q '^/opt/campus-mcp/bin/python'; then echo "$child"; fi
    pids_of_image "$child"
  done
}

free_port() { "$PYTHON" -c 'from campus_mcp.oauth.testkit import free_port; print(free_port())'; }  # below the ephemeral range

test_image() {
  local pg_url=${1:?usage: scripts/image.sh test PG_URL (scripts/postgres.sh start prints one)}
  if [[ ! -x $PYTHON ]]; then
    echo "image: .venv is not set up (the client side of the test uses it); run 'make bootstrap'" >&2
    return 1
  fi
  trap cleanup EXIT
  WORK=$(mktemp -d /tmp/campus-image-test.XXXXXX)
  # postgresql+asyncpg://campus@127.0.0.1:PORT/campus_test: the same server, a database of our own.
  local server=${pg_url#*://}
  server=${server%%/*}
  DB_ADMIN="postgresql://$server/postgres"
  DB_NAME="campus_image_$$"
  psql_admin -c "CREATE DATABASE $DB_NAME"
  local redis_port port
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  port=$(free_port)

  CONTAINER=$(buildah from "$IMAGE")
  MOUNTED=$(buildah mount "$CONTAINER")
  # The key in a file that only the image's user reads, mounted as compose mounts its secret and
  # read into the environment by the command (as deploy/compose.yaml does): never on a command line.
  mkdir -m 0755 "$WORK/secrets"
  (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(48))' >"$WORK/secrets/secret_key")
  chown 10001 "$WORK/secrets/secret_key"
  # A catalog source, as a campus configures one: outside demo mode the catalog offers its tools
  # only with a source or data (an academic calendar file here, with no event: the tools answer).
  mkdir -m 0755 "$WORK/files"
  printf 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//campus-mcp//image test//EN\r\nEND:VCALENDAR\r\n' \
    >"$WORK/files/calendar.ics"
  chmod 0644 "$WORK/files/calendar.ics"
  # The settings a campus gives the image: everything else is the image's own (demo off, JSON logs).
  local -a settings=(
    --env "CAMPUS_MCP_DATABASE_URL=postgresql+asyncpg://$server/$DB_NAME"
    --env "CAMPUS_MCP_REDIS_URL=redis://127.0.0.1:$redis_port/0"
    --env "CAMPUS_MCP_PUBLIC_URL=http://127.0.0.1:$port"
    --env "CAMPUS_MCP_HOST=127.0.0.1"
    --env "CAMPUS_MCP_PORT=$port"
    --env "CAMPUS_MCP_CATALOG_CALENDAR_FILE=/srv/campus/calendar.ics"
    --volume "$WORK/secrets:/run/secrets:ro"
    --volume "$WORK/files:/srv/campus:ro"
  )
  # shellcheck disable=SC2016  # $(cat ...) is expanded in the container, by its shell
  run_in() {
    buildah run --isolation chroot "${settings[@]}" "$CONTAINER" -- \
      sh -c 'CAMPUS_MCP_SECRET_KEY=$(cat /run/secrets/secret_key) exec "$@"' sh "$@"
  }

  say "the catalog's C engine is in the image and loads (its OpenMP runtime with it)"
  run_in python3 -c 'import ctypes, campus_catalog.engine as e, campus_catalog.cli
lib = e.built_library()
assert lib is not None, "the catalog engine was not built into the image"
ctypes.CDLL(str(lib))
print("image: loaded", lib.name)'
  say "no compiler in the final stage"
  if run_in sh -c 'command -v gcc || command -v cc' 2>/dev/null; then echo "image: a compiler is in the image" >&2; return 1; fi
  local who
  who=$(run_in id)
  say "runs as $who"
  # The user and group the docs and the chart name (runAsUser and runAsGroup 10001, fsGroup).
  if [[ $who != "uid=10001(campus) gid=10001(campus) groups=10001(campus)" ]]; then
    echo "image: expected uid and gid 10001 (campus), got: $who" >&2
    return 1
  fi

  say "campus-mcp db upgrade (the migration job's command)"
  run_in campus-mcp db upgrade >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log" >&2; return 1; }
  tail -n 1 "$WORK/migrate.log"
  # A student with a password of the test's own, for the sign-in (stdin: never on a command line).
  local password
  password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(16))')
  printf '%s\n%s\n' "$password" "$password" \
    | run_in campus-mcp students add imagetester --name "Image Tester" >"$WORK/students.log" 2>&1 \
    || { cat "$WORK/students.log" >&2; return 1; }
  say "campus-mcp check --workers 2"
  run_in campus-mcp check --workers 2 || return 1

  say "campus-mcp serve --no-migrate --workers 2 on 127.0.0.1:$port"
  local started=$SECONDS
  # Not through run_in in the background: $! must be buildah's own pid, not a subshell's.
  # shellcheck disable=SC2016
  buildah run --isolation chroot "${settings[@]}" "$CONTAINER" -- \
    sh -c 'CAMPUS_MCP_SECRET_KEY=$(cat /run/secrets/secret_key) exec "$@"' sh \
    campus-mcp serve --no-migrate --workers 2 >"$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  if ! "$PYTHON" scripts/wait-for.py "http://127.0.0.1:$port/readyz" 300 --pid "$SERVER_PID"; then
    echo "image: /readyz did not answer 200; the server's log:" >&2
    tail -n 40 "$WORK/serve.log" >&2
    return 1
  fi
  say "/readyz answered after $((SECONDS - started)) s"

  # The image's HEALTHCHECK, as a runtime runs it, inside the container: it must find the server on
  # the port it was given (CAMPUS_MCP_PORT), not on 8000.
  local -a health
  mapfile -d '' -t health < <(buildah inspect --type image "$IMAGE" \
    | "$PYTHON" -c 'import json, sys; sys.stdout.write("\0".join(json.load(sys.stdin)["Docker"]["config"]["Healthcheck"]["Test"][1:]))')
  if ((${#health[@]} < 2)) || ! run_in "${health[@]}"; then
    echo "image: its HEALTHCHECK failed against the server on port $port" >&2
    return 1
  fi
  say "the image's HEALTHCHECK passes against the server on port $port"

  say "sign in as imagetester (the real login and consent pages) and call tools over MCP"
  IMAGE_TEST_PASSWORD=$password "$PYTHON" scripts/image_client.py "http://127.0.0.1:$port" imagetester \
    || { tail -n 40 "$WORK/serve.log" >&2; return 1; }

  say "memory of the image's processes (RSS, after the calls):"
  local pid
  for pid in $(pids_of_image); do
    printf 'image:   %6d MB  %s\n' "$(($(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") / 1024))" \
      "$(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-90)"
  done

  if ! stop_server; then
    echo "image: the server did not stop within 40 s of a TERM (killed)" >&2
    return 1
  fi
  say "the server stopped on TERM"
  # Every line the server wrote is JSON (the image's CAMPUS_MCP_LOG_FORMAT=json).
  "$PYTHON" - "$WORK/serve.log" <<'PY'
import json
import sys

lines = [line for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
bad = [line for line in lines if not line.lstrip().startswith("{") or not json.loads(line)]
assert lines, "the server wrote no log"
assert not bad, f"{len(bad)} of {len(lines)} log lines are not JSON, e.g. {bad[0][:200]!r}"
assert not any("Traceback" in line for line in lines), "the server's log has a traceback"
print(f"image: the server's {len(lines)} log lines are JSON, no traceback")
PY
  # A read-only root file system: nothing but the volume (and /tmp) was written in the container.
  local written
  written=$(cd "$MOUNTED/../diff" && find . -mindepth 1 \( -path ./var/lib/campus-mcp -o -path ./tmp -o -path ./run \
    -o -path ./etc/hosts -o -path ./etc/resolv.conf -o -path ./etc/hostname -o -path ./dev -o -path ./proc -o -path ./sys \) \
    -prune -o -type f -print | head -n 20)
  if [[ -n $written ]]; then
    echo "image: the container wrote outside its volume (a read-only root would refuse):" >&2
    echo "$written" >&2
    return 1
  fi
  say "nothing was written outside /var/lib/campus-mcp and /tmp (it can run with a read-only root)"
  check_size
}

case "${1:-}" in
  build) build ;;
  test) test_image "${2:-}" ;;
  all)
    build
    test_image "${2:-}"
    ;;
  *)
    echo "usage: scripts/image.sh build | test PG_URL | all PG_URL" >&2
    exit 2
    ;;
esac
