"""The product's distributions besides its wheels: server.json (the MCP registry) and the .mcpb bundle.

    .venv/bin/python scripts/distributions.py check-server-json   exit 1 naming what server.json lacks
    .venv/bin/python scripts/distributions.py write-server-json   set server.json's versions from the product's
    .venv/bin/python scripts/distributions.py bundle DIR          write the bundle's folder (then `mcpb pack DIR`)

The version is campus_mcp/version.py's, and only there: server.json is checked against it (CI runs
``check-server-json``; ``write-server-json`` brings it in step after a release bump), the bundle's
manifest and project are written from it, and each family's version is its own distribution's.

server.json follows the registry's published schema of 2025-12-11
(``https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json``,
modelcontextprotocol/static at a9ba437, sha256 3fba0959...4114de0; the registry's
docs/reference/server-json/CHANGELOG.md): the PyPI package run as ``campus-mcp stdio`` (uvx, with
the families of the ``families`` extra) and the remote ``streamable-http`` URL template, whose
``{campus_host}`` a client asks for. ``tests/test_distributions.py`` checks it against those rules,
and against the published file itself when ``shared/schemas/server.schema.json`` is beside the
checkout (developers do not commit copies of outside files; see its header).

The bundle is an MCP Bundle (manifest 0.4, ``server.type = "uv"``: the desktop app installs Python
and the project's dependencies itself) for Claude Desktop, whose manifest runs ``campus-mcp stdio``
with the student's personal access token and the campus database as values the student enters
(``user_config``, both kept secret). The npm tool ``@anthropic-ai/mcpb`` validates and packs it
(scripts/distributions.sh).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import zlib
from importlib import metadata
from pathlib import Path
from typing import Any

from campus_mcp.version import __version__

ROOT = Path(__file__).resolve().parents[1]
SERVER_JSON = ROOT / "server.json"
SERVER_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
REGISTRY_NAME = "edu.wit/campus-mcp"
PACKAGE = "campus-mcp"
# The families a desktop install brings: pyproject.toml's `families` extra.
FAMILIES = (
    "campus-mcp-catalog",
    "campus-mcp-schedule",
    "campus-mcp-friends",
    "campus-mcp-settings",
    "campus-mcp-apps",
    "campus-mcp-prompts",
)
DESCRIPTION = "A university's course catalog, class schedule, finals and friends' free times for AI assistants."
PAT_HELP = (
    "Your personal access token: make one on your campus's Campus MCP dashboard (Tokens). "
    "It acts for you with the permissions you gave it."
)
DATABASE_HELP = "The campus database URL your campus IT gives you (postgresql+asyncpg://...)."
KEY_HELP = "The deployment key your campus IT gives you with the database URL; it checks your token."
# (environment variable, user_config key, title, help, required)
USER_VALUES = (
    ("CAMPUS_MCP_TOKEN", "token", "Personal access token", PAT_HELP, True),
    ("CAMPUS_MCP_DATABASE_URL", "database_url", "Campus database URL", DATABASE_HELP, True),
    ("CAMPUS_MCP_SECRET_KEY", "secret_key", "Deployment key", KEY_HELP, False),
)


def server_json() -> dict[str, Any]:
    """The registry entry as it should be for this version."""
    return {
        "$schema": SERVER_SCHEMA_URL,
        "name": REGISTRY_NAME,
        "title": "Campus MCP",
        "description": DESCRIPTION,
        "version": __version__,
        "packages": [
            {
                "registryType": "pypi",
                "identifier": PACKAGE,
                "version": __version__,
                "runtimeHint": "uvx",
                # The product with its families, at this version (uvx then runs its campus-mcp command).
                "runtimeArguments": [
                    {"type": "named", "name": "--from", "value": f"{PACKAGE}[families]=={__version__}"}
                ],
                "packageArguments": [{"type": "positional", "value": "stdio"}],
                "transport": {"type": "stdio"},
                "environmentVariables": [
                    {"name": env, "description": help_text, "isRequired": required, "isSecret": True}
                    for env, _key, _title, help_text, required in USER_VALUES
                ],
            }
        ],
        "remotes": [
            {
                "type": "streamable-http",
                "url": "https://{campus_host}/api/mcp",
                "variables": {
                    "campus_host": {
                        "description": "The host name of your campus's Campus MCP server (for example mcp.wit.edu).",
                        "isRequired": True,
                    }
                },
            }
        ],
    }


def server_json_problems() -> list[str]:
    """What the committed server.json lacks, each with what to do; [] when it is in step."""
    try:
        committed = json.loads(SERVER_JSON.read_text())
    except (OSError, ValueError) as exc:
        return [f"server.json cannot be read ({exc}); run scripts/distributions.py write-server-json."]
    if committed == server_json():
        return []
    problems = []
    if committed.get("version") != __version__:
        problems.append(f"server.json says version {committed.get('version')!r}, the product is {__version__}.")
    if committed != server_json():
        problems.append("server.json differs from what scripts/distributions.py writes.")
    return [*problems, "Run .venv/bin/python scripts/distributions.py write-server-json and commit server.json."]


def manifest() -> dict[str, Any]:
    """The bundle's manifest.json (MCPB manifest 0.4)."""
    return {
        "manifest_version": "0.4",
        "name": PACKAGE,
        "display_name": "Campus MCP",
        "version": __version__,
        "description": DESCRIPTION,
        "long_description": (
            "Runs Campus MCP on your computer for Claude Desktop (campus-mcp stdio): the course catalog, "
            "your schedule and finals, your friends' free times and your calendar settings, as your campus "
            "serves them. It acts as you with your personal access token, and asks before it changes anything."
        ),
        "author": {"name": "Campus MCP"},
        "icon": "icon.png",
        "license": "MIT",
        "keywords": ["university", "courses", "schedule", "calendar", "campus"],
        "server": {
            "type": "uv",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", "campus-mcp", "stdio"],
                "env": {env: "${user_config." + key + "}" for env, key, _title, _help, _required in USER_VALUES},
            },
        },
        # What the server offers comes from it when it runs (tools/list), as the server card leaves it.
        "tools_generated": True,
        "prompts_generated": True,
        "user_config": {
            key: {"type": "string", "title": title, "description": help_text, "required": required, "sensitive": True}
            for _env, key, title, help_text, required in USER_VALUES
        },
        "compatibility": {"platforms": ["darwin", "win32", "linux"], "runtimes": {"python": ">=3.11"}},
    }


def bundle_project() -> str:
    """The bundle's pyproject.toml: what ``uv run`` installs, each distribution at its own version."""
    pins = [f"{PACKAGE}=={__version__}", *(f"{name}=={metadata.version(name)}" for name in FAMILIES)]
    listed = "".join(f'    "{pin}",\n' for pin in pins)
    return (
        "[project]\n"
        'name = "campus-mcp-desktop"\n'
        f'version = "{__version__}"\n'
        'description = "Campus MCP for Claude Desktop: campus-mcp stdio with every family."\n'
        'requires-python = ">=3.11"\n'
        f"dependencies = [\n{listed}]\n"
    )


ENTRY_POINT = '''"""The bundle's entry point: ``campus-mcp stdio`` (the manifest runs the same command through uv)."""

from campus_mcp.cli.main import main

main(["stdio"])
'''


def campus_png(size: int = 512) -> bytes:
    """The campus icon (host/campus_mcp/assembly/icons/campus.svg) drawn as a PNG: the bundle's icon must be one.

    The same shapes on the same 64-unit grid, each pixel sampled 4 times so the edges are smooth.
    """
    navy, gold, white = (0x1E, 0x3A, 0x6E), (0xF4, 0xC5, 0x42), (0xFF, 0xFF, 0xFF)
    boxes = [(12, 26, 52, 30), (11, 49, 53, 53), *((x, 32, x + 5, 48) for x in (15, 25, 34, 44))]

    def colour(x: float, y: float) -> tuple[int, int, int] | None:
        # The rounded square (corner radius 14), outside which the icon is transparent.
        cx, cy = min(max(x, 14), 50), min(max(y, 14), 50)
        if (x - cx) ** 2 + (y - cy) ** 2 > 14**2:
            return None
        if (x - 32) ** 2 + (y - 19.5) ** 2 <= 2.5**2:
            return navy
        if 11 <= y <= 24 and abs(x - 32) <= (y - 11) * 23 / 13:
            return gold
        if any(left <= x <= right and top <= y <= bottom for left, top, right, bottom in boxes):
            return white
        return navy

    scale, rows = 64 / size, bytearray()
    for row in range(size):
        rows.append(0)
        for column in range(size):
            samples = [colour((column + dx) * scale, (row + dy) * scale) for dx in (0.25, 0.75) for dy in (0.25, 0.75)]
            inside = [s for s in samples if s is not None]
            if not inside:
                rows.extend((0, 0, 0, 0))
                continue
            rows.extend(sum(c[i] for c in inside) // len(inside) for i in range(3))
            rows.append(255 * len(inside) // len(samples))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def write_bundle(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest(), indent=2) + "\n")
    (folder / "pyproject.toml").write_text(bundle_project())
    (folder / "server").mkdir(exist_ok=True)
    (folder / "server" / "main.py").write_text(ENTRY_POINT)
    (folder / "icon.png").write_bytes(campus_png())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check-server-json", help="exit 1 naming what server.json lacks")
    commands.add_parser("write-server-json", help="write server.json for this version")
    bundle = commands.add_parser("bundle", help="write the .mcpb bundle's folder")
    bundle.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "check-server-json":
        problems = server_json_problems()
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(f"server.json: {REGISTRY_NAME} {__version__}, in step with the product.")
        return 1 if problems else 0
    if args.command == "write-server-json":
        SERVER_JSON.write_text(json.dumps(server_json(), indent=2) + "\n")
        print(f"server.json: {REGISTRY_NAME} {__version__}")
        return 0
    write_bundle(args.folder)
    print(f"{args.folder}: the bundle's folder for campus-mcp {__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
