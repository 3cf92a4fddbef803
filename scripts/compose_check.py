"""Validate deploy/compose.yaml: a compose tool's config check, the Compose Specification, the shape.

    scripts/deploy_check.sh     (makes the tools' virtualenv and runs this with it)

`docker compose config` is not to be had here. Two checks stand in for it:
- podman-compose's `config` (PyPI; it needs Debian's podman only for `podman version`): the file as
  a compose tool reads it, its anchors merged, its dependency conditions checked;
- the compose_spec library (Rust, via PyPI's compose-spec): every key and type against the Compose
  Specification, unknown keys refused (podman-compose only warns about a misspelt `services`).
Then what docs/deployment.md promises of the file is asserted: web x2 after a one-shot migration,
a worker, PostgreSQL, Redis, the secrets as files, a read-only root for the server's services.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from compose_spec import PyCompose

COMPOSE = Path(__file__).resolve().parent.parent / "deploy" / "compose.yaml"
problems: list[str] = []


def problem(text: str) -> None:
    problems.append(text)
    print(f"  FAIL {text}")


def podman_compose_config() -> dict[str, Any]:
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
    files = {name: spec.get("file") for name, spec in document.get("secrets", {}).items()}
    if not files or not all(files.values()):
        problem(f"the secrets are not files: {files}")
    if len(problems) == before:
        print("  the file's promises: web x2 after a one-shot migrate, worker, secrets as files, read-only roots")


def main() -> int:
    podman_compose_config()
    document = compose_spec()
    check_shape(document)
    print(f"compose: {3 - min(len(problems), 3)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
