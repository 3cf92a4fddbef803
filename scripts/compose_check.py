"""Validate deploy/compose.yaml: a compose tool's config check, the Compose Specification, the shape.

    scripts/deploy_check.sh     (makes the tools' virtualenv and runs this with it)

`docker compose config` is not to be had here. Two checks stand in for it:
- podman-compose's `config` (PyPI; it needs Debian's podman only for `podman version`): the file as
  a compose tool reads it, its anchors merged, its dependency conditions checked;
- the compose_spec library (Rust, via PyPI's compose-spec): every key and type against the Compose
  Specification, unknown keys refused (podman-compose only warns about a misspelt `services`).
Then what docs/deployment.md promises of the file is asserted: web x2 after a one-shot migration,
a worker, PostgreSQL, Redis, the secrets as files, a read-only root for the server's services, a
metrics folder of each web replica's own, and the worker's job counts on a /metrics of the
worker's own, in a folder no web replica reads (tests/test_deploy_compose.py runs those checks too).
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
    containerfile = CONTAINERFILE.read_text(encoding="utf-8")
    for text in replica_metrics_problems(document, containerfile) + worker_metrics_problems(document, containerfile):
        problem(text)
    files = {name: spec.get("file") for name, spec in document.get("secrets", {}).items()}
    if not files or not all(files.values()):
        problem(f"the secrets are not files: {files}")
    if len(problems) == before:
        print(
            "  the file's promises: web x2 after a one-shot migrate, worker, secrets as files, read-only roots,"
            " a metrics folder per replica, the worker's metrics served by the worker"
        )


def image_environment(containerfile: str) -> dict[str, str]:
    """The ENV of the Containerfile's last stage (KEY=VALUE pairs, continued lines joined)."""
    last = containerfile.replace("\\\n", " ").split("\nFROM ")[-1]
    found: dict[str, str] = {}
    for line in last.splitlines():
        if line.startswith("ENV "):
            found.update(pair.split("=", 1) for pair in line.split()[1:] if "=" in pair)
    return found


def metrics_folder(service: dict[str, Any], image: dict[str, str]) -> str:
    """Where a service's processes keep their metrics (serve --workers and worker alike)."""
    env = service.get("environment", {})
    folder = (
        env.get("PROMETHEUS_MULTIPROC_DIR") or env.get("CAMPUS_MCP_METRICS_DIR") or image.get("CAMPUS_MCP_METRICS_DIR")
    )
    if folder:
        return str(folder)
    # serve --workers then keeps it in VAR_DIR
    return str(env.get("CAMPUS_MCP_VAR_DIR") or image.get("CAMPUS_MCP_VAR_DIR", "var"))


def _inside(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount.rstrip("/") + "/")


def volume_place(service: dict[str, Any], path: str) -> tuple[str, str] | None:
    """(the named volume, the path inside it) that holds ``path`` in ``service``, or None (its own
    tmpfs or container layer: no other service sees it)."""
    for volume in service.get("volumes", []):
        source, _, target = str(volume).partition(":")
        target = target.split(":", 1)[0]
        if target and not source.startswith(("/", ".")) and _inside(path, target):
            return source, path[len(target.rstrip("/")) :]
    return None


def serves_jobs(service: dict[str, Any]) -> bool:
    return "campus-mcp worker" in " ".join(service.get("command") or [])


def worker_metrics_problems(document: dict[str, Any], containerfile: str) -> list[str]:
    """A worker's job counts must reach a /metrics. No web replica reads the worker's folder, so the
    worker serves its own (CAMPUS_MCP_WORKER_METRICS_PORT, exposed): Prometheus scrapes it as a
    target of its own. Its folder must not be one a web replica reads either: every replica would
    then report the worker's runs, and a sum over the replicas counts each run once per replica."""
    problems = []
    image = image_environment(containerfile)
    services = document.get("services", {})
    for name, service in services.items():
        if not serves_jobs(service):
            continue
        env = service.get("environment", {})
        port = str(env.get("CAMPUS_MCP_WORKER_METRICS_PORT") or image.get("CAMPUS_MCP_WORKER_METRICS_PORT") or "0")
        folder = metrics_folder(service, image)
        if port == "0":
            problems.append(
                f"{name} runs the jobs but serves no /metrics of its own, so its job counts (in {folder}) never "
                "reach a scraper: set CAMPUS_MCP_WORKER_METRICS_PORT and expose that port"
            )
        elif port not in {
            str(p).split(":")[-1].split("/")[0] for p in service.get("expose", []) + service.get("ports", [])
        }:
            problems.append(f"{name} serves its metrics on port {port}, which it does not expose")
        place = volume_place(service, folder)
        for other, web in services.items():
            if other == name or serves_jobs(web) or "campus-mcp serve" not in " ".join(web.get("command") or []):
                continue
            if place is not None and volume_place(web, metrics_folder(web, image)) == place:
                problems.append(
                    f"{name} keeps its metrics in the folder {other} serves, so each of {other}'s replicas reports "
                    "the worker's job runs and a sum over them counts each run once per replica: give the worker "
                    "a folder of its own (its tmpfs) and CAMPUS_MCP_WORKER_METRICS_PORT"
                )
    return problems


def replica_metrics_problems(document: dict[str, Any], containerfile: str) -> list[str]:
    """A service of several replicas must keep its metrics in a folder of each replica's own (a
    tmpfs), never in a volume: prometheus-client's multiprocess mode sums every file of the folder,
    so replicas sharing one would each report the other's requests on their own /metrics."""
    problems = []
    image = image_environment(containerfile)
    for name, service in document.get("services", {}).items():
        if service.get("deploy", {}).get("replicas", 1) < 2:
            continue
        folder = metrics_folder(service, image)
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
