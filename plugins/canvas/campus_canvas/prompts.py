"""``plan_my_week``: what is due in Canvas, joined with the student's classes, finals and busy times,
in at most 4 tool calls ("what's due this week, and when can I work on it?").

The prompt reads no student data itself (the model's calls do, with the token's scopes); it fixes
the week in campus dates, so every call asks for the same days, and names only tools this campus
offers: without the schedule family it asks the student for their busy times instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta

from campus_mcp import Prompt, PromptArgument, ToolContext

from campus_canvas.service import campus_today

WEEK = PromptArgument(
    name="week",
    description="this (default: today and the 6 days after), next (next Monday to Sunday), or a day of the week wanted (YYYY-MM-DD).",
)


def week_of(wanted: str, today: date) -> tuple[date, date]:
    words = wanted.strip().lower()
    if words in ("", "this", "this week"):
        return today, today + timedelta(days=6)
    if words in ("next", "next week"):
        monday = today + timedelta(days=7 - today.weekday())
        return monday, monday + timedelta(days=6)
    try:
        day = date.fromisoformat(words)
    except ValueError:
        return today, today + timedelta(days=6)
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


async def render_plan_my_week(context: ToolContext, args: Mapping[str, str]) -> str:
    first, last = week_of(args.get("week", ""), campus_today(context.settings))
    days = f"start_date={first.isoformat()}, end_date={last.isoformat()}"
    has_schedule = "my_busy_times" in context.registry.tools
    lines = [
        f"Plan my week: {first:%A, %B} {first.day} to {last:%A, %B} {last.day} ({context.settings.timezone} time).",
        "Use at most 4 tool calls:",
        f"1. canvas_due_work with {days}: what is due and whether I handed it in.",
    ]
    if has_schedule:
        lines.append(f"2. my_busy_times with {days}: my classes, finals and meetings.")
    else:
        lines.append("2. (No schedule tool here: ask me when I have classes and other commitments.)")
    lines += [
        "3. canvas_missing_work, only if I may have overdue work to fit in too.",
        "4. canvas_course_assignments for one course, only if I need the instructions of a big assignment.",
        "Then give me the week day by day: my classes and exams, what is due (with its due time), and free "
        "blocks before each due time to do the work, more time for more points; missing and late work first, "
        "then the soonest due. Do not invent due dates or classes. If the answer says my Canvas is not "
        "connected, give me its link and plan with my schedule only.",
        "Ask me for any fact no tool gives (how long a piece of work takes me, my other commitments); do not "
        "guess it. If a tool answers that it needs a permission, tell me what its message says about adding it, "
        "and go on with the tools you have.",
        "",
        context.settings.advisor_text,
    ]
    return "\n".join(lines)


PLAN_MY_WEEK = Prompt(
    name="plan_my_week",
    title="Plan my week",
    description=(
        "What is due this week in Canvas, and when to do it around my classes, finals and busy times "
        "(at most 4 tool calls)."
    ),
    arguments=(WEEK,),
    render_in_context=render_plan_my_week,
)
