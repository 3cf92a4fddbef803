"""The four planning prompts of seed 000: one user message each, naming the tools in order.

Each message is: what the student asked for (their arguments, quoted), the term to use, the
steps with the tools to call, the rules (overrides; registration for a term plan), and the ask
rule, the permission rule and the advisor message. A prompt reads no student data: the model's
tool calls read it, with the token's scopes. The term arguments complete with the catalog's
``term`` completer, ``subject`` and ``courses`` with its own (``PromptArgument.completer``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date

from campus_catalog.api import CampusRules, CatalogSettings, all_terms, campus_rules, campus_today
from campus_mcp import Prompt, PromptArgument, Settings, ToolContext

from campus_prompts.rules import closing, given, override_rules, quoted, registration_rules
from campus_prompts.terms import TermDates, check_term_line, planning_term_line

TERM = PromptArgument(name="term", description="A term uid (202710) or name (Spring 2027). Optional.", completer="term")
COURSES = PromptArgument(
    name="courses",
    description="Course codes separated by commas, semicolons or new lines: COMP 2350, MATH 1750. Optional.",
    completer="courses",
)
SUBJECT = PromptArgument(name="subject", description="A subject code such as COMP. Optional.", completer="subject")

# Tests replace it to fix the campus date; the prompts call it once per prompts/get.
today_on_campus: Callable[[str], date] = campus_today

Steps = Callable[[Mapping[str, str], str, CampusRules], str]


def _term_line(args: Mapping[str, str], default: str) -> str:
    if "term" in args:
        return f"Term: {quoted(args['term'])} (the student's words); find its uid with list_terms."
    return default


def plan_term_schedule(args: Mapping[str, str], term: str, rules: CampusRules) -> str:
    return "\n".join(
        [
            "Plan my courses for one term.",
            term,
            given(args, "courses", "Courses I want"),
            given(args, "preferences", "My preferences"),
            "Steps:",
            "1. list_terms for the term uid.",
            "2. my_courses for what I already take in that term.",
            "3. my_course_history for the courses I have taken.",
            "4. get_course for the prerequisites and corequisites of each course; ask me about any grade a "
            "prerequisite needs.",
            "5. search_sections for each course, with my preferences as filters (days, free days, begins "
            "after, ends before, campus).",
            "6. check_schedule on the CRNs of each option; change sections until the option has no conflicts.",
            "Give one to three options, each with its CRNs, then the registration rules below.",
            override_rules(rules.overrides_from),
            registration_rules(rules),
        ]
    )


def check_my_schedule(args: Mapping[str, str], term: str, rules: CampusRules) -> str:
    return "\n".join(
        [
            "Check my schedule for one term.",
            term,
            "Steps:",
            "1. my_courses for my courses in the term and their CRNs.",
            "2. check_schedule on those CRNs, for time conflicts and restrictions.",
            "3. get_course for each course, for corequisites I do not take in the same term.",
            "4. my_finals for final exams at the same time.",
            "Tell me each problem with the course and what to do about it.",
            override_rules(rules.overrides_from),
        ]
    )


def plan_degree_progression(args: Mapping[str, str], term: str, rules: CampusRules) -> str:
    return "\n".join(
        [
            "Plan each of my terms until graduation.",
            given(args, "program", "My program"),
            given(args, "catalog_year", "My catalog year"),
            given(args, "graduation_term", "When I want to graduate"),
            "The tools do not read my own programs, so ask me for the program and the catalog year if they are "
            "not given. The catalog has no data before 2019-2020: for an older catalog year, ask me for the "
            "list of required courses from my degree audit or my program page.",
            "Steps:",
            "1. my_course_history for the courses I have taken.",
            "2. list_programs for the program, then degree_requirements for its required courses.",
            "3. get_course for the prerequisites, corequisites and the terms each course is usually offered.",
            "Place each remaining course in a term, then list the risks: a course offered once a year, a long "
            "prerequisite chain, a heavy term. Some prerequisites need a minimum grade: my_course_history has "
            "no grades, so ask me for them.",
            rules.substitution(),
            override_rules(rules.overrides_from),
        ]
    )


def find_class_for_free_time(args: Mapping[str, str], term: str, rules: CampusRules) -> str:
    return "\n".join(
        [
            "Find a class that fits my free time.",
            term,
            given(args, "subject", "Subject"),
            given(args, "days", "Days I am free"),
            given(args, "times", "Times I am free"),
            "Steps:",
            "1. my_busy_times for the weeks of the term, for when I am busy.",
            "2. search_sections in the term with time filters (days, begins after, ends before) that avoid "
            "those times, and the subject if given.",
            "3. check_schedule on my CRNs with each section you suggest, so it has no conflicts.",
            "Give the sections with their CRNs, days and times.",
            override_rules(rules.overrides_from),
        ]
    )


def _prompt(
    name: str,
    title: str,
    description: str,
    arguments: tuple[PromptArgument, ...],
    steps: Steps,
    default_term: Callable[[list[TermDates], date], str] | None,
    tools: tuple[str, ...],
) -> Prompt:
    async def render(context: ToolContext, args: Mapping[str, str]) -> str:
        settings: Settings = context.settings
        catalog = context.plugin_settings_of("catalog")
        assert isinstance(catalog, CatalogSettings)  # the prompts depend on the catalog (PluginInfo)
        term = ""
        if default_term is not None:
            async with context.session() as session:
                rows = await all_terms(session)
            known = [TermDates(t.uid, t.name, t.start_date, t.end_date) for t in rows]
            term = _term_line(args, default_term(known, today_on_campus(settings.timezone)))
        return f"{steps(args, term, campus_rules(settings, catalog))}\n\n{closing(settings)}"

    # ``tools``: every tool its text names; the host lists the prompt only while each is listed.
    return Prompt(
        name=name, title=title, description=description, arguments=arguments, render_in_context=render, tools=tools
    )


def _arg(name: str, description: str) -> PromptArgument:
    return PromptArgument(name=name, description=description)


def planning_prompts(settings: Settings) -> list[Prompt]:
    campus = settings.campus_short_name
    return [
        _prompt(
            "plan_term_schedule",
            "Plan a term schedule",
            f"Plans one {campus} term: the courses you want, their prerequisites, sections that fit your "
            "preferences, and one to three options with CRNs and no conflicts.",
            (TERM, COURSES, _arg("preferences", "Days, times or other wishes, in your words. Optional.")),
            plan_term_schedule,
            planning_term_line,
            ("list_terms", "my_courses", "my_course_history", "get_course", "search_sections", "check_schedule"),
        ),
        _prompt(
            "check_my_schedule",
            "Check my schedule",
            f"Checks your {campus} courses in a term for time conflicts, missing corequisites and finals at the "
            "same time.",
            (TERM,),
            check_my_schedule,
            check_term_line,
            ("list_terms", "my_courses", "check_schedule", "get_course", "my_finals"),
        ),
        _prompt(
            "plan_degree_progression",
            "Plan my degree",
            f"Plans each {campus} term until graduation from your program's requirements and the courses you "
            "took, and lists the risks.",
            (
                _arg("program", "Your program, such as Computer Science. Optional."),
                _arg("catalog_year", "Your catalog year, such as 2024-2025. Optional."),
                PromptArgument(
                    name="graduation_term",
                    description="The term you want to graduate in. Optional.",
                    completer="term",
                ),
            ),
            plan_degree_progression,
            None,
            ("my_course_history", "list_programs", "degree_requirements", "get_course", "check_schedule"),
        ),
        _prompt(
            "find_class_for_free_time",
            "Find a class for my free time",
            f"Finds {campus} sections that fit your free time in a term, without conflicts.",
            (
                TERM,
                SUBJECT,
                _arg("days", "Days you are free, such as MWF or Tuesday, Thursday. Optional."),
                _arg("times", "Times you are free, such as after 1 PM. Optional."),
            ),
            find_class_for_free_time,
            planning_term_line,
            ("list_terms", "my_busy_times", "search_sections", "check_schedule"),
        ),
    ]
