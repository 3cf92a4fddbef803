"""deploy/compose.yaml and the script that checks deploy/ (issue 35, point 7).

- Each of web's two replicas keeps its metrics in a folder of its own: prometheus-client's
  multiprocess mode sums every file of the folder, so in the volume the replicas share (where the
  image's default folder is) each replica's ``/metrics`` counted the other's requests too. The
  rule is scripts/compose_check.py's (CI's deploy check), run here on the file as shipped and on the
  file as it was.
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
