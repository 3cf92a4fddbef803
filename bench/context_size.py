"""What a student's chat pays in context (issues 16 and 38): every figure a model reads before and
while it answers, on a fresh demo campus with every installed family.

    .venv/bin/python bench/context_size.py --work var/bench

It loads the demo campus into a SQLite file under ``--work`` (again on every run), then prints:

1. ``tools/list`` as a signed-in student with every permission: one row per tool (its definition's
   bytes, split into description, input schema, output schema, annotations, _meta and the rest),
   the total, and the server instructions' characters.
2. The default answers a model reads most (``my_calendar_settings``, ``list_term_electives``,
   ``search_sections`` with no arguments): structured content and text, in bytes.
3. Each planning prompt run for a typical request (two courses, day and time preferences): the
   prompt's steps followed as written (campus_mcp.mcp.prompt_walkthrough), its tool calls and their bytes.
4. The answers to every tool's examples (the Operations' examples); a write example runs on its
   own copy of the demo database (its preparation adds rows once) with the change applied.
5. Tool choice: BM25 over names and descriptions, as a client's tool search ranks, on each question
   set of tests/ (tests/assembly/test_tool_selection.py holds the floors).

Then the goals (campus_mcp.mcp.context_size) with met or NOT MET. Not a test: tests/mcp/test_context_size.py
and tests/assembly/test_tool_selection.py hold the goals.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import Registry, load_registry
from campus_mcp.base.db import make_engine, make_sessions
from campus_mcp.base.settings import Settings
from campus_mcp.cli.demo import load_demo
from campus_mcp.mcp.context_size import (
    ANSWER_GOAL,
    DEFAULT_ANSWER_GOALS,
    DEFINITION_PARTS,
    PROMPT_RUN_BYTES_GOAL,
    PROMPT_RUN_CALLS_GOAL,
    SEARCH_PAGE_GOAL,
    TOOL_DEFINITION_GOAL_38,
    TOOLS_LIST_GOAL_38,
    answer_bytes,
    definition_bytes,
    definition_parts,
    structured_bytes,
)
from campus_mcp.mcp.instructions import MAX_INSTRUCTIONS_LENGTH
from campus_mcp.mcp.prompt_walkthrough import TYPICAL_REQUESTS, follow
from campus_mcp.oauth.accounts import student_by_username
from campus_mcp.plugin.principal import ANONYMOUS, Principal, current_principal
from campus_mcp.web.app import create_app
from mcp import Client

TESTS = Path(__file__).resolve().parent.parent / "tests"

# The answers a model reads most, with the arguments a model gives first (none).
DEFAULT_ANSWERS = ("my_calendar_settings", "list_term_electives", "search_sections")


async def principal(registry: Registry, sessions: Any, username: str | None) -> Principal:
    if username is None:
        return ANONYMOUS
    async with sessions() as session:
        student = await student_by_username(session, username)
    assert student is not None, f"the demo campus has no student {username!r}"
    return Principal(user_id=student.id, username=username, client_id="bench", scopes=frozenset(registry.scopes))


def served(database: Path) -> tuple[Registry, Any]:
    # A write example's change is applied at once (seed 000's "apply"): the bench measures its answer.
    settings = Settings(database_url=f"sqlite+aiosqlite:///{database}", scheduler=False, confirmation_fallback="apply")
    registry = load_registry(settings)
    return registry, create_app(registry=registry, run_scheduler=False)


async def call_as(app: Any, who: Principal, tool: str, arguments: dict[str, Any]) -> Any:
    token = current_principal.set(who)
    try:
        async with Client(app.state.deployment.mcp.server, mode="legacy") as client:
            return await client.call_tool(tool, arguments)
    finally:
        current_principal.reset(token)


async def measure(work: Path) -> int:
    # The bench's own settings only: not a campus-mcp.toml of the working directory.
    database = work / "context-size.db"
    os.environ["CAMPUS_MCP_CONFIG"] = str(database.with_suffix(".absent.toml"))
    registry, app = served(database)
    await asyncio.to_thread(upgrade, registry)
    engine = make_engine(f"sqlite+aiosqlite:///{database}")
    try:
        await load_demo(registry, make_sessions(engine), reload=True)
    finally:
        await engine.dispose()
    demo_copy = work / "context-size-demo.db"
    shutil.copyfile(database, demo_copy)
    sessions = app.state.deployment.sessions
    student = await principal(registry, sessions, "student1")

    token = current_principal.set(student)
    try:
        async with Client(app.state.deployment.mcp.server, mode="legacy") as client:
            listed = (await client.list_tools()).tools
            instructions = client.instructions or ""
    finally:
        current_principal.reset(token)
    definitions = {tool.name: definition_bytes(tool) for tool in listed}
    parts = {tool.name: definition_parts(tool) for tool in listed}
    columns = [*DEFINITION_PARTS, "other"]

    defaults: dict[str, tuple[int, int]] = {}
    for tool in DEFAULT_ANSWERS:
        result = await call_as(app, student, tool, {})
        assert not result.is_error, f"{tool} failed: {result.content}"
        defaults[tool] = (structured_bytes(result), answer_bytes(result))

    runs = []
    for request in TYPICAL_REQUESTS:
        runs.append(await follow(app.state.deployment.mcp.server, student, request))

    answers: dict[str, list[int]] = {name: [] for name in definitions}
    for example in (e for e in registry.tool_examples if e.data == "demo"):
        target = app
        if registry.tools[example.tool].writes:
            # Its own copy of the demo campus: a preparation adds its rows once.
            copy = work / f"context-size-{example.tool}.db"
            # A previous run's -wal and -shm would be replayed onto the fresh copy: "database disk
            # image is malformed" on the second run with the same --work.
            for leftover in (copy, copy.with_name(f"{copy.name}-wal"), copy.with_name(f"{copy.name}-shm")):
                leftover.unlink(missing_ok=True)
            shutil.copyfile(demo_copy, copy)
            _, target = served(copy)
        if example.prepare is not None:
            async with target.state.deployment.sessions() as session:
                await example.prepare(session)
        who = await principal(registry, target.state.deployment.sessions, example.user)
        result = await call_as(target, who, example.tool, dict(example.arguments))
        text = result.content[0].text if result.content else ""
        assert not result.is_error, f"{example.tool} {dict(example.arguments)} failed: {text}"
        answers.setdefault(example.tool, []).append(answer_bytes(result))

    print("## tools/list (a signed-in student, every permission)\n")
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
    print(f"\nServer instructions: {len(instructions):,} of the {MAX_INSTRUCTIONS_LENGTH:,} characters a client keeps.")

    print("\n## Default answers (no arguments, student1)\n")
    print("| tool | structured content (bytes) | text (bytes) |\n| --- | ---: | ---: |")
    for tool, (structured, text_bytes) in defaults.items():
        print(f"| `{tool}` | {structured:,} | {text_bytes:,} |")

    print("\n## Planning prompts, a typical request followed step by step\n")
    print("| prompt | request | tool calls | results (bytes) | calls (bytes each) |\n| --- | --- | ---: | ---: | --- |")
    for run in runs:
        calls = ", ".join(f"{c.tool} {c.bytes:,}" for c in run.calls)
        print(f"| `{run.prompt}` | {run.request} | {len(run.calls)} | {run.result_bytes:,} | {calls} |")

    print("\n## Tool choice (BM25 over names and descriptions)\n")
    sys.path.insert(0, str(TESTS))
    import test_tool_selection as selection  # type: ignore[import-not-found]  # the test's own ranking

    for questions in selection.FLOORS:
        ranked, skipped = selection.rank_tools(questions)
        top1 = sum(order[0] in expected for _, expected, order in ranked) / len(ranked)
        top3 = sum(bool(expected & set(order[:3])) for _, expected, order in ranked) / len(ranked)
        print(f"- {questions.name}: {len(ranked)} questions ({skipped} skipped), top-1 {top1:.0%}, top-3 {top3:.0%}")

    print("\n## Goals\n")
    checks = [
        (f"tools/list at most {TOOLS_LIST_GOAL_38:,} bytes", total, total <= TOOLS_LIST_GOAL_38),
        (
            f"largest definition at most {TOOL_DEFINITION_GOAL_38:,} bytes",
            max(definitions.values()),
            max(definitions.values()) <= TOOL_DEFINITION_GOAL_38,
        ),
        (
            f"instructions at most {MAX_INSTRUCTIONS_LENGTH:,} characters",
            len(instructions),
            len(instructions) <= MAX_INSTRUCTIONS_LENGTH,
        ),
        (
            f"default search_sections page under {SEARCH_PAGE_GOAL:,} bytes",
            defaults["search_sections"][1],
            defaults["search_sections"][1] < SEARCH_PAGE_GOAL,
        ),
        (f"largest example answer under {ANSWER_GOAL:,} bytes", max(every_answer), max(every_answer) < ANSWER_GOAL),
    ]
    for tool, goal in DEFAULT_ANSWER_GOALS.items():
        checks.append(
            (f"default {tool} structured at most {goal:,} bytes", defaults[tool][0], defaults[tool][0] <= goal)
        )
    for run in runs:
        checks.append(
            (
                f"{run.prompt} in at most {PROMPT_RUN_CALLS_GOAL} calls (calls)",
                len(run.calls),
                len(run.calls) <= PROMPT_RUN_CALLS_GOAL,
            )
        )
        checks.append(
            (
                f"{run.prompt} results at most {PROMPT_RUN_BYTES_GOAL:,} bytes",
                run.result_bytes,
                run.result_bytes <= PROMPT_RUN_BYTES_GOAL,
            )
        )
    for label, value, met in checks:
        print(f"- {label}: {value:,}, {'met' if met else 'NOT MET'}")
    return 0 if all(met for _, _, met in checks) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the demo campus databases.")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    raise SystemExit(asyncio.run(measure(args.work)))


if __name__ == "__main__":
    main()
