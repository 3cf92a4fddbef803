"""The campus's own registration rules: one small model, filled from the catalog's settings.

Every rule here is one campus's fact, not the platform's: where a student finds their time
ticket, who needs a PIN to register, who grants overrides, what to do about a full section or an
elective not listed yet. Seed 000 gives Wentworth's, and a Texas A&M student must never read
them (issue 37, point 4). So each is a ``CatalogSettings`` field that is empty unless the campus
sets it; the demo campus (demo mode, no rule set) gets Wentworth's, and any other campus gets a neutral sentence that is true everywhere (the rule is the campus's, no
tool knows it, ask the advisor) or nothing. The catalog's descriptions and instructions, its
answers and the planning prompts all read their sentences from here, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from campus_mcp import Settings

from campus_catalog.catalog_settings import CatalogSettings

# Seed 000, "Registration steps" and "Registration overrides": the demo campus's values.
WENTWORTH_RULES: dict[str, str] = {
    "student_system_name": "LeopardWeb",
    "time_ticket_place": "myWentworth, Prepare for Registration",
    "time_ticket_basis": (
        "completed earned credits, with transfer and graduate credits; credits in progress do not count"
    ),
    "registration_pin_rule": (
        "first-year students, sophomores and students on probation need a RAC from their primary advisor"
    ),
    "override_office": "the dean's office of the school that offers the course",
    "waitlist_rule": "For a full section with a waitlist, the student joins the waitlist before asking for a capacity override.",
    "elective_rule": (
        "A Technical or HSS elective missing from the schedule is not an error: the Registrar adds electives "
        "when the schools send their lists, so the student asks the dean or associate dean of their school."
    ),
    "substitution_approval": "the program director, the dean's office of the school, or both",
}
RULE_FIELDS = tuple(WENTWORTH_RULES)

# What a section's waitlist field means: the platform's, true on every campus.
WAITLIST_DATA = (
    "Waitlists: not every section has one. waitlist 'not loaded here' means it has not been read, capacity 0 means "
    "no waitlist."
)
NEUTRAL_SYSTEM = "the campus's student system"
NEUTRAL_OVERRIDE_OFFICE = "the department that offers the course"


@dataclass(frozen=True)
class CampusRules:
    """The rules one campus set (or the demo campus's); an empty string is a rule not set."""

    student_system_name: str = ""
    time_ticket_place: str = ""
    time_ticket_basis: str = ""
    registration_pin_rule: str = ""
    override_office: str = ""
    waitlist_rule: str = ""
    elective_rule: str = ""
    substitution_approval: str = ""

    @property
    def student_system(self) -> str:
        """The student system by its name, or in neutral words: a sentence reads right either way."""
        return self.student_system_name or NEUTRAL_SYSTEM

    @property
    def overrides_from(self) -> str:
        return self.override_office or NEUTRAL_OVERRIDE_OFFICE

    def time_ticket(self) -> str:
        """Where a student's registration time is, as a clause ("each student registers ...")."""
        if self.time_ticket_place:
            return f"each student registers at the time on their time ticket ({self.time_ticket_place})"
        return f"each student registers at the time the campus gives them, shown in {self.student_system}"

    def registration_short(self) -> str:
        """The instructions' registration rule: only the time ticket and the PIN (seed 000)."""
        if self.registration_pin_rule:
            return (
                f"{_sentence(f'{self.time_ticket()}; {self.registration_pin_rule}')} No tool knows these: never guess."
            )
        return (
            f"A student's registration time is in {self.student_system}; no tool knows it, nor whether they need "
            "an advisor's approval to register: say where to look, never guess."
        )

    def registration_long(self) -> str:
        """Every registration rule the campus set, for a prompt or a description."""
        parts = [_sentence(self.time_ticket())]
        if self.time_ticket_basis:
            parts.append(_sentence(f"The time comes from {self.time_ticket_basis}"))
        if self.registration_pin_rule:
            parts.append(_sentence(self.registration_pin_rule))
        parts.append(
            "No tool knows a student's registration time, class year or standing: give the rule, do not guess."
            if self.registration_pin_rule
            else "No tool knows a student's registration time or standing, nor whether they need an advisor's "
            "approval to register: tell them to check with their academic advisor, do not guess."
        )
        return " ".join(parts)

    def waitlists(self) -> str:
        """What a waitlist field means, then the campus's own waitlist rule when it set one."""
        return f"{WAITLIST_DATA} {self.waitlist_rule}".strip()

    def substitution(self) -> str:
        if self.substitution_approval:
            return (
                f"A substitution or transfer credit for a requirement needs approval from {self.substitution_approval}."
            )
        return (
            "A substitution or transfer credit for a requirement needs the campus's approval: tell the student "
            "to ask their academic advisor."
        )


def _sentence(clause: str) -> str:
    text = clause.strip()
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else f"{text}."


def campus_rules(settings: Settings, catalog: CatalogSettings) -> CampusRules:
    """The campus's rules: what it set; on the demo campus that set none, Wentworth's.

    All or nothing: a campus that names its own student system or override office (even in demo
    mode, trying the server out) must not get half of Wentworth's rules beside its own words.
    """
    values = {name: str(getattr(catalog, name)).strip() for name in RULE_FIELDS}
    if settings.demo and not any(values.values()):
        values = dict(WENTWORTH_RULES)
    return CampusRules(**values)
