#!/usr/bin/env bash
# A second real MCP client: the MCP Inspector's command-line mode (npm @modelcontextprotocol/inspector,
# pinned) lists the tools and calls one, in both protocol eras, over HTTP and over stdio.
#
#   scripts/inspector.sh            (after `make bootstrap`; .ci/run calls it after conformance)
#
# One demo campus (throwaway SQLite, sign-in required, a throwaway key) serves both doors:
# - HTTP: `campus-mcp serve`, with student1's access token from `campus-mcp token` sent as the
#   Authorization header;
# - stdio: the inspector spawns `campus-mcp stdio` with student1's personal access token in
#   CAMPUS_MCP_TOKEN, as a desktop client does.
# The tokens go to the inspector in config files only this user can read (never on a command line,
# never printed), and the inspector keeps its secrets in memory (MCP_INSPECTOR_SECRET_STORE).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

INSPECTOR_VERSION=2.12.0
PYTHON=$ROOT/.venv/bin/python
CAMPUS_MCP=$ROOT/.venv/bin/campus-mcp
source "$ROOT/scripts/node.sh"
INSPECTOR=$NODE_DIR/node_modules/.bin/mcp-inspector
# The student's scopes: read their schedule, not their friends; the public families come with it.
SCOPES="schedule:read"
TERM_UID=202710  # the demo campus's Fall term

if [[ ! -x $CAMPUS_MCP ]]; then
  echo "inspector: .venv is not set up; run 'make bootstrap' first" >&2
  exit 1
fi

use_node22 inspector
node_install @modelcontextprotocol/inspector "$INSPECTOR_VERSION" inspector
echo "inspector: node $(node --version), inspector $("$INSPECTOR" --cli --version)"

umask 077  # the config files below hold tokens
# shellcheck source=scripts/served.sh
source "$ROOT/scripts/served.sh"
PORT=$(free_port)
# Only CAMPUS_MCP_ settings chosen here (a developer's own must not leak in); the same for the
# server, the token commands and the stdio process, so they share the database, key and MCP URL.
CAMPUS_ENV=(
  CAMPUS_MCP_DATABASE_URL="sqlite+aiosqlite:///$WORK/campus.db"
  CAMPUS_MCP_SECRET_KEY="$("$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(32))')"
  CAMPUS_MCP_VAR_DIR="$WORK/var"
  CAMPUS_MCP_CONFIG="$WORK/none.toml"
  CAMPUS_MCP_PORT="$PORT"
  CAMPUS_MCP_ANONYMOUS_ACCESS=false
  CAMPUS_MCP_SCHEDULER=false
)
read -r -a UNSET <<<"$(env | sed -n 's/^\(CAMPUS_MCP_[A-Z_]*\)=.*/-u \1/p' | tr '\n' ' ')"
campus() { env "${UNSET[@]}" "${CAMPUS_ENV[@]}" "$@"; }

# Not through campus(): $! must be the server itself (env execs it), which the cleanup stops.
env "${UNSET[@]}" "${CAMPUS_ENV[@]}" "$CAMPUS_MCP" serve --host 127.0.0.1 --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
# Up to 300 s, as scripts/conformance.sh: it returns as soon as the server answers.
if ! "$PYTHON" scripts/wait-for.py "http://127.0.0.1:$PORT/healthz" 300 --pid "$SERVER_PID"; then
  echo "inspector: the server did not start; its log:" >&2
  tail -n 40 "$WORK/serve.log" >&2
  exit 1
fi

# student1's OAuth access token (as a signed-in client holds) and personal access token (as the
# dashboard's Access tokens page makes), each straight into the inspector's config file.
ACCESS_TOKEN=$(campus "$CAMPUS_MCP" token --student student1 --scopes "$SCOPES" 2>/dev/null)
PERSONAL_TOKEN=$(campus "$PYTHON" - "$SCOPES" <<'PY'
import asyncio
import sys

from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.base.settings import Settings


async def main() -> str:
    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        sessions = make_sessions(engine)
        async with sessions() as session:
            student = await student_by_username(session, "student1")
        assert student is not None, "no demo student student1"
        tokens = PersonalTokens(sessions, settings)
        return await tokens.create(student.id, name="MCP Inspector (CI)", scope=sys.argv[1], days=7)
    finally:
        await engine.dispose()


print(asyncio.run(main()))
PY
)
campus "$PYTHON" - "$WORK" "$CAMPUS_MCP" "$ACCESS_TOKEN" "$PERSONAL_TOKEN" <<'PY'
import json
import os
import sys
from pathlib import Path

work, command, access_token, personal_token = sys.argv[1:]
port = os.environ["CAMPUS_MCP_PORT"]
http = {"type": "streamable-http", "url": f"http://127.0.0.1:{port}/api/mcp",
        "headers": {"Authorization": f"Bearer {access_token}"}}
campus_env = {k: v for k, v in os.environ.items() if k.startswith("CAMPUS_MCP_")}
stdio = {"command": command, "args": ["stdio", "--no-prepare"], "env": campus_env | {"CAMPUS_MCP_TOKEN": personal_token}}
for name, server in (("http", http), ("stdio", stdio)):
    Path(work, f"{name}.json").write_text(json.dumps({"mcpServers": {"campus": server}}))
PY
unset ACCESS_TOKEN PERSONAL_TOKEN

# The inspector's own state (catalog, OAuth store) goes to the throwaway folder, not $HOME.
export HOME=$WORK/home MCP_INSPECTOR_SECRET_STORE=memory

passed=0
failed=0
failures=()
# check NAME KIND OUTPUT: assert on one inspector answer (JSON on stdout, --format json).
check() {
  "$PYTHON" - "$@" "$TERM_UID" <<'PY'
import json
import sys

name, kind, path, term = sys.argv[1:]
answer = json.loads(open(path).read())
assert "result" in answer, f"{name}: no result: {answer}"
result = answer["result"]
if kind.startswith("initialize:"):
    expected = kind.split(":", 1)[1]
    assert result["protocolVersion"] == expected, f"{name}: protocol {result['protocolVersion']}, not {expected}"
    print(f"{name}: protocol {expected}, server {result['serverInfo']['name']}")
elif kind == "tools/list":
    names = {tool["name"] for tool in result["tools"]}
    wanted = {"list_terms", "search_sections", "get_course", "my_courses", "my_busy_times"}
    assert wanted <= names, f"{name}: missing tools {sorted(wanted - names)}"
    print(f"{name}: {len(names)} tools, {', '.join(sorted(wanted))} among them")
elif kind == "tools/call":
    assert not result.get("isError"), f"{name}: tool error {result['content']}"
    text = "".join(block["text"] for block in result["content"] if block["type"] == "text")
    courses = json.loads(text)
    assert courses["term"]["uid"] == term, f"{name}: term {courses['term']}"
    codes = [course["course_code"] for course in courses["courses"]]
    assert codes, f"{name}: student1 has no courses in {term}"
    print(f"{name}: student1's {courses['term']['name']}: {', '.join(codes)}")
PY
}

# inspect NAME KIND -- INSPECTOR ARGS...: run the inspector once and check what it printed.
inspect() {
  local name=$1 kind=$2
  shift 3
  local out=$WORK/out.json err=$WORK/err.log begin=$SECONDS
  echo "--- $name"
  if "$INSPECTOR" --cli "$@" --format json >"$out" 2>"$err" && check "$name" "$kind" "$out"; then
    passed=$((passed + 1))
    echo "    ($((SECONDS - begin)) s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    grep -v '^\[mcp-inspector\]' "$err" | tail -n 20 || true
    head -c 2000 "$out" || true
    echo
  fi
}

for transport in http stdio; do
  # The inspector gives a server 30 s to connect; a stdio one (a fresh campus-mcp process) took
  # longer beside both test passes on a loaded 2-core machine (load ~13). Up to 180 s instead.
  config=(--config "$WORK/$transport.json" --server campus --connect-timeout 180000)
  for era in legacy modern; do
    [[ $era == legacy ]] && protocol=2025-11-25 || protocol=2026-07-28
    inspect "$transport $era initialize" "initialize:$protocol" -- "${config[@]}" --protocol-era "$era" \
      --method initialize
    inspect "$transport $era tools/list" tools/list -- "${config[@]}" --protocol-era "$era" --method tools/list
    # JSON arguments: --tool-arg would make the term uid a number, which the schema refuses.
    inspect "$transport $era tools/call my_courses" tools/call -- "${config[@]}" --protocol-era "$era" \
      --method tools/call --tool-name my_courses --tool-args-json "{\"term\": \"$TERM_UID\"}"
  done
done

if grep -q Traceback "$WORK/serve.log"; then
  failed=$((failed + 1))
  failures+=("server log has a traceback")
fi
if ((failed > 0)); then
  echo "inspector: failed: ${failures[*]}; server log:"
  tail -n 40 "$WORK/serve.log"
fi
echo "inspector: $passed passed, $failed failed"
((failed == 0))
