"""Issue 37, point 4: the campus's own rules come from its settings; WIT's only on the demo campus.

A Texas A&M campus is built as its administrator would (the TAMU Banner page and a real academic
calendar imported by the catalog's own jobs, every family but the examples, a local student), and
everything its students' models read is scanned for Wentworth's words: the instructions, every
listed tool (description and schemas), every prompt (listed and got), and the answers of the
tools, anonymous and signed in. Then the same campus with its own rules set says those.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from campus_mcp.oauth.accounts import create_local_student
from campus_mcp.testing import CampusFactory, CampusHarness
from mcp import types

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"  # ../shared of the project root
TAMU = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
CALENDAR = FIXTURES / "academic-calendar-princeton-2022-2023.ics"
FAMILIES = ["catalog", "schedule", "prompts", "friends", "settings", "apps"]
# Wentworth's words (seed 000): its name, its systems, its registration PIN, its override office.
WIT_WORDS = re.compile(
    r"LeopardWeb|Leopard|Wentworth|myWentworth|\bWIT\b|\bRAC\b|Registration Alternate PIN|wit\.edu|"
    r"dean's office|associate dean|Prepare for Registration",
)
TAMU_SETTINGS: dict[str, Any] = {
    "campus_name": "Texas A&M University",
    "campus_short_name": "TAMU",
    "timezone": "America/Chicago",
}
# Arguments that reach real rows of the TAMU page (term 202131, CSCE 110 is CRN 45405).
ARGUMENTS: dict[str, dict[str, Any]] = {
    "search_sections": {"term": "202131", "subject": "CSCE"},
    "get_section": {"term": "202131", "crn": "45405"},
    "search_courses": {"q": "CSCE 110"},
    "get_course": {"code": "CSCE 110"},
    "similar_sections": {"term": "202131", "crn": "45405"},
    "check_schedule": {"term": "202131", "crns": ["45405"]},
    "list_subjects": {"term": "202131"},
    "university_events": {"start_date": "2022-09-01", "end_date": "2023-06-30"},
    "search_instructors": {"q": "a"},
    "list_programs": {},
    "list_term_electives": {"term": "202131"},
    "get_instructor": {"pub_id": "aakash-tyagi-2154cd"},
    "similar_instructors": {"pub_id": "aakash-tyagi-2154cd"},
    "degree_requirements": {"slug": "computer-science"},
    "catalog_graphql": {"query": '{ section(crn: "45405", term: "202131") { crn title } }'},
    "my_busy_times": {"start_date": "2021-09-01", "end_date": "2021-09-07"},
}


async def tamu_campus(campus_factory: CampusFactory, **rules: str) -> CampusHarness:
    campus = await campus_factory(
        plugins=FAMILIES,
        demo_mode=False,
        plugin_settings={"catalog": {"banner_file": str(TAMU), "calendar_file": str(CALENDAR), **rules}},
        **TAMU_SETTINGS,
    )
    for job in ("catalog.sections_sync", "catalog.calendar_import"):
        run = await campus.run_job(job)
        assert run.outcome == "ok", (job, run)
    async with campus.sessions() as session:
        await create_local_student(session, "aggie", "a-long-enough-password")
        await session.commit()
    return campus


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


async def everything_a_model_reads(campus: CampusHarness) -> dict[str, str]:
    """What a student's model reads, by where it read it."""
    read: dict[str, str] = {"instructions": campus.instructions()}
    student = await campus.student_principal("aggie")
    async with campus.mcp(principal=student) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            read[f"tools/list {tool.name}"] = _text(tool.model_dump(mode="json"))
        for prompt in (await client.list_prompts()).prompts:
            read[f"prompts/list {prompt.name}"] = _text(prompt.model_dump(mode="json"))
            got = await client.get_prompt(prompt.name, {})
            read[f"prompts/get {prompt.name}"] = _text(got.model_dump(mode="json"))
        for tool in tools:
            if tool.annotations is not None and tool.annotations.read_only_hint is False:
                continue  # a write asks for confirmation; its description is scanned above
            answer: types.CallToolResult = await client.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
            read[f"tools/call {tool.name}"] = _text(answer.model_dump(mode="json"))
    return read


async def test_no_wentworth_word_reaches_a_model_on_another_campus(campus_factory: CampusFactory) -> None:
    campus = await tamu_campus(campus_factory)
    read = await everything_a_model_reads(campus)
    assert {"tools/call get_section", "tools/call check_schedule", "prompts/get plan_term_schedule"} <= set(read)
    found = {where: sorted(set(WIT_WORDS.findall(text))) for where, text in read.items() if WIT_WORDS.search(text)}
    assert found == {}
    # Neutral words instead, and true: the rule is the campus's and no tool knows it.
    instructions = read["instructions"]
    assert "A student's registration time is in the campus's student system" in instructions
    assert "Overrides (from the department that offers the course) are never certain" in instructions
    plan = read["prompts/get plan_term_schedule"]
    assert "check with their academic advisor" in plan
    assert "Overrides come from the department that offers the course." in read["tools/call check_schedule"]


async def test_a_campus_that_sets_its_rules_reads_them_everywhere(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    # No import: a configured calendar offers the catalog's tools, all this test reads.
    calendar = tmp_path / "calendar.ics"
    calendar.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", encoding="utf-8")
    rules = {
        "student_system_name": "Howdy",
        "time_ticket_place": "Howdy, My Record, Registration Time",
        "registration_pin_rule": "students with an advising hold need their advisor to release it",
        "override_office": "the department advisor of the course",
        "waitlist_rule": "A student on a waitlist gets an e-mail when a seat opens and has 24 hours to take it.",
    }
    campus = await campus_factory(
        plugins=["catalog", "schedule", "prompts"],
        demo_mode=False,
        plugin_settings={"catalog": {"calendar_file": str(calendar), **rules}},
        **TAMU_SETTINGS,
    )
    instructions = campus.instructions()
    assert (
        "Each student registers at the time on their time ticket (Howdy, My Record, Registration Time); students "
        "with an advising hold need their advisor to release it. No tool knows these: never guess."
    ) in instructions
    assert "Overrides (from the department advisor of the course)" in instructions
    async with campus.mcp() as client:
        plan = await client.get_prompt("plan_term_schedule", {})
        tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    text = _text(plan.model_dump(mode="json"))
    assert "their time ticket (Howdy, My Record, Registration Time)" in text
    assert "has 24 hours to take it" in text and "has 24 hours to take it" in tools["get_section"]
    assert "read Howdy yourself" in tools["get_section"]
    assert "ask the department advisor of the course" in text
