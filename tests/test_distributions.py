"""The distributions (issue 29 point 5): server.json for the MCP registry and the .mcpb bundle.

server.json is in step with the product's one version and follows the registry's published schema
of 2025-12-11 (the rules it relies on are checked here; the published file itself when the steering
repository's shared/ holds a copy, pinned by digest: outside files are not committed here). The
bundle's manifest runs ``campus-mcp stdio`` with the values the student enters: run as the desktop
app would (its command, its environment with those values put in), the SDK client lists the tools
and calls one as the student whose token it is. scripts/distributions.sh builds the wheels, sdists
and the bundle, and validates the manifest with the bundle tool, in CI.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.testing import TestDatabases
from campus_mcp.testing import test_settings as campus_settings
from campus_mcp.version import __version__
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import distributions  # noqa: E402  (scripts/ is no package)

# The registry's published schema, if the steering repository put a copy in shared/ (its digest is
# that of https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json).
PUBLISHED_SCHEMA = ROOT.parent / "shared" / "schemas" / "server.schema.json"
PUBLISHED_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
SECRET_KEY = "test-only-secret-key"  # test_settings' key: the subprocess checks the same token hashes
NAME_PATTERN = r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"  # the schema's ServerDetail.name
URL_PATTERN = r"^https?://[^\s]+$"  # the schema's StreamableHttpTransport.url


def test_server_json_is_in_step_with_the_product_and_the_registry_rules() -> None:
    entry = json.loads((ROOT / "server.json").read_text())
    assert distributions.server_json_problems() == []
    assert entry["$schema"] == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    assert re.match(NAME_PATTERN, entry["name"]) and 3 <= len(entry["name"]) <= 200
    assert 1 <= len(entry["description"]) <= 100 and len(entry["title"]) <= 100
    assert entry["version"] == __version__ and not re.search(r"[\^~<>=*x]|latest", entry["version"])
    # The PyPI package, as the product's pyproject names it, run as `campus-mcp stdio` over stdio.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (package,) = entry["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"] == "campus-mcp"
    assert package["version"] == __version__ and package["transport"] == {"type": "stdio"}
    assert package["packageArguments"] == [{"type": "positional", "value": "stdio"}]
    assert package["runtimeArguments"] == [
        {"type": "named", "name": "--from", "value": f"campus-mcp[families]=={__version__}"}
    ]
    assert sorted(project["optional-dependencies"]["families"]) == sorted(distributions.FAMILIES)
    variables = {v["name"]: v for v in package["environmentVariables"]}
    assert variables["CAMPUS_MCP_TOKEN"]["isSecret"] and variables["CAMPUS_MCP_DATABASE_URL"]["isRequired"]
    assert all(v["isSecret"] for v in variables.values()), "each value is a secret: none is shown or logged"
    # The remote: streamable-http at a URL template whose every variable is declared.
    (remote,) = entry["remotes"]
    assert remote["type"] == "streamable-http" and re.match(URL_PATTERN, remote["url"])
    assert remote["url"].endswith("/api/mcp")
    assert set(re.findall(r"\{(\w+)\}", remote["url"])) == set(remote["variables"]) == {"campus_host"}
    assert all(v["isRequired"] and v["description"] for v in remote["variables"].values())
    # The registry checks that the PyPI package's description names the server.
    assert f"mcp-name: {entry['name']}" in (ROOT / "README.md").read_text()
    if PUBLISHED_SCHEMA.exists():
        raw = PUBLISHED_SCHEMA.read_bytes()
        assert hashlib.sha256(raw).hexdigest() == PUBLISHED_SHA256, "shared/ holds another schema than 2025-12-11"
        check = jsonschema.Draft7Validator(json.loads(raw), format_checker=jsonschema.FormatChecker())
        assert [e.message for e in check.iter_errors(entry)] == []


def test_server_json_out_of_step_is_named_with_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "server.json"
    stale.write_text(json.dumps({**distributions.server_json(), "version": "0.0.9"}))
    monkeypatch.setattr(distributions, "SERVER_JSON", stale)
    problems = distributions.server_json_problems()
    assert f"server.json says version '0.0.9', the product is {__version__}." in problems
    assert problems[-1].startswith("Run .venv/bin/python scripts/distributions.py write-server-json")


class Campus:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token


@pytest.fixture(scope="module")
async def campus(campus_databases: TestDatabases) -> AsyncIterator[Campus]:
    url = await campus_databases.demo_copy()
    registry = load_registry(campus_settings(url, anonymous_access=False))
    await asyncio.to_thread(upgrade, registry)
    engine = make_engine(url)
    sessions = make_sessions(engine)
    async with sessions() as session:
        student = await student_by_username(session, "student1")
    assert student is not None
    token = await PersonalTokens(sessions, registry.settings).create(
        student.id, name="desktop bundle", scope="catalog schedule:read", days=7
    )
    try:
        yield Campus(url, token)
    finally:
        await engine.dispose()
        await campus_databases.drop(url)


def desktop_launch(manifest: dict[str, Any], folder: Path, values: dict[str, str]) -> StdioServerParameters:
    """What the desktop app starts for the bundle: ``mcp_config`` with ``${__dirname}`` and the
    student's ``${user_config.*}`` values put in. ``uv run --directory DIR`` installs the bundle's
    project and runs the command after it; the project's packages are this checkout's, installed in
    this virtualenv, so the command runs from there."""
    config = manifest["server"]["mcp_config"]

    def filled(text: str) -> str:
        text = text.replace("${__dirname}", str(folder))
        return re.sub(r"\$\{user_config\.(\w+)\}", lambda m: values.get(m.group(1), ""), text)

    args = [filled(a) for a in config["args"]]
    assert config["command"] == "uv" and args[:3] == ["run", "--directory", str(folder)]
    command, *rest = args[3:]
    env = {name: filled(value) for name, value in config["env"].items()}
    return StdioServerParameters(command=str(Path(sys.executable).parent / command), args=rest, env=env)


async def test_the_bundle_runs_campus_mcp_stdio_with_the_students_token_and_database(
    campus: Campus, tmp_path: Path
) -> None:
    folder = tmp_path / "bundle"
    distributions.write_bundle(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["version"] == __version__ and manifest["manifest_version"] == "0.4"
    assert manifest["server"]["type"] == "uv" and (folder / manifest["server"]["entry_point"]).exists()
    assert manifest["server"]["mcp_config"]["args"][-2:] == ["campus-mcp", "stdio"]
    asked = manifest["user_config"]
    assert asked["token"]["sensitive"] and asked["token"]["required"]
    assert asked["database_url"]["sensitive"] and asked["database_url"]["required"]
    # The project uv installs: the product and its families, each at the version it was built with.
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert f"campus-mcp=={__version__}" in project["dependencies"] and len(project["dependencies"]) == 7
    icon = (folder / manifest["icon"]).read_bytes()
    assert icon.startswith(b"\x89PNG") and icon[16:24] == (512).to_bytes(4, "big") * 2

    values = {"token": campus.token, "database_url": campus.url, "secret_key": SECRET_KEY}
    launch = desktop_launch(manifest, folder, values)
    assert launch.args == ["stdio"] and launch.command.endswith("campus-mcp")
    async with Client(launch, mode="legacy") as client:  # type: ignore[arg-type]
        tools = {tool.name for tool in (await client.list_tools()).tools}
        courses = await client.call_tool("my_courses", {})
    assert {"search_sections", "my_courses", "list_friends"} <= tools
    assert not courses.is_error, courses.content
    assert (courses.structured_content or {}).get("courses") is not None, courses.structured_content


def test_every_dependency_is_a_range_and_the_pins_are_inside_it() -> None:
    """pyproject.toml of the host and of each family names ranges, so a campus's own plugin can
    install beside them with another version of a shared library; constraints.txt alone pins
    (issue 36), and each pin is one the range allows."""
    from packaging.requirements import Requirement

    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        pins[name.strip().lower().replace("_", "-")] = version.strip()
    projects = [
        ROOT / "pyproject.toml",
        *sorted(ROOT.glob("plugins/*/pyproject.toml")),
        *ROOT.glob("examples/*/pyproject.toml"),
    ]
    exact, outside = [], []
    for path in projects:
        project = tomllib.loads(path.read_text())["project"]
        requirements = [*project.get("dependencies", ())]
        for extra in project.get("optional-dependencies", {}).values():
            requirements.extend(extra)
        for text in requirements:
            requirement = Requirement(text)
            name = requirement.name.lower().replace("_", "-")
            if name.startswith("campus-mcp"):
                continue  # this repository's own distributions
            where = f"{path.relative_to(ROOT)}: {text}"
            if any(spec.operator in ("==", "===") for spec in requirement.specifier):
                exact.append(where)
            if name in pins and not requirement.specifier.contains(pins[name], prereleases=True):
                outside.append(f"{where} (constraints.txt: {pins[name]})")
    assert not exact, "a range in pyproject.toml, the exact version in constraints.txt: " + "; ".join(exact)
    assert not outside, "constraints.txt pins a version the range leaves out: " + "; ".join(outside)
