#!/usr/bin/env bash
# The MCP clients students run that nobody here wrote, pinned, on the Node 22 of scripts/node.sh, in
# .node/ (gitignored): the TypeScript SDK, the MCP Inspector (also scripts/inspector.sh's pin) and
# mcp-remote (Claude Desktop's bridge from stdio to HTTP).
#
#   scripts/mcp_clients.sh   (tests/mcp/test_confirmation_clients.py runs it; .ci/run runs it once before
#                             the two test passes, so they never npm install into .node/ at once)
#
# Prints nothing but npm's own errors; exit status 0 once all are there.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=$ROOT/.venv/bin/python
TYPESCRIPT_SDK_VERSION=1.32.2
INSPECTOR_VERSION=2.12.0
MCP_REMOTE_VERSION=0.15.1

source "$ROOT/scripts/node.sh"
use_node22 "MCP clients" >&2
node_install @modelcontextprotocol/sdk "$TYPESCRIPT_SDK_VERSION" "TypeScript SDK" >&2
node_install @modelcontextprotocol/inspector "$INSPECTOR_VERSION" inspector >&2
node_install mcp-remote "$MCP_REMOTE_VERSION" mcp-remote >&2
