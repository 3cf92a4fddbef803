"""Plugins use the host through its two public modules only (issue 10, point 1).

``campus_mcp`` (the package top level) and ``campus_mcp.testing`` (the test kit) are the Plugin
API; every other module of the host is private and may change in any release. This walks every
``.py`` under ``plugins/`` and ``examples/`` (packages, tests, conftest files and migrations
alike) with ``ast`` and names, for each import of a private module, the file, the line and the
public name to use instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import campus_mcp
import campus_mcp.testing

ROOT = Path(__file__).resolve().parents[2]
WALKED = ("plugins", "examples")
PUBLIC_MODULES = {"campus_mcp", "campus_mcp.testing"}
TOP_LEVEL = set(campus_mcp.__all__)
KIT = set(campus_mcp.testing.__all__)

# Private names whose public replacement has another name or shape.
INSTEAD = {
    "Campus": "campus_mcp.Deployment",
    "count": "campus_mcp.count_metric",
    "run_job": "CampusHarness.run_job(job) (campus_mcp.testing)",
    "JobRun": "campus_mcp.record_run to write a run, CampusHarness.job_runs(job_id) (campus_mcp.testing) to read them",
    "load_registry": "campus_mcp.open_deployment (a command), campus_mcp.testing.load_plugins (a test)",
    "make_engine": "campus_mcp.open_deployment",
    "make_sessions": "campus_mcp.open_deployment",
    "upgrade": "campus_mcp.open_deployment (it migrates), CampusHarness.migrate() in a test",
    "alembic_config": "CampusHarness.alembic_config() (campus_mcp.testing)",
    "create_app": "campus_mcp.testing.harness_app",
    "main": "campus_mcp.testing.cli_main",
    "check_parity": "CampusHarness.check_parity() (campus_mcp.testing)",
    "assemble_instructions": "CampusHarness.instructions() (campus_mcp.testing)",
    "metrics": "campus_mcp.count_metric",
}


def public_name_for(name: str) -> str:
    if name in TOP_LEVEL:
        return f"campus_mcp.{name}"
    if name in KIT:
        return f"campus_mcp.testing.{name}"
    if name in INSTEAD:
        return INSTEAD[name]
    return "nothing public yet: ask for it to be exported from campus_mcp"


def private_imports(source: str, filename: str) -> list[str]:
    """One line per private host import in ``source``, in line order: ``file:line: what, what to use``."""
    found = sorted(_private_imports(source, filename), key=lambda problem: int(problem.split(":")[1]))
    return found


def _private_imports(source: str, filename: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("campus_mcp.") and alias.name not in PUBLIC_MODULES:
                    yield (
                        f"{filename}:{node.lineno}: import {alias.name} is private; "
                        "import campus_mcp (or campus_mcp.testing in tests) and use its names"
                    )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module = node.module
            if module == "campus_mcp":
                # ``from campus_mcp import jobs`` reaches a private module by another road.
                for alias in node.names:
                    if alias.name not in TOP_LEVEL and alias.name != "testing":
                        yield (
                            f"{filename}:{node.lineno}: from campus_mcp import {alias.name}: "
                            f"not public; use {public_name_for(alias.name)}"
                        )
            elif module.startswith("campus_mcp.") and module not in PUBLIC_MODULES:
                for alias in node.names:
                    yield (
                        f"{filename}:{node.lineno}: from {module} import {alias.name}: {module} is private; "
                        f"use {public_name_for(alias.name)}"
                    )


def walked_files() -> Iterator[Path]:
    for top in WALKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if any(part.startswith(".") or part in {"build", "__pycache__"} for part in relative.parts):
                continue
            yield relative


def test_no_plugin_or_example_imports_a_private_host_module() -> None:
    problems = [
        problem
        for relative in walked_files()
        for problem in private_imports((ROOT / relative).read_text(encoding="utf-8"), relative.as_posix())
    ]
    assert not problems, "plugins and examples use campus_mcp and campus_mcp.testing only:\n" + "\n".join(problems)


def test_the_walk_reaches_packages_tests_and_migrations() -> None:
    walked = {path.as_posix() for path in walked_files()}
    assert "plugins/catalog/campus_catalog/plugin.py" in walked
    assert "plugins/catalog/tests/conftest.py" in walked
    assert "examples/dining/campus_dining/migrations/versions/0001_dining_halls.py" in walked


def test_the_message_names_the_file_the_line_and_the_public_name() -> None:
    source = (
        "from campus_mcp import ToolContext\n"
        "from campus_mcp.testing import CampusHarness\n"
        "from campus_mcp.base.db import Base, utcnow\n"
        "def later():\n"
        "    from campus_mcp.web.app import Campus\n"
        "import campus_mcp.jobs.scheduler\n"
        "from campus_mcp import jobs\n"
    )
    assert private_imports(source, "plugins/x/x/models.py") == [
        "plugins/x/x/models.py:3: from campus_mcp.base.db import Base: campus_mcp.base.db is private; use campus_mcp.Base",
        "plugins/x/x/models.py:3: from campus_mcp.base.db import utcnow: campus_mcp.base.db is private; use campus_mcp.utcnow",
        "plugins/x/x/models.py:5: from campus_mcp.web.app import Campus: campus_mcp.web.app is private; "
        "use campus_mcp.Deployment",
        "plugins/x/x/models.py:6: import campus_mcp.jobs.scheduler is private; "
        "import campus_mcp (or campus_mcp.testing in tests) and use its names",
        "plugins/x/x/models.py:7: from campus_mcp import jobs: not public; "
        "use nothing public yet: ask for it to be exported from campus_mcp",
    ]


def test_every_exported_name_is_there() -> None:
    # A name in __all__ that the package does not define breaks ``from campus_mcp import *``.
    assert [name for name in campus_mcp.__all__ if not hasattr(campus_mcp, name)] == []
    assert [name for name in campus_mcp.testing.__all__ if not hasattr(campus_mcp.testing, name)] == []
