"""The parity check (seed 002): every /api route of a plugin has its tool, exemption or pending entry.

It holds over every installed plugin, and each kind of drift fails with a message that names the
route, the plugin and what to do. ``campus-mcp parity`` runs the same check for plugin authors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from campus_mcp import PluginInfo, RouteGroup, RouteRef, Scope, Tool, hookimpl, testing
from campus_mcp.assembly.parity import ParityReport, check_parity, normalize
from campus_mcp.assembly.registry import load_registry
from campus_mcp.web.app import create_app
from litestar import get, post
from litestar.params import FromPath
from pydantic import BaseModel

CLI = Path(sys.executable).with_name("campus-mcp")


def report_for(tmp_path: Path, extra: Sequence[tuple[str, object]] = (), **overrides: Any) -> ParityReport:
    registry = load_registry(testing.test_settings(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}", **overrides), extra)
    return check_parity(create_app(registry=registry, run_scheduler=False), registry)


def test_every_installed_plugin_passes_the_parity_check(tmp_path: Path) -> None:
    report = report_for(tmp_path)
    assert report.ok, "parity check failed:\n" + "\n".join(report.problems)
    # Every route is accounted for exactly by one of the three lists.
    for route in report.routes:
        assert route in report.covered or route in report.exempt or route in report.pending, route


class Empty(BaseModel):
    pass


async def nothing(_context: object, _args: Empty) -> Empty:
    return Empty()


@get("/api/v1/rooms", sync_to_thread=False)
def list_rooms() -> list[str]:
    return []


@get("/api/v1/rooms/{number:int}", sync_to_thread=False)
def get_room(number: FromPath[int]) -> str:
    return str(number)


@post("/api/v1/rooms/bookings", sync_to_thread=False)
def book_room() -> str:
    return "booked"


@get("/rooms", sync_to_thread=False)
def rooms_page() -> str:
    return "a web page: not under /api, so no tool is asked of it"


class Rooms:
    def __init__(self, mirrors: Sequence[str] = (), exempt: dict[str, str] | None = None, pending: Sequence[str] = ()):
        self.mirrors = mirrors
        self.exempt = exempt or {}
        self.pending = pending

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="rooms", version="1", title="Rooms", description="Library rooms.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="rooms", description="Rooms.", always_on=True)]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        refs = tuple(RouteRef(method=m.split()[0], path=m.split()[1]) for m in self.mirrors)  # type: ignore[arg-type]
        return [
            Tool(
                name="rooms_tool",
                title="Rooms",
                description="Rooms.",
                scope="rooms",
                input_model=Empty,
                output_model=Empty,
                handler=nothing,
                mirrors=refs,
            )
        ]

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        return [
            RouteGroup(handlers=[list_rooms, get_room, book_room, rooms_page], exempt=self.exempt, pending=self.pending)
        ]


COMPLETE = Rooms(
    mirrors=["GET /api/v1/rooms", "GET /api/v1/rooms/{number}"],
    exempt={"POST /api/v1/rooms/bookings": "Bookings are confirmed by the library desk, not by an assistant."},
)


def rooms_report(tmp_path: Path, plugin: Rooms) -> ParityReport:
    # Only the host and the throwaway plugin, so the messages are the plugin's alone.
    return report_for(tmp_path, [("rooms", plugin)], plugins=[])


def test_a_complete_plugin_passes(tmp_path: Path) -> None:
    report = rooms_report(tmp_path, COMPLETE)
    assert report.problems == []
    assert report.routes == {
        "GET /api/v1/rooms": "rooms",
        "GET /api/v1/rooms/{number}": "rooms",
        "POST /api/v1/rooms/bookings": "rooms",
    }
    assert report.covered == {"GET /api/v1/rooms": ["rooms_tool"], "GET /api/v1/rooms/{number}": ["rooms_tool"]}


def test_a_route_with_no_tool_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=["GET /api/v1/rooms"], exempt=COMPLETE.exempt)
    assert rooms_report(tmp_path, plugin).problems == [
        "uncovered: GET /api/v1/rooms/{number} (rooms) has no tool. Add a tool that mirrors it, "
        "or list it as exempt with a reason, or as pending"
    ]


def test_a_tool_naming_a_route_nobody_serves_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=[*COMPLETE.mirrors, "DELETE /api/v1/rooms/{number}"], exempt=COMPLETE.exempt)
    assert rooms_report(tmp_path, plugin).problems == [
        "dangling: tool rooms_tool (rooms) mirrors DELETE /api/v1/rooms/{number}, which no plugin serves"
    ]


def test_a_pending_route_that_already_has_its_tool_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=COMPLETE.mirrors, exempt=COMPLETE.exempt, pending=["GET /api/v1/rooms"])
    [problem] = rooms_report(tmp_path, plugin).problems
    assert problem.startswith("stale pending entry: GET /api/v1/rooms (rooms) already has the tool rooms_tool")
    assert "remove it from pending" in problem


def test_a_pending_entry_naming_no_route_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=COMPLETE.mirrors, exempt=COMPLETE.exempt, pending=["GET /api/v1/desks"])
    assert rooms_report(tmp_path, plugin).problems == ["stale pending entry: GET /api/v1/desks (rooms) names no route"]


def test_a_pending_route_is_accepted_until_its_tool_comes(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=["GET /api/v1/rooms"], exempt=COMPLETE.exempt, pending=["GET /api/v1/rooms/{number:int}"])
    report = rooms_report(tmp_path, plugin)
    assert report.problems == []
    assert report.pending == ["GET /api/v1/rooms/{number}"]


def test_an_exemption_naming_no_route_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=COMPLETE.mirrors, exempt={**COMPLETE.exempt, "POST /api/v1/rooms/cancel": "Desk only."})
    assert rooms_report(tmp_path, plugin).problems == [
        "stale exemption: POST /api/v1/rooms/cancel (rooms) names no route"
    ]


def test_an_exemption_without_a_reason_fails(tmp_path: Path) -> None:
    plugin = Rooms(mirrors=COMPLETE.mirrors, exempt={"POST /api/v1/rooms/bookings": "  "})
    assert rooms_report(tmp_path, plugin).problems == [
        "exemption without a reason: POST /api/v1/rooms/bookings (rooms)"
    ]


def test_path_parameter_types_do_not_matter() -> None:
    assert normalize("/api/v1/sections/{crn:str}/") == "/api/v1/sections/{crn}"
    assert normalize("/api/v1/sections/{crn}") == "/api/v1/sections/{crn}"


# The command line -------------------------------------------------------------------------


def install_fake_distribution(folder: Path, name: str, module_source: str) -> dict[str, str]:
    """A plugin "installed" by a dist-info folder on PYTHONPATH: real discovery, nothing pip-installed."""
    (folder / f"campus_{name}.py").write_text(textwrap.dedent(module_source))
    dist_info = folder / f"campus_mcp_{name}-0.0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: campus-mcp-{name}\nVersion: 0.0.1\n")
    (dist_info / "entry_points.txt").write_text(f"[campus_mcp]\n{name} = campus_{name}\n")
    return {"PYTHONPATH": str(folder)}


BROKEN_PLUGIN = """
from litestar import get
from campus_mcp import PluginInfo, RouteGroup, hookimpl

@get("/api/v1/lockers", sync_to_thread=False)
def lockers() -> list[str]:
    return []

@hookimpl
def campus_plugin_info():
    return PluginInfo(name="lockers", version="0.0.1", title="Lockers", description="Gym lockers.")

@hookimpl
def register_routes():
    return [RouteGroup(handlers=[lockers])]
"""


def run_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args], env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    return {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"}


def test_cli_parity_passes_for_the_installed_plugins(tmp_path: Path, cli_env: dict[str, str]) -> None:
    result = run_cli("parity", env=cli_env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout


def test_cli_parity_exits_1_with_the_list_of_problems(tmp_path: Path, cli_env: dict[str, str]) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    env = {**cli_env, **install_fake_distribution(folder, "lockers", BROKEN_PLUGIN)}
    result = run_cli("parity", env=env, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "  FAIL uncovered: GET /api/v1/lockers (lockers) has no tool." in result.stdout
    as_json = run_cli("parity", "--json", env=env, cwd=tmp_path)
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert report["ok"] is False
    assert report["routes"]["GET /api/v1/lockers"] == "lockers"
    assert any(p.startswith("uncovered: GET /api/v1/lockers") for p in report["problems"])


def test_a_tool_with_no_route_and_no_reason_fails(tmp_path: Path) -> None:
    class Unmirrored(Rooms):
        @hookimpl
        def register_tools(self) -> list[Tool]:
            return [*super().register_tools(), Tool(**{**BARE_TOOL, "name": "whoami_rooms"})]

    assert rooms_report(tmp_path, Unmirrored(COMPLETE.mirrors, COMPLETE.exempt)).problems == [
        "unmirrored: tool whoami_rooms (rooms) mirrors no route. Name the route it mirrors (Tool.mirrors), "
        "or say why it has none (Tool.no_route_reason)"
    ]


def test_a_tool_with_no_route_and_a_reason_passes(tmp_path: Path) -> None:
    class Explained(Rooms):
        @hookimpl
        def register_tools(self) -> list[Tool]:
            reason = "Reports the caller's own token; no page or route shows it."
            return [*super().register_tools(), Tool(**{**BARE_TOOL, "name": "whoami_rooms", "no_route_reason": reason})]

    assert rooms_report(tmp_path, Explained(COMPLETE.mirrors, COMPLETE.exempt)).problems == []


BARE_TOOL: dict[str, Any] = {
    "title": "Who am I",
    "description": "Who the caller is.",
    "scope": "rooms",
    "input_model": Empty,
    "output_model": Empty,
    "handler": nothing,
}
