"""A planning prompt followed as a model follows it (issue 38, point 3): the prompt's steps read
in order, each tool a step names called once with the arguments its words give, so a script can
count the calls and the bytes of their results that lead to a plan.

It stands in for the model, literally: a step names tools; a tool that takes several courses at
once (``courses``) gets them in one call, otherwise one call per course; the CRNs of the
student's own sections (``my_courses``) go wherever a tool takes them; ``check_schedule`` gets
those with the first section found for each course. The student's preferences reach
``search_sections`` as the filters the student's words mean (``TypicalRequest.filters``).
``bench/context_size.py`` prints the figures and plugins/prompts/tests/test_planning_calls.py holds
the goal.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date, timedelta
from typing import Any

from mcp import Client

from campus_mcp.mcp.context_size import answer_bytes
from campus_mcp.plugin.principal import Principal, current_principal


@dataclasses.dataclass(frozen=True)
class TypicalRequest:
    prompt: str
    arguments: dict[str, str]
    # What a model makes of the student's words: the courses, and the preferences as filters.
    courses: tuple[str, ...] = ()
    filters: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def words(self) -> str:
        return "; ".join(f"{key}: {value}" for key, value in self.arguments.items())


# On the demo campus (student1 takes four sections in the next fall or spring term).
TYPICAL_REQUESTS = (
    TypicalRequest(
        "plan_term_schedule",
        {"courses": "COMP 1050, PHYS 1750", "preferences": "No classes on Friday, nothing before 10 AM"},
        courses=("COMP 1050", "PHYS 1750"),
        filters={"free_days": "F", "begins_after": "10:00"},
    ),
    TypicalRequest(
        "find_class_for_free_time",
        {"subject": "BIOL", "days": "Tuesday, Thursday", "times": "after 1 PM"},
        filters={"subject": "BIOL", "days": "TR", "begins_after": "13:00"},
    ),
)


@dataclasses.dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]
    bytes: int
    error: bool


@dataclasses.dataclass
class Run:
    prompt: str
    request: str
    calls: list[Call] = dataclasses.field(default_factory=list)

    @property
    def result_bytes(self) -> int:
        return sum(call.bytes for call in self.calls)


def steps(text: str) -> list[str]:
    """The numbered lines after 'Steps:'."""
    after = text.split("Steps:", 1)[1] if "Steps:" in text else ""
    return [line for line in after.splitlines() if re.match(r"\s*\d+\.", line)]


def named_tools(step: str, tools: set[str]) -> list[str]:
    return [word for word in re.findall(r"[a-z][a-z_]+", step) if word in tools]


async def follow(server: Any, student: Principal, request: TypicalRequest) -> Run:
    """Get ``request.prompt`` as ``student`` and call what its steps name, in order."""
    run = Run(request.prompt, request.words)
    token = current_principal.set(student)
    try:
        async with Client(server, mode="legacy") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            prompt = await client.get_prompt(request.prompt, request.arguments)
            text = "\n".join(getattr(m.content, "text", "") for m in prompt.messages)
            found = re.search(r"\((\d{6})\)", text)
            term = found.group(1) if found else None
            mine: list[str] = []
            picked: list[str] = []
            term_start: date | None = None

            async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                run.calls.append(Call(tool, arguments, answer_bytes(result), bool(result.is_error)))
                return result.structured_content or {}

            for step in steps(text):
                for tool in named_tools(step, set(tools)):
                    accepts = set(tools[tool].input_schema.get("properties", {}))
                    if tool == "list_terms":
                        answer = await call(tool, {})
                        for item in answer.get("terms", []):
                            if item.get("uid") == term:
                                term_start = date.fromisoformat(item["start_date"])
                    elif tool == "my_courses":
                        answer = await call(tool, {"term": term} if term else {})
                        mine = [course["crn"] for course in answer.get("courses", []) if not course.get("cancelled")]
                    elif tool == "my_busy_times":
                        if term_start is None:  # the dates of the term: the model asks
                            answer = await call("list_terms", {})
                            starts = [t["start_date"] for t in answer.get("terms", []) if t.get("uid") == term]
                            term_start = date.fromisoformat(starts[0]) if starts else date.today()
                        # One week of the term: its weekly pattern (the least a model would read).
                        week = {
                            "start_date": term_start.isoformat(),
                            "end_date": (term_start + timedelta(days=6)).isoformat(),
                        }
                        await call(tool, week)
                    elif tool == "get_course":
                        for code in request.courses:
                            await call(tool, {"code": code})
                    elif tool == "search_sections":
                        base: dict[str, Any] = {"term": term, **request.filters}
                        if "avoid_crns" in accepts and mine:
                            base["avoid_crns"] = mine
                        if not request.courses:
                            answer = await call(tool, base)
                            picked += [s["crn"] for s in answer.get("sections", [])[:1]]
                        elif "courses" in accepts:
                            answer = await call(tool, {**base, "courses": list(request.courses)})
                            for code in request.courses:
                                picked += [s["crn"] for s in answer.get("sections", []) if s["course_code"] == code][:1]
                        else:
                            for code in request.courses:
                                subject, number = code.split()
                                answer = await call(tool, {**base, "subject": subject, "course_number": number})
                                picked += [s["crn"] for s in answer.get("sections", [])[:1]]
                    elif tool == "check_schedule":
                        await call(tool, {"term": term, "crns": [*mine, *picked]})
                    else:
                        await call(tool, {})
    finally:
        current_principal.reset(token)
    return run
