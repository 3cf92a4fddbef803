# A throwaway folder for one served campus, and the server in it stopped at exit.
#
#   source scripts/served.sh   (PYTHON set by the caller; sets WORK, SERVER_PID and an EXIT trap)
#
# Sourced by scripts/conformance.sh and scripts/inspector.sh: each starts `campus-mcp serve` in the
# background, puts its pid in SERVER_PID, and leaves the stopping and the clean-up to this.

WORK=$(mktemp -d)
SERVER_PID=""

stop_served_campus() {  # Ctrl-C first (the server's own shutdown), then KILL after 10 s
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -INT "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap stop_served_campus EXIT

free_port() {  # a loopback port nobody listens on now, below the ephemeral range (see the kit's free_port)
  "$PYTHON" -c 'from campus_mcp.testing.oauth import free_port; print(free_port())'
}
