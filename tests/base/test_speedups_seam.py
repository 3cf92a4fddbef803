"""The speed-ups' seam (campus_mcp.base.speedups): private names of mcp, sqlalchemy and aiosqlite are used
there only; every switch turns off, all at once with CAMPUS_MCP_SPEEDUPS=off; a dependency that
moved turns its mechanism off with one log line."""

from __future__ import annotations

import ast
import inspect
import logging
import sys
from pathlib import Path

import aiosqlite
import pytest
from campus_mcp.base.settings import Settings
from campus_mcp.base.speedups import ALL_OFF, Switches, sqlite_driver

ROOT = Path(__file__).resolve().parents[2]
DEPENDENCIES = ("mcp", "mcp_types", "sqlalchemy", "aiosqlite")
# The speed-ups of the ground floor, and the MCP read fast path beside the server it short-cuts.
SEAM = ROOT / "host" / "campus_mcp" / "base" / "speedups"
FAST_CALL = ROOT / "host" / "campus_mcp" / "mcp" / "fast_call.py"
# Private names a scan of the loaded classes cannot see (set on instances, not on the class).
INSTANCE_PRIVATES = frozenset({"_for_update_arg", "_conn", "_execute"})
# Underscored by design and documented as public (namedtuple's API, SQLAlchemy's Row).
PUBLIC_UNDERSCORED = frozenset({"_mapping", "_asdict", "_fields", "_replace", "_make", "_t", "_tuple"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _dependency_privates() -> frozenset[str]:
    """Underscored names the loaded modules and classes of the dependencies define."""
    names = set(INSTANCE_PRIVATES)
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.split(".")[0] not in DEPENDENCIES:
            continue
        for name, value in list(vars(module).items()):
            if _private(name):
                names.add(name)
            if inspect.isclass(value):
                for klass in value.__mro__:
                    if klass.__module__.split(".")[0] in DEPENDENCIES:
                        slots = getattr(klass, "__slots__", ())
                        slots = (slots,) if isinstance(slots, str) else slots
                        names.update(name for name in [*vars(klass), *slots] if _private(name))
    return frozenset(names - PUBLIC_UNDERSCORED)


def _sources() -> list[Path]:
    return [
        path
        for folder in ("host", "plugins")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if SEAM not in path.parents and path != FAST_CALL and "tests" not in path.relative_to(ROOT).parts
    ]


def _defined(trees: dict[Path, ast.Module]) -> set[str]:
    """Names this project defines itself (an attribute of ours may share a dependency's name)."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names - INSTANCE_PRIVATES


def _private_uses() -> set[tuple[str, str]]:
    trees = {path: ast.parse(path.read_text(), str(path)) for path in _sources()}
    privates = _dependency_privates() - _defined(trees)
    found: set[tuple[str, str]] = set()
    for path, tree in trees.items():
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in DEPENDENCIES:
                named = [part for part in node.module.split(".") if _private(part)]
                named += [alias.name for alias in node.names if _private(alias.name)]
                found.update((where, name) for name in named)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] in DEPENDENCIES:
                        found.update((where, part) for part in parts if _private(part))
            elif isinstance(node, ast.Attribute) and node.attr in privates:
                found.add((where, node.attr))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr", "setattr"}
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in privates
            ):
                found.add((where, str(node.args[1].value)))
    return found


def test_private_names_of_the_dependencies_are_used_in_the_seam_only() -> None:
    outside = sorted(_private_uses())
    assert not outside, (
        f"private names of {', '.join(DEPENDENCIES)} used outside host/campus_mcp/base/speedups and mcp/fast_call.py: {outside}. "
        "Use their public API, or move the mechanism into campus_mcp.base.speedups behind a switch with a "
        "start-up check."
    )


def test_the_scan_finds_a_private_name(tmp_path: Path) -> None:
    """The scan is not blind: the seam's own driver uses aiosqlite's private _execute."""
    assert "_execute" in _dependency_privates()
    assert "aiosqlite.Connection._execute" not in sqlite_driver.one_trip_supported()
    assert aiosqlite.Connection._execute  # what the driver relies on, seen from here


def test_every_switch_turns_off_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", "off")
    monkeypatch.setenv("CAMPUS_MCP_STATEMENT_SHAPES", "true")  # one asked for on: off still wins
    assert Switches.of(Settings()) == ALL_OFF
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", "on")
    assert Switches.of(Settings()) == Switches()
    monkeypatch.setenv("CAMPUS_MCP_FAST_READS", "false")
    assert Switches.of(Settings()).fast_reads is False
    assert sqlite_driver.sqlite_module(ALL_OFF) is None  # SQLAlchemy's own adapter


def test_a_moved_dependency_turns_the_one_trip_driver_off_with_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sqlite_driver.WRITTEN_FOR, "aiosqlite", ("0.1",))
    sqlite_driver.one_trip_supported.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="campus_mcp.base.speedups"):
            module = sqlite_driver.sqlite_module(Switches())
    finally:
        monkeypatch.undo()
        sqlite_driver.one_trip_supported.cache_clear()
    assert type(module) is sqlite_driver.SQLiteDBAPI  # the idle rollback skip stands: public names only
    (line,) = [record.getMessage() for record in caplog.records]
    assert "sqlite_one_trip is off" in line and "aiosqlite 0.22" in line and "written for 0.1" in line


def test_a_moved_sqlalchemy_turns_statement_shapes_off_with_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from campus_mcp.base.speedups import statement_shapes

    on = Settings(speedups=True, statement_shapes=True)
    assert statement_shapes.shapes_on(on) is True
    monkeypatch.setattr(statement_shapes, "shapes_supported", lambda: ("sqlalchemy: probe moved",))
    statement_shapes._log_once.cache_clear()
    with caplog.at_level(logging.WARNING, logger="campus_mcp.base.speedups"):
        assert statement_shapes.shapes_on(on) is False
        assert statement_shapes.shapes_on(on) is False  # logged once
    (line,) = [record.getMessage() for record in caplog.records]
    assert "statement_shapes is off" in line and "probe moved" in line
    monkeypatch.undo()
    assert statement_shapes.shapes_on(Settings(speedups=True, statement_shapes=False)) is False
    assert statement_shapes.shapes_on(Settings(speedups=False, statement_shapes=True)) is False
