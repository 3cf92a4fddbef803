"""What a student's chat pays in context: the bytes of each tool's definition in ``tools/list`` and
of its answer to each of its examples (the Operations' examples, ``register_tool_examples``),
on a fresh demo campus with every installed family.

    .venv/bin/python bench/context_size.py --work var/bench

It loads the demo campus into a SQLite file under ``--work`` (again on every run, since the
examples of write tools change it), lists the tools as a signed-in student with every
permission, calls every demo example through the MCP SDK client in process (the same JSON a
client gets over HTTP), and prints one row per tool (its definition's bytes, split into its
description, input schema, output schema, annotations, _meta and the rest, then its answers),
the totals and issue 16's goals (campus_mcp.mcp.context_size). Not a test:
tests/mcp/test_context_size.py holds the goals.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.cli.demo import load_demo
from campus_mcp.mcp.context_size import (
    ANSWER_GOAL,
    DEFINITION_PARTS,
    SEARCH_PAGE_GOAL,
    TOOL_DEFINITION_GOAL,
    answer_bytes,
    definition_bytes,
    definition_parts,
    tools_list_goal,
)
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.plugin.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.web.app import create_app
from mcp import Client


async def principal(registry: Registry, sessions: object, username: str | None) -> Principal:
    if username is None:
        return ANONYMOUS
    async with sessions() as session:  # type: ignore[operator]
        student = await student_by_username(session, username)
    assert student is not None, f"the demo campus has no student {username!r}"
    return Principal(user_id=student.id, username=username, client_id="bench", scopes=frozenset(registry.scopes))


async def measure(database: Path) -> int:
    # The bench's own settings only: not a campus-mcp.toml of the working directory.
    os.environ["CAMPUS_MCP_CONFIG"] = str(database.with_suffix(".absent.toml"))
    settings = Settings(database_url=f"sqlite+aiosqlite:///{database}", scheduler=False)
    registry = load_registry(settings)
    await asyncio.to_thread(upgrade, registry)
    engine = make_engine(settings.database_url)
    try:
        await load_demo(registry, make_sessions(engine), reload=True)
    finally:
        await engine.dispose()
    app = create_app(registry=registry, run_scheduler=False)
    server = app.state.deployment.mcp
    sessions = app.state.deployment.sessions

    student = await principal(registry, sessions, "student1")
    token = current_principal.set(student)
    try:
        async with Client(server.server, mode="legacy") as client:  # type: ignore[arg-type]
            listed = (await client.list_tools()).tools
            default_page = answer_bytes(await client.call_tool("search_sections", {}))
    finally:
        current_principal.reset(token)
    definitions = {tool.name: definition_bytes(tool) for tool in listed}
    parts = {tool.name: definition_parts(tool) for tool in listed}
    columns = [*DEFINITION_PARTS, "other"]

    answers: dict[str, list[int]] = {name: [] for name in definitions}
    for example in (e for e in registry.tool_examples if e.data == "demo"):
        if example.prepare is not None:
            async with sessions() as session:
                await example.prepare(session)
        token = current_principal.set(await principal(registry, sessions, example.user))
        try:
            async with Client(server.server, mode="legacy") as client:  # type: ignore[arg-type]
                result = await client.call_tool(example.tool, dict(example.arguments))
        finally:
            current_principal.reset(token)
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        assert not result.is_error, f"{example.tool} {dict(example.arguments)} failed: {text}"
        answers.setdefault(example.tool, []).append(answer_bytes(result))

    print(f"| tool | definition (bytes) | {' | '.join(columns)} | answers to its examples (bytes) |")
    print(f"| --- | ---: | {' | '.join('---:' for _ in columns)} | --- |")
    for name in sorted(definitions, key=lambda n: -definitions[n]):
        split = " | ".join(f"{parts[name][c]:,}" for c in columns)
        print(f"| `{name}` | {definitions[name]:,} | {split} | {', '.join(f'{b:,}' for b in answers[name]) or '-'} |")
    every_answer = [b for sizes in answers.values() for b in sizes]
    total = sum(definitions.values())
    sums = " | ".join(f"**{sum(p[c] for p in parts.values()):,}**" for c in columns)
    print(
        f"| **all {len(definitions)} tools** | **{total:,}** | {sums} | **{sum(every_answer):,}** "
        f"in {len(every_answer)} answers |"
    )
    print()
    checks = [
        (f"tools/list under {tools_list_goal(len(definitions)):,}", total, total < tools_list_goal(len(definitions))),
        (
            f"largest definition at most {TOOL_DEFINITION_GOAL:,}",
            max(definitions.values()),
            max(definitions.values()) <= TOOL_DEFINITION_GOAL,
        ),
        (f"default search_sections page under {SEARCH_PAGE_GOAL:,}", default_page, default_page < SEARCH_PAGE_GOAL),
        (f"largest example answer under {ANSWER_GOAL:,}", max(every_answer), max(every_answer) < ANSWER_GOAL),
    ]
    for label, value, met in checks:
        print(f"- {label}: {value:,} bytes, {'met' if met else 'NOT MET'}")
    return 0 if all(met for _, _, met in checks) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the demo campus database.")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    raise SystemExit(asyncio.run(measure(args.work / "context-size.db")))


if __name__ == "__main__":
    main()
