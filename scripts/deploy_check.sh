#!/usr/bin/env bash
# Validate what deploy/ ships (issue 27, point 2), with no network beyond the package registries:
#
#   scripts/deploy_check.sh
#
# - the Helm chart: helm lint --strict, helm template, every object against Kubernetes' JSON
#   schemas (strict, for 1.27 and the newest) and the chart's promises (scripts/chart_check.py);
# - the compose file: podman-compose config and the Compose Specification (scripts/compose_check.py);
# - the systemd units: systemd-analyze verify, their /opt/campus-mcp pointed at .venv (the unit
#   must name an executable that exists).
# The tools are pinned in deploy/check-requirements.txt and installed into .cache/deploy-tools
# (gitignored), apart from .venv: none of them is the server's. Two come from Debian and are
# checked first, each named with its package when missing (exit 1 before anything is installed):
# podman (podman-compose runs `podman version` before it reads a compose file, and fails with an
# error that does not say so) and systemd-analyze (package systemd).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/.cache/deploy-tools
REQUIREMENTS=deploy/check-requirements.txt

missing=0
need() {  # COMMAND PACKAGE WHY
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "deploy_check: $1 is not installed: $3. Install it: apt-get install $2" >&2
    missing=1
  fi
}
need podman podman "podman-compose checks the compose file and runs \`podman version\` first"
need systemd-analyze systemd "the systemd units are checked with systemd-analyze verify"
if ((missing)); then exit 1; fi

if ! cmp -s "$REQUIREMENTS" "$TOOLS/.requirements" 2>/dev/null; then
  rm -rf "$TOOLS"
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet --no-deps -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$TOOLS/.requirements"
fi

failed=0
echo "--- Helm chart deploy/helm/campus-mcp"
"$TOOLS/bin/python" scripts/chart_check.py || failed=1
echo "--- compose file deploy/compose.yaml"
"$TOOLS/bin/python" scripts/compose_check.py || failed=1
echo "--- systemd units deploy/systemd"
if [[ ! -x $ROOT/.venv/bin/campus-mcp ]]; then
  echo "  FAIL .venv is not set up (the units' ExecStart must exist); run 'make bootstrap'"
  failed=1
else
  units=$(mktemp -d)
  for unit in deploy/systemd/*.service; do
    sed "s#/opt/campus-mcp#$ROOT/.venv#g" "$unit" >"$units/$(basename "$unit")"
  done
  if systemd-analyze verify "$units"/*.service; then
    echo "  systemd-analyze verify: $(cd "$units" && echo *.service) clean"
  else
    echo "  FAIL systemd-analyze verify (above)"
    failed=1
  fi
  rm -rf "$units"
fi
exit "$failed"
