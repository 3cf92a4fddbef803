"""deploy/compose.yaml and the script that checks deploy/ (issue 35, point 7).

- Each of web's two replicas keeps its metrics in a folder of its own: prometheus-client's
  multiprocess mode sums every file of the folder, so in the volume the replicas share (where the
  image's default folder is) each replica's ``/metrics`` counted the other's requests too. The
  rule is scripts/compose_check.py's (CI's deploy check), run here on the file as shipped and on the
  file as it was.
- The worker's job counts are on a ``/metrics`` of its own (``CAMPUS_MCP_WORKER_METRICS_PORT``,
  exposed), from a folder no web replica reads: before, they were in a volume nothing served.
- ``scripts/deploy_check.sh`` on a machine without podman says so, with the package to install, at
  once; before, podman-compose failed a minute later with an error that did not name it.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def compose_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compose_check", ROOT / "scripts" / "compose_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shipped() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8"))
    return document


def test_each_web_replica_has_a_metrics_folder_of_its_own() -> None:
    check = compose_check()
    containerfile = (ROOT / "Containerfile").read_text(encoding="utf-8")
    document = shipped()
    web = document["services"]["web"]
    assert web["deploy"]["replicas"] == 2
    assert check.replica_metrics_problems(document, containerfile) == []
    # On the tmpfs each replica gets, which is not a volume they share.
    folder = web["environment"]["CAMPUS_MCP_METRICS_DIR"]
    assert any(folder.startswith(mount.rstrip("/") + "/") for mount in web["tmpfs"])
    assert not any(folder.startswith(volume.split(":")[1]) for volume in web["volumes"])

    # Without the setting, the image's default folder is in the shared volume: the check says so.
    before = copy.deepcopy(document)
    del before["services"]["web"]["environment"]["CAMPUS_MCP_METRICS_DIR"]
    [problem] = check.replica_metrics_problems(before, containerfile)
    assert "web's 2 replicas share the metrics folder /var/lib/campus-mcp/metrics" in problem


def test_the_workers_job_counts_are_on_a_metrics_page_of_its_own() -> None:
    """The worker wrote its job counts into a folder no web replica read (issue 35): it now serves
    them itself, on an exposed port, from a folder of its own, and the check says when it does not."""
    check = compose_check()
    containerfile = (ROOT / "Containerfile").read_text(encoding="utf-8")
    document = shipped()
    worker = document["services"]["worker"]
    assert check.worker_metrics_problems(document, containerfile) == []
    port = worker["environment"]["CAMPUS_MCP_WORKER_METRICS_PORT"]
    assert port in worker["expose"] and port in " ".join(worker["healthcheck"]["test"])
    folder = worker["environment"]["CAMPUS_MCP_METRICS_DIR"]
    assert any(folder.startswith(mount.rstrip("/") + "/") for mount in worker["tmpfs"])

    # The file as it was: the image's folder, in the worker's volume, served by nothing.
    before = copy.deepcopy(document)
    for name in ("CAMPUS_MCP_WORKER_METRICS_PORT", "CAMPUS_MCP_METRICS_DIR"):
        del before["services"]["worker"]["environment"][name]
    [problem] = check.worker_metrics_problems(before, containerfile)
    assert "worker runs the jobs but serves no /metrics of its own" in problem
    assert "(in /var/lib/campus-mcp/metrics)" in problem and "CAMPUS_MCP_WORKER_METRICS_PORT" in problem

    # A port that is not exposed reaches no scraper either.
    hidden = copy.deepcopy(document)
    del hidden["services"]["worker"]["expose"]
    [problem] = check.worker_metrics_problems(hidden, containerfile)
    assert problem == f"worker serves its metrics on port {port}, which it does not expose"

    # The tempting fix, the worker's counts in a folder web serves: each replica would report them.
    shared = copy.deepcopy(document)
    for name in ("web", "worker"):
        shared["services"][name]["environment"]["CAMPUS_MCP_METRICS_DIR"] = "/var/lib/campus-mcp/metrics"
        shared["services"][name]["volumes"] = ["web-var:/var/lib/campus-mcp"]
    problems = check.worker_metrics_problems(shared, containerfile)
    assert any("worker keeps its metrics in the folder web serves" in text for text in problems), problems


def path_without(command: str, folder: Path) -> str:
    """A PATH of the machine's own commands less ``command`` (a folder of links to the rest)."""
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for entry in Path(directory).iterdir():
            if entry.name != command and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    return str(folder)


def test_deploy_check_names_a_missing_podman_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": path_without("podman", tmp_path / "bin")}
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "deploy_check.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "podman is not installed" in done.stderr, done.stderr
    assert "apt-get install podman" in done.stderr
    assert "--- Helm chart" not in done.stdout  # nothing checked or installed before it said so
