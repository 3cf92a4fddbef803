"""``docs/hooks.md`` documents every hook under its exact signature, and every hook has a test.

The two-way check: a hookspec missing from the page, a heading that no hookspec has, a heading
whose signature drifted from ``hookspecs.py``, or a hook with no ``test_hook_<name>`` test in
``tests/plugin/test_hooks.py`` each fail with the hook named.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.plugin import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS_DOC = ROOT / "docs" / "hooks.md"
HOOKS_TESTS = ROOT / "tests" / "plugin" / "test_hooks.py"
HEADING = re.compile(r"^## `(?P<name>\w+)(?P<signature>\(.*\).*)`$", re.MULTILINE)


def hookspec_functions() -> dict[str, Callable[..., Any]]:
    return {
        name: function
        for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(function, f"{hookspecs.PROJECT}_spec")
    }


def signature_text(function: Callable[..., Any]) -> str:
    # The module uses postponed annotations, so they are strings: print them without quotes.
    return str(inspect.signature(function)).replace("'", "")


def documented() -> dict[str, str]:
    return {match["name"]: match["signature"] for match in HEADING.finditer(HOOKS_DOC.read_text(encoding="utf-8"))}


def sections() -> dict[str, str]:
    text = HOOKS_DOC.read_text(encoding="utf-8")
    matches = list(HEADING.finditer(text))
    return {
        match["name"]: text[match.end() : matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        for i, match in enumerate(matches)
    }


def hook_test_names() -> list[str]:
    tree = ast.parse(HOOKS_TESTS.read_text(encoding="utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_hook_")
    ]


def test_there_are_hooks_to_check() -> None:
    assert len(hookspec_functions()) >= 14


@pytest.mark.parametrize("hook", sorted(hookspec_functions()))
def test_hook_is_documented_under_its_exact_signature(hook: str) -> None:
    headings = documented()
    assert hook in headings, f"docs/hooks.md has no '## `{hook}(...)`' heading"
    expected = signature_text(hookspec_functions()[hook])
    assert headings[hook] == expected, (
        f"docs/hooks.md documents {hook}{headings[hook]}, hookspecs.py says {hook}{expected}"
    )


@pytest.mark.parametrize("hook", sorted(hookspec_functions()))
def test_hook_documentation_has_an_example(hook: str) -> None:
    body = sections().get(hook, "")
    assert "```python" in body and "@hookimpl" in body and f"def {hook}(" in body, (
        f"the docs/hooks.md section of {hook} needs a Python example with an @hookimpl of {hook}"
    )


def test_every_documented_hook_exists() -> None:
    stale = sorted(set(documented()) - set(hookspec_functions()))
    assert stale == [], f"docs/hooks.md documents hooks that hookspecs.py does not declare: {stale}"


@pytest.mark.parametrize("hook", sorted(hookspec_functions()))
def test_hook_has_a_test(hook: str) -> None:
    names = hook_test_names()
    assert any(name == f"test_hook_{hook}" or name.startswith(f"test_hook_{hook}_") for name in names), (
        f"tests/plugin/test_hooks.py has no test_hook_{hook} test"
    )


def test_hook_tests_name_real_hooks() -> None:
    hooks = sorted(hookspec_functions(), key=len, reverse=True)
    strays = [
        name
        for name in hook_test_names()
        if not any(name == f"test_hook_{hook}" or name.startswith(f"test_hook_{hook}_") for hook in hooks)
    ]
    assert strays == [], f"these tests name no hook (renamed hook?): {strays}"
