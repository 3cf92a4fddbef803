"""bench/mcp_vs_rest_wrk.py's wrk scripts: each row's request exactly as mcp_vs_rest.py sends it.

wrk itself is not installed for the tests (the bench says how to get it); what can go wrong here
without it is the Lua that tells wrk what to send: a body or a header lost, or a string that is not
Lua's. Its one-line summary at the end is what the bench reads back.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def wrk_bench() -> Iterator[ModuleType]:
    # The script imports its siblings by name, as when it runs from bench/: put that folder on
    # the path for the import, and take it and the modules back after.
    before_path, before_modules = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(BENCH))
    try:
        import mcp_vs_rest_wrk  # type: ignore[import-not-found]

        yield mcp_vs_rest_wrk
    finally:
        sys.path[:] = before_path
        for name in set(sys.modules) - before_modules:
            if name in {"mcp_vs_rest_wrk", "mcp_vs_rest", "search_sections"}:
                del sys.modules[name]


def _assigned(script: str, name: str) -> list[str]:
    return re.findall(rf"^{re.escape(name)} = (.*)$", script, flags=re.MULTILINE)


def test_an_mcp_row_sends_its_post_body_and_every_header(wrk_bench: ModuleType, tmp_path: Path) -> None:
    bench = wrk_bench.bench
    question = bench.Question("search_sections", {"subject": "COMP", "limit": 25, "q": 'say "hi" \\ ok'}, "")
    for wire in bench.WIRES:
        target = bench.mcp_target(
            f"/api/mcp {wire}", "search_sections", "cold", "o", "http://x/api/mcp", question, wire
        )
        script = wrk_bench.lua_of(target, tmp_path).read_text()
        assert _assigned(script, "wrk.method") == ['"POST"']
        (body,) = _assigned(script, "wrk.body")
        assert json.loads(body).encode() == target.body  # a JSON string literal is a Lua one here: ASCII
        headers = dict(re.findall(r'^wrk\.headers\[("[^"]*")\] = (.*)$', script, flags=re.MULTILINE))
        assert {json.loads(k): json.loads(v) for k, v in headers.items()} == target.headers
        assert "campus: p50=" in script and "e.status" in script


def test_a_rest_row_sends_a_get_without_a_body(wrk_bench: ModuleType, tmp_path: Path) -> None:
    target = wrk_bench.bench.Target(
        "REST twin", "search_sections", "cold", "o", "GET", "http://x/api/v1/catalog/sections", {}, None
    )
    script = wrk_bench.lua_of(target, tmp_path).read_text()
    assert _assigned(script, "wrk.method") == ['"GET"']
    assert _assigned(script, "wrk.body") == []
