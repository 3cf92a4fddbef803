"""Would a client's tool search find the right tool for a student's question?

Clients with many tools (Claude Code's tool search, for one) show the model only tool names until
it searches, and the search matches the question's words against tool names and descriptions.
This ranks every registered tool by BM25 over its name and description for each question in
``tool_selection_questions.tsv`` and holds top-1 and top-3 accuracy above a floor. Questions
whose tool no installed plugin registers are left out (and counted), so the check grows as
families land. The figures are printed (``pytest -s``) and quoted in docs/search-and-benchmarks.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from campus_mcp.registry import load_registry
from campus_mcp.settings import Settings
from rank_bm25 import BM25Okapi

QUESTIONS = Path(__file__).with_name("tool_selection_questions.tsv")
TOP1_FLOOR = 0.70
TOP3_FLOOR = 0.90
MIN_QUESTIONS = 40


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))


def load_questions() -> list[tuple[str, set[str]]]:
    rows = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            question, tools = line.split("\t")
            rows.append((question, set(tools.split("|"))))
    return rows


def rank_tools() -> tuple[list[tuple[str, set[str], list[str]]], int]:
    registry = load_registry(Settings(database_url="sqlite+aiosqlite:///:memory:"))
    names = sorted(registry.tools)
    corpus = [tokens(f"{name} {registry.tools[name].title} {registry.tools[name].description}") for name in names]
    bm25 = BM25Okapi(corpus)
    ranked = []
    skipped = 0
    for question, expected in load_questions():
        if not expected & set(names):
            skipped += 1
            continue
        scores = bm25.get_scores(tokens(question))
        order = [names[i] for i in sorted(range(len(names)), key=lambda i: -scores[i])]
        ranked.append((question, expected, order))
    return ranked, skipped


def test_a_tool_search_finds_the_right_tool_for_student_questions() -> None:
    ranked, skipped = rank_tools()
    assert len(ranked) >= MIN_QUESTIONS, f"only {len(ranked)} questions have a registered tool"
    top1 = sum(order[0] in expected for _, expected, order in ranked) / len(ranked)
    top3 = sum(bool(expected & set(order[:3])) for _, expected, order in ranked) / len(ranked)
    misses = [f"  {q!r}: wanted {'|'.join(sorted(e))}, got {o[:3]}" for q, e, o in ranked if not e & set(o[:3])]
    print(
        f"\ntool selection (BM25 over names and descriptions): {len(ranked)} questions, {skipped} skipped "
        f"(tool not installed); top-1 {top1:.0%}, top-3 {top3:.0%}"
    )
    print("\n".join(misses))
    assert top1 >= TOP1_FLOOR, f"top-1 {top1:.0%} is under {TOP1_FLOOR:.0%}"
    assert top3 >= TOP3_FLOOR, f"top-3 {top3:.0%} is under {TOP3_FLOOR:.0%}:\n" + "\n".join(misses)
