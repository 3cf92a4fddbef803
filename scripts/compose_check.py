"""Validate deploy/compose.yaml: a compose tool's config check, the Compose Specification, the shape.

    scripts/deploy_check.sh     (makes the tools' virtualenv and runs this with it)

`docker compose config` is not to be had here. Two checks stand in for it:
- podman-compose's `config` (PyPI; it needs Debian's podman only for `podman version`): the file as
  a compose tool reads it, its anchors merged, its dependency conditions checked;
- the compose_spec library (Rust, via PyPI's compose-spec): every key and type against the Compose
  Specification, unknown keys refused (podman-compose only warns about a misspelt `services`).
Then what docs/deployment.md promises of the file is asserted: web x2 after a one-shot migration,
a worker, PostgreSQL, Redis, the secrets as files, a read-only root for the server's services, and
a metrics folder of each web replica's own (tests/test_deploy_compose.py runs that check too).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "deploy" / "compose.yaml"
CONTAINERFILE = ROOT / "Containerfile"
problems: list[str] = []


def problem(text: str) -> None:
    problems.append(text)
    print(f"  FAIL {text}")


def podman_compose_config() -> dict[str, Any]:
    if shutil.which("podman") is None:
        problem(
            "podman is not on PATH: podman-compose runs `podman version` before it reads the file "
            "(install Debian's podman: apt-get install podman); the checks below ran without it"
        )
        return {}
    # The same interpreter's podman-compose; in deploy/, where the file's relative paths start.
    command = [sys.executable, "-m", "podman_compose", "-f", COMPOSE.name, "config"]
    done = subprocess.run(command, cwd=COMPOSE.parent, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0 or "WARNING" in done.stderr:
        problem(f"podman-compose config: exit {done.returncode}: {done.stderr.strip()[-500:]}")
        return {}
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    print(f"  podman-compose config: {len(config.get('services', {}))} services, no warning")
    return config


def compose_spec() -> dict[str, Any]:
    from compose_spec import PyCompose  # the deploy tools' (not .venv's): the test imports this file

    # compose_spec reads no YAML merge keys (<<): PyYAML merges them first, as compose tools do.
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    try:
        parsed = PyCompose.from_json(json.dumps(document))
    except ValueError as error:
        problem(f"Compose Specification: {error}")
        return document
    print(f"  Compose Specification (compose_spec, unknown keys refused): valid, services {parsed.service_names()}")
    return document


def check_shape(document: dict[str, Any]) -> None:
    services = document.get("services", {})
    before = len(problems)
    if set(services) != {"migrate", "web", "worker", "postgres", "redis"}:
        problem(f"services {sorted(services)}")
        return
    web, worker, migrate = services["web"], services["worker"], services["migrate"]
    if web.get("deploy", {}).get("replicas") != 2 or "--no-migrate" not in " ".join(web["command"]):
        problem("web is not two replicas of serve --no-migrate")
    for name in ("web", "worker"):
        after = services[name].get("depends_on", {}).get("migrate", {}).get("condition")
        if after != "service_completed_successfully":
            problem(f"{name} does not wait for the migration to finish")
    if migrate.get("restart") != "no" or "db upgrade" not in " ".join(migrate["command"]):
        problem("migrate is not a one-shot db upgrade")
    for name, service in (("web", web), ("worker", worker), ("migrate", migrate)):
        if not service.get("read_only"):
            problem(f"{name}'s root file system is writable")
        if "secret_key" not in service.get("secrets", []):
            problem(f"{name} does not get the key as a secret file")
        if any("SECRET_KEY" in key or "PASSWORD" in key for key in service.get("environment", {})):
            problem(f"{name} has a secret in its environment block")
    for text in replica_metrics_problems(document, CONTAINERFILE.read_text(encoding="utf-8")):
        problem(text)
    files = {name: spec.get("file") for name, spec in document.get("secrets", {}).items()}
    if not files or not all(files.values()):
        problem(f"the secrets are not files: {files}")
    if len(problems) == before:
        print(
            "  the file's promises: web x2 after a one-shot migrate, worker, secrets as files, read-only roots,"
            " a metrics folder per replica"
        )


def image_environment(containerfile: str) -> dict[str, str]:
    """The ENV of the Containerfile's last stage (KEY=VALUE pairs, continued lines joined)."""
    last = containerfile.replace("\\\n", " ").split("\nFROM ")[-1]
    found: dict[str, str] = {}
    for line in last.splitlines():
        if line.startswith("ENV "):
            found.update(pair.split("=", 1) for pair in line.split()[1:] if "=" in pair)
    return found


def replica_metrics_problems(document: dict[str, Any], containerfile: str) -> list[str]:
    """A service of several replicas must keep its metrics in a folder of each replica's own (a
    tmpfs), never in a volume: prometheus-client's multiprocess mode sums every file of the folder,
    so replicas sharing one would each report the other's requests on their own /metrics."""
    problems = []
    image = image_environment(containerfile)
    for name, service in document.get("services", {}).items():
        if service.get("deploy", {}).get("replicas", 1) < 2:
            continue
        env = service.get("environment", {})
        folder = (
            env.get("PROMETHEUS_MULTIPROC_DIR")
            or env.get("CAMPUS_MCP_METRICS_DIR")
            or image.get("CAMPUS_MCP_METRICS_DIR")
        )
        if not folder:  # serve --workers then keeps it in VAR_DIR, a volume
            folder = env.get("CAMPUS_MCP_VAR_DIR") or image.get("CAMPUS_MCP_VAR_DIR", "var")
        tmpfs = service.get("tmpfs", [])
        tmpfs = [tmpfs] if isinstance(tmpfs, str) else tmpfs
        if not any(folder == mount or folder.startswith(mount.rstrip("/") + "/") for mount in tmpfs):
            problems.append(
                f"{name}'s {service['deploy']['replicas']} replicas share the metrics folder {folder}, so each "
                "one's /metrics counts the others' requests: set CAMPUS_MCP_METRICS_DIR to a folder on its tmpfs"
            )
    return problems


def main() -> int:
    podman_compose_config()
    document = compose_spec()
    check_shape(document)
    print(f"compose: {3 - min(len(problems), 3)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
