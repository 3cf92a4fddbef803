"""Would a client's tool search find the right tool for a student's question?

Clients with many tools (Claude Code's tool search, for one) show the model only tool names until
it searches, and the search matches the question's words against tool names and descriptions.
This ranks every registered tool by BM25 over its name and description for each question in
``tool_selection_questions.tsv`` and holds top-1 and top-3 accuracy above a floor. Questions
whose tool no installed plugin registers are left out (and counted), so the check grows as
families land. The figures are printed (``pytest -s``) and quoted in docs/performance.md.

Two question sets: ``tool_selection_questions.tsv``, which the "Use it for" sentences were written
against (its floors are the goal of issue 24, point 6: 85 % and 98 %), and
``tool_selection_held_out.tsv``, written before those sentences were sharpened and never used to
tune them: its figures say how far the sentences carry to questions nobody tuned for, and its
floors (below the first set's) catch a change that makes them worse.

A third, ``tool_selection_held_out_i38.tsv`` (issue 38, point 4), was written before issue 38 changed any
description and never used to tune one; the goal is 85 % and 98 % (its floor holds the figure so far).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.settings import Settings
from rank_bm25 import BM25Okapi

QUESTIONS = Path(__file__).with_name("tool_selection_questions.tsv")
HELD_OUT = Path(__file__).with_name("tool_selection_held_out.tsv")
HELD_OUT_38 = Path(__file__).with_name("tool_selection_held_out_i38.tsv")
# Written after HELD_OUT_38's misses were known, before any description was sharpened for them:
# 74 % / 93 % then (42 questions).
HELD_OUT_38B = Path(__file__).with_name("tool_selection_held_out_i38b.tsv")
# (top-1 floor, top-3 floor) of each set.
# Issue 38's goal on its held-out sets is 85 % / 98 %; not reached yet. HELD_OUT_38 was 61 % / 83 % on
# main and 71 % / 92 % once its misses were used to sharpen the descriptions (so it is no longer held
# out); HELD_OUT_38B, never used to tune, is 74 % / 93 % after, unchanged. The floors hold what they
# have (HELD_OUT_38 70 % after issue 37 put the campus rules into settings).
FLOORS = {QUESTIONS: (0.85, 0.98), HELD_OUT: (0.60, 0.80), HELD_OUT_38: (0.69, 0.90), HELD_OUT_38B: (0.70, 0.90)}
MIN_QUESTIONS = 40


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))


def load_questions(questions: Path = QUESTIONS) -> list[tuple[str, set[str]]]:
    rows = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            question, tools = line.split("\t")
            rows.append((question, set(tools.split("|"))))
    return rows


def rank_tools(questions: Path = QUESTIONS) -> tuple[list[tuple[str, set[str], list[str]]], int]:
    registry = load_registry(Settings(database_url="sqlite+aiosqlite:///:memory:"))
    names = sorted(registry.tools)
    corpus = [tokens(f"{name} {registry.tools[name].title} {registry.tools[name].description}") for name in names]
    bm25 = BM25Okapi(corpus)
    ranked = []
    skipped = 0
    for question, expected in load_questions(questions):
        if not expected & set(names):
            skipped += 1
            continue
        scores = bm25.get_scores(tokens(question))
        order = [names[i] for i in sorted(range(len(names)), key=lambda i: -scores[i])]
        ranked.append((question, expected, order))
    return ranked, skipped


@pytest.mark.parametrize("questions", list(FLOORS), ids=lambda path: path.stem)
def test_a_tool_search_finds_the_right_tool_for_student_questions(questions: Path) -> None:
    ranked, skipped = rank_tools(questions)
    top1_floor, top3_floor = FLOORS[questions]
    assert len(ranked) >= MIN_QUESTIONS, f"only {len(ranked)} questions have a registered tool"
    top1 = sum(order[0] in expected for _, expected, order in ranked) / len(ranked)
    top3 = sum(bool(expected & set(order[:3])) for _, expected, order in ranked) / len(ranked)
    misses = [f"  {q!r}: wanted {'|'.join(sorted(e))}, got {o[:3]}" for q, e, o in ranked if not e & set(o[:3])]
    print(
        f"\ntool selection (BM25 over names and descriptions), {questions.name}: {len(ranked)} questions, "
        f"{skipped} skipped (tool not installed); top-1 {top1:.0%}, top-3 {top3:.0%}"
    )
    print("\n".join(misses))
    assert top1 >= top1_floor, f"top-1 {top1:.0%} is under {top1_floor:.0%}"
    assert top3 >= top3_floor, f"top-3 {top3:.0%} is under {top3_floor:.0%}:\n" + "\n".join(misses)
