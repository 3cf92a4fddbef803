"""Terms and the academic calendar of the demo campus, anchored to today's date.

The only thing in the demo campus that depends on the clock: the terms are placed around today,
so that there is always a past term, a current (or upcoming) term and a next one, and the
calendar's holidays and deadlines fall in them. Everything else comes from a fixed seed.

Banner term codes follow Wentworth's scheme: the academic year in which the term ends, then
``10`` for fall, ``20`` for spring and ``30`` for summer (Fall 2026 is ``202710``).
"""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta


@dataclasses.dataclass(frozen=True)
class DemoTerm:
    uid: str
    name: str
    season: str
    start: date
    end: date
    registration_opens: date
    registration_closes: date

    @property
    def finals_start(self) -> date:
        """Finals week is the last five weekdays of the term."""
        return self.end - timedelta(days=4)


def _monday_on_or_after(day: date) -> date:
    return day + timedelta(days=(7 - day.weekday()) % 7)


def _friday_on_or_before(day: date) -> date:
    return day - timedelta(days=(day.weekday() - 4) % 7)


def _term(season: str, year: int) -> DemoTerm:
    if season == "Fall":
        start, end, uid = date(year, 9, 3), date(year, 12, 18), f"{year + 1}10"
    elif season == "Spring":
        start, end, uid = date(year, 1, 12), date(year, 4, 30), f"{year}20"
    else:
        start, end, uid = date(year, 5, 11), date(year, 8, 14), f"{year}30"
    start = _monday_on_or_after(start)
    end = _friday_on_or_before(end)
    return DemoTerm(
        uid=uid,
        name=f"{season} {year}",
        season=season,
        start=start,
        end=end,
        registration_opens=start - timedelta(weeks=10),
        registration_closes=start + timedelta(days=7),
    )


def terms_around(today: date) -> list[DemoTerm]:
    """Five terms: two past, the current (or next to start), the one after, and one more
    without sections (as ``EnsureFutureTerms`` makes before Banner lists a term)."""
    terms = sorted(
        (
            _term(season, year)
            for year in range(today.year - 2, today.year + 3)
            for season in ("Spring", "Summer", "Fall")
        ),
        key=lambda t: t.start,
    )
    current = next(i for i, t in enumerate(terms) if t.end >= today)
    return terms[current - 2 : current + 3]


def terms_before(term: DemoTerm, count: int) -> list[DemoTerm]:
    """The ``count`` terms just before ``term``, newest first (the older part of a student's history)."""
    season = {"Spring": 0, "Summer": 1, "Fall": 2}[term.season]
    order = term.start.year * 3 + season
    return [_term(("Spring", "Summer", "Fall")[(order - n) % 3], (order - n) // 3) for n in range(1, count + 1)]


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    first = date(year, month, 1)
    day = first + timedelta(days=(weekday - first.weekday()) % 7)
    return day + timedelta(weeks=n - 1)


def _last_weekday(year: int, month: int, weekday: int) -> date:
    last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


@dataclasses.dataclass(frozen=True)
class DemoEvent:
    uid: str
    title: str
    start: date
    end: date
    category: str
    description: str | None = None


def holidays(year: int) -> list[tuple[str, date, date]]:
    """US and Massachusetts holidays the campus closes for, with the breaks."""
    thanksgiving = _nth_weekday(year, 11, 3, 4)
    spring_break = _nth_weekday(year, 3, 0, 2)
    return [
        ("Martin Luther King Jr. Day (no classes)", _nth_weekday(year, 1, 0, 3), _nth_weekday(year, 1, 0, 3)),
        ("Presidents' Day (no classes)", _nth_weekday(year, 2, 0, 3), _nth_weekday(year, 2, 0, 3)),
        ("Spring Break (no classes)", spring_break, spring_break + timedelta(days=4)),
        ("Patriots' Day (no classes)", _nth_weekday(year, 4, 0, 3), _nth_weekday(year, 4, 0, 3)),
        ("Memorial Day (no classes)", _last_weekday(year, 5, 0), _last_weekday(year, 5, 0)),
        ("Juneteenth (no classes)", date(year, 6, 19), date(year, 6, 19)),
        ("Independence Day (no classes)", date(year, 7, 4), date(year, 7, 4)),
        ("Labor Day (no classes)", _nth_weekday(year, 9, 0, 1), _nth_weekday(year, 9, 0, 1)),
        ("Indigenous Peoples' Day (no classes)", _nth_weekday(year, 10, 0, 2), _nth_weekday(year, 10, 0, 2)),
        ("Veterans Day (no classes)", date(year, 11, 11), date(year, 11, 11)),
        ("Thanksgiving Break (no classes)", thanksgiving - timedelta(days=1), thanksgiving + timedelta(days=2)),
    ]


REGISTRATION_NOTE = (
    "Each student registers at the time on their time ticket (myWentworth, Prepare for Registration). "
    "The time comes from completed earned credits, with transfer and graduate credits; credits in "
    "progress do not count. First-year students, sophomores and students on academic probation need "
    "a Registration Alternate PIN (RAC) from their primary advisor."
)


def calendar_events(terms: list[DemoTerm]) -> list[DemoEvent]:
    """The academic calendar of the given terms: dates, deadlines, holidays and finals."""
    events: list[DemoEvent] = []
    for term in terms:
        key = term.uid
        events += [
            DemoEvent(f"{key}-begin", f"{term.name} classes begin", term.start, term.start, "term"),
            DemoEvent(
                f"{key}-add-drop",
                f"{term.name} last day to add or drop a class",
                term.start + timedelta(days=7),
                term.start + timedelta(days=7),
                "deadline",
                "After this day a dropped class shows as a W on the transcript.",
            ),
            DemoEvent(
                f"{key}-withdraw",
                f"{term.name} last day to withdraw from a class",
                term.start + timedelta(weeks=10),
                term.start + timedelta(weeks=10),
                "deadline",
            ),
            DemoEvent(
                f"{key}-registration",
                f"Registration opens for {term.name}",
                term.registration_opens,
                term.registration_opens,
                "registration",
                REGISTRATION_NOTE,
            ),
            DemoEvent(
                f"{key}-last-day",
                f"{term.name} last day of classes",
                term.finals_start - timedelta(days=3),
                term.finals_start - timedelta(days=3),
                "term",
            ),
            DemoEvent(f"{key}-finals", f"{term.name} final exams week", term.finals_start, term.end, "finals"),
            DemoEvent(
                f"{key}-grades",
                f"{term.name} final grades due",
                term.end + timedelta(days=4),
                term.end + timedelta(days=4),
                "deadline",
            ),
        ]
    first, last = min(t.start for t in terms), max(t.end for t in terms)
    for year in range(first.year, last.year + 1):
        for title, start, end in holidays(year):
            if first <= start <= last:
                events.append(DemoEvent(f"holiday-{start.isoformat()}", title, start, end, "holiday"))
    return sorted(events, key=lambda e: (e.start, e.uid))
