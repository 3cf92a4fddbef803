#!/usr/bin/env bash
# Node 22 and npm oidc-provider (panva's certified OpenID Provider) in .node/, for the OIDC sign-in
# tests (tests/support/oidc_idp.py starts tests/support/oidc_provider/provider.mjs with them).
#
#   scripts/oidc_provider.sh      (.ci/run calls it once before the test passes; the tests call it
#                                  themselves when the package is missing)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=$ROOT/.venv/bin/python
[[ -x $PYTHON ]] || PYTHON=python3
OIDC_PROVIDER_VERSION=9.13.3

source "$ROOT/scripts/node.sh"
use_node22 oidc-provider
node_install oidc-provider "$OIDC_PROVIDER_VERSION" oidc-provider
echo "oidc-provider: node $(node --version), oidc-provider $(node_installed_version oidc-provider) in .node/"
