#!/usr/bin/env bash
# The MCP conformance suite's server scenarios against a running `campus-mcp serve`.
#
#   scripts/conformance.sh            (after `make bootstrap`; .ci/run calls it)
#
# The suite (npm @modelcontextprotocol/conformance) needs Node 22, which scripts/node.sh installs
# into .node/ (gitignored) with the suite. The server runs with a throwaway SQLite database and
# anonymous access on: the scenarios call without signing in, and see the public toolset.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

CONFORMANCE_VERSION=0.1.16
# The scenarios that apply to a server with our own tools (issue 2, "Done when").
SCENARIOS=(server-initialize ping tools-list prompts-list resources-list completion-complete dns-rebinding-protection)
# Every kind of MCP endpoint (issue 14.1): the flat one, toolbox mode, one family. One server for all.
ENDPOINTS=(/api/mcp /api/mcp/toolboxes /api/mcp/catalog)

PYTHON=$ROOT/.venv/bin/python
source "$ROOT/scripts/node.sh"
SUITE=$NODE_DIR/node_modules/.bin/conformance

if [[ ! -x $ROOT/.venv/bin/campus-mcp ]]; then
  echo "conformance: .venv is not set up; run 'make bootstrap' first" >&2
  exit 1
fi

use_node22 conformance
node_install @modelcontextprotocol/conformance "$CONFORMANCE_VERSION" conformance
echo "conformance: node $(node --version), suite $("$SUITE" --version)"

# shellcheck source=scripts/served.sh
source "$ROOT/scripts/served.sh"
PORT=$(free_port)
# Only CAMPUS_MCP_ settings chosen here: a developer's own (a token, another database) must not leak in.
# The conformance suite's server scenarios connect without OAuth, so this server opts in to the
# anonymous toolset; sign-in is the default otherwise (tests/e2e/test_e2e_student_tools.py covers it).
env -u CAMPUS_MCP_TEST_DATABASE_URL \
  CAMPUS_MCP_DATABASE_URL="sqlite+aiosqlite:///$WORK/conformance.db" \
  CAMPUS_MCP_ANONYMOUS_ACCESS=true \
  CAMPUS_MCP_SCHEDULER=false \
  CAMPUS_MCP_CONFIG="$WORK/none.toml" \
  "$ROOT/.venv/bin/campus-mcp" serve --host 127.0.0.1 --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
# Up to 300 s: it returns as soon as the server answers. Beside both test passes on a loaded
# 2-core machine (load ~12), the start (imports, migrations, the demo load) took over 120 s.
if ! "$PYTHON" scripts/wait-for.py "http://127.0.0.1:$PORT/healthz" 300 --pid "$SERVER_PID"; then
  echo "conformance: the server did not start; its log:" >&2
  tail -n 40 "$WORK/serve.log" >&2
  exit 1
fi

passed=0
failed=0
failures=()
for endpoint in "${ENDPOINTS[@]}"; do
  URL=http://127.0.0.1:$PORT$endpoint
  name=${endpoint#/}
  name=${name//\//-}  # api-mcp, api-mcp-toolboxes, api-mcp-catalog
  OUT=$ROOT/test-artifacts/conformance/$name
  mkdir -p "$OUT"
  for scenario in "${SCENARIOS[@]}"; do
    echo "--- $endpoint $scenario"
    log=$WORK/$name-$scenario.log
    if "$SUITE" server --url "$URL" --scenario "$scenario" -o "$OUT" >"$log" 2>&1; then
      passed=$((passed + 1))
      grep -E "Passed:" "$log" || true
    else
      failed=$((failed + 1))
      failures+=("$endpoint:$scenario")
      cat "$log"
    fi
  done
done

if ((failed > 0)); then
  echo "conformance: failed scenarios: ${failures[*]}; server log:"
  tail -n 40 "$WORK/serve.log"
fi
echo "conformance: $passed passed, $failed failed"
((failed == 0))
