"""The enrollment feed from campus IT: a CSV of (student, term, CRN), and optionally a fourth
column, the student's name; the student is named by campus student id, username or email.

With a campus sign-in (OpenID Connect, SAML or CAS: ``Settings.campus_sign_in``), the first column
is the campus student id, and a student the campus does not know yet is created with that id and no
way in (``student_for_feed``): the nightly feed refuses nobody who is enrolled, and the student's
first sign-in attaches to the record, rows included. Without one, an unknown student is refused as
before (local accounts are made by an administrator). The name column names a student of the
campus sign-in who has no name yet (``name_feed_students``): other students (friends) see that
name, never the campus id, and the sign-in's own name claim or attribute replaces it at sign-in.

With a campus sign-in, the first column is also checked as a sign-in's id is
(``campus_mcp.campus_id_problem``): it must match ``CAMPUS_MCP_CAMPUS_ID_PATTERN``, and control,
invisible and look-alike characters are refused whatever the pattern allows, so the feed cannot
create a student no sign-in could ever be, nor one whose id passes for another's. Only spaces and
tabs around it are the CSV's (``S1001, 202710``); anything else is part of the id.

Idempotent: a second run of the same file changes no row. A row the campus cannot place is
counted and listed by kind (invalid student id, unknown student, unknown term, unknown CRN, a CRN
of another term, cancelled section, malformed row), never dropped in silence; what a listed row
repeats of the file is escaped (``campus_mcp.escaped``), so a control character in it cannot
rewrite the administrator's terminal. Rows only add: a student's feed sections of a term are
taken away only for a term the feed calls complete, because a partial file must not wipe
schedules. A term is complete when the caller says so (``--complete-term``), or when the file
has a row ``*,<term>,COMPLETE``. A term called complete with no row of the file placing a section
in it is refused (``complete_term_without_rows``) and loses nothing: a broken export that kept only
its mark row must not empty the term. The student's own additions (source "student") are never removed.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections import Counter, defaultdict
from collections.abc import Iterable

from campus_catalog.models import Section, Term
from campus_mcp import campus_id_problem, count_import_failures, escaped, name_feed_students, student_for_feed
from sqlalchemy import delete, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule.models import Enrollment

COMPLETE_MARK = "COMPLETE"
KINDS = (
    "invalid_student_id",
    "unknown_student",
    "unknown_term",
    "unknown_crn",
    "crn_in_another_term",
    "cancelled_section",
    "malformed_row",
    "complete_term_without_rows",
)
# How many refused rows a run lists by line; the counts cover all of them.
LISTED_PER_KIND = 20


@dataclasses.dataclass
class FeedResult:
    rows: int = 0
    added: int = 0
    removed: int = 0
    unchanged: int = 0
    students_created: int = 0
    students_named: int = 0
    refused: Counter[str] = dataclasses.field(default_factory=Counter)
    examples: dict[str, list[str]] = dataclasses.field(default_factory=lambda: defaultdict(list))
    complete_terms: set[str] = dataclasses.field(default_factory=set)

    def refuse(self, kind: str, line: int | str, what: str) -> None:
        """Count a refused row; ``line`` is its line in the file, or where else it came from."""
        self.refused[kind] += 1
        if len(self.examples[kind]) < LISTED_PER_KIND:
            where = f"line {line}" if isinstance(line, int) else line
            self.examples[kind].append(f"{where}: {escaped(what, limit=None)}")

    @property
    def summary(self) -> str:
        refused = ", ".join(f"{self.refused[k]} {k.replace('_', ' ')}" for k in KINDS if self.refused[k])
        return (
            (
                f"{self.rows} row(s): {self.added} added, {self.unchanged} already there, {self.removed} removed "
                f"(complete terms: {', '.join(sorted(self.complete_terms)) or 'none'}); "
                f"refused: {refused or 'none'}"
            )
            + (f"; {self.students_created} student(s) not signed in yet created" if self.students_created else "")
            + (f"; {self.students_named} student(s) named from the name column" if self.students_named else "")
        )

    def lost(self) -> dict[str, str]:
        """The refused rows by kind, for the run record (``JobOutcome.lost``)."""
        lost: dict[str, str] = {}
        for kind in KINDS:
            if self.refused[kind]:
                shown = "; ".join(self.examples[kind])
                more = self.refused[kind] - len(self.examples[kind])
                lost[kind] = f"{self.refused[kind]} row(s): {shown}" + (f"; and {more} more" if more > 0 else "")
        return lost


def _rows(content: str) -> Iterable[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(content))
    for number, row in enumerate(reader, start=1):
        # The student column keeps all but the CSV's spaces and tabs: a campus id is taken whole.
        cells = [cell.strip(" \t") if index == 0 else cell.strip() for index, cell in enumerate(row)]
        if not any(cells):
            continue
        if number == 1 and cells and cells[0].lower() in ("student", "username", "email", "user", "campus_id"):
            continue  # a header row
        yield number, cells


async def import_enrollments(
    session: AsyncSession,
    content: str,
    *,
    complete_terms: Iterable[str] = (),
    create_students: bool = False,
    campus_id_pattern: str | None = None,
) -> FeedResult:
    """Apply one feed file. Commits once at the end, so a failure leaves nothing half-written.
    ``create_students``: an unknown student is a campus id to create (the campus signs in with its
    own sign-in), not a refused row; each campus id (a student column without ``@``) is then checked
    against ``campus_id_pattern`` (the setting; None: its default) and the characters no id holds."""
    result = FeedResult()
    students: dict[str, int] = {}
    for student_id, username, email, campus_id in await session.execute(
        text("SELECT id, username, email, campus_id FROM students")
    ):
        if campus_id:
            students[str(campus_id).lower()] = int(student_id)
        students.setdefault(str(username).lower(), int(student_id))
        if email:
            students.setdefault(str(email).lower(), int(student_id))
    terms = {t.uid: t for t in (await session.scalars(select(Term))).all()}
    # Each term called complete -> where it was called so (its mark row's line, or the option).
    called_complete: dict[str, int | str] = {}
    for term_uid in complete_terms:
        # A mistyped term would otherwise be "complete" and nothing would say it matched no term.
        if term_uid in terms:
            result.complete_terms.add(term_uid)
            called_complete.setdefault(term_uid, f"--complete-term {term_uid}")
        else:
            result.refuse("unknown_term", f"--complete-term {term_uid}", "no such term")
    # (student, term) -> CRN -> the first line that lists it, so a refused CRN is named by its line.
    wanted: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)
    names: dict[int, str] = {}  # student -> the first name the name column gives them
    for line, cells in _rows(content):
        result.rows += 1
        if len(cells) not in (3, 4) or not all(cells[:3]):
            result.refuse("malformed_row", line, "expected 3 columns: student, term, CRN (and a 4th, a name)")
            continue
        who, term_uid, crn = cells[:3]
        if who == "*" and crn.upper() == COMPLETE_MARK:
            result.rows -= 1
            if term_uid in terms:
                result.complete_terms.add(term_uid)
                called_complete.setdefault(term_uid, line)
            else:
                result.refuse("unknown_term", line, f"term {term_uid} marked complete")
            continue
        if create_students and "@" not in who:
            problem = campus_id_problem(who, campus_id_pattern) if campus_id_pattern else campus_id_problem(who)
            if problem:
                # The problem names a character by its code point; the id itself is not repeated.
                result.refuse("invalid_student_id", line, f"the student id {problem}")
                continue
        if term_uid not in terms:
            result.refuse("unknown_term", line, f"term {term_uid}")
            continue
        student = students.get(who.lower())
        if student is None and create_students and "@" not in who:
            student = students[who.lower()] = await student_for_feed(session, who)
            result.students_created += 1
        if student is None:
            # The username itself is not listed: it is a person's identifier.
            result.refuse("unknown_student", line, "no student with that campus id, username or email")
            continue
        if len(cells) == 4 and cells[3]:
            names.setdefault(student, cells[3])
        wanted[(student, term_uid)].setdefault(crn, line)
    needed = {(terms[t].id, crn) for (_s, t), crns in wanted.items() for crn in crns}
    sections: dict[tuple[int, str], tuple[int, bool]] = {}
    pairs = sorted(needed)
    for start in range(0, len(pairs), 500):
        chunk = pairs[start : start + 500]
        rows = await session.execute(
            select(Section.term_id, Section.crn, Section.id, Section.cancelled).where(
                tuple_(Section.term_id, Section.crn).in_(chunk)
            )
        )
        for term_id, crn, section_id, cancelled in rows:
            sections[(term_id, crn)] = (section_id, bool(cancelled))
    elsewhere = await _terms_of_crns(session, {crn for (t, crn) in needed if (t, crn) not in sections})
    existing: dict[tuple[int, str], dict[int, str]] = defaultdict(dict)  # (student, term) -> section -> source
    student_ids = sorted({s for s, _t in wanted} | set())
    for start in range(0, len(student_ids), 500):
        chunk_ids = student_ids[start : start + 500]
        for student_id, term_uid, section_id, source in await session.execute(
            select(Enrollment.student_id, Enrollment.term_uid, Enrollment.section_id, Enrollment.source).where(
                Enrollment.student_id.in_(chunk_ids)
            )
        ):
            existing[(student_id, term_uid)][section_id] = source
    to_add: list[dict[str, object]] = []
    keep: dict[tuple[int, str], set[int]] = defaultdict(set)
    for (student, term_uid), crns in wanted.items():
        term_id = terms[term_uid].id
        have = existing.get((student, term_uid), {})
        for crn, line in sorted(crns.items()):
            found = sections.get((term_id, crn))
            if found is None:
                if elsewhere.get(crn):
                    result.refuse(
                        "crn_in_another_term",
                        line,
                        f"CRN {crn} is not in term {term_uid}; it is a section of {', '.join(elsewhere[crn])}",
                    )
                else:
                    result.refuse("unknown_crn", line, f"no section with CRN {crn} in term {term_uid}")
                continue
            section_id, cancelled = found
            if cancelled:
                result.refuse("cancelled_section", line, f"CRN {crn} in term {term_uid} is cancelled")
                continue
            keep[(student, term_uid)].add(section_id)
            if section_id in have:
                result.unchanged += 1
            else:
                to_add.append(
                    {
                        "student_id": student,
                        "term_uid": term_uid,
                        "section_id": section_id,
                        "crn": crn,
                        "source": "feed",
                    }
                )
    if to_add:
        await session.execute(Enrollment.__table__.insert(), to_add)  # type: ignore[attr-defined]
        result.added = len(to_add)
    _refuse_complete_without_rows(result, called_complete, keep)
    await _remove_vanished(session, result, keep)
    if names:
        result.students_named = await name_feed_students(session, names)
    await session.commit()
    count_import_failures("enrollment_feed", result.refused)  # on /metrics, by kind
    return result


async def _terms_of_crns(session: AsyncSession, crns: set[str]) -> dict[str, list[str]]:
    """The terms that do have a section with each CRN: "not in this term" says more than "unknown"."""
    found: dict[str, list[str]] = defaultdict(list)
    listed = sorted(crns)
    for start in range(0, len(listed), 500):
        rows = await session.execute(
            select(Section.crn, Term.uid)
            .join(Term, Term.id == Section.term_id)
            .where(Section.crn.in_(listed[start : start + 500]))
            .order_by(Term.uid)
        )
        for crn, term_uid in rows:
            found[crn].append(term_uid)
    return found


def _refuse_complete_without_rows(
    result: FeedResult, called_complete: dict[str, int | str], keep: dict[tuple[int, str], set[int]]
) -> None:
    """A complete term needs at least one placed row: without one, "complete" would remove it all."""
    placed = {term_uid for (_student, term_uid), section_ids in keep.items() if section_ids}
    for term_uid, where in sorted(called_complete.items()):
        if term_uid in placed:
            continue
        result.complete_terms.discard(term_uid)
        result.refuse(
            "complete_term_without_rows",
            where,
            f"term {term_uid} is called complete but no row of the file places a section in it, so nothing "
            "of it was removed; check that the export is whole, then run it again",
        )


async def _remove_vanished(session: AsyncSession, result: FeedResult, keep: dict[tuple[int, str], set[int]]) -> None:
    """In a complete term, a feed section that is no longer in the feed goes; nothing else does."""
    for term_uid in sorted(result.complete_terms):
        rows = await session.execute(
            select(Enrollment.id, Enrollment.student_id, Enrollment.section_id).where(
                Enrollment.term_uid == term_uid, Enrollment.source == "feed"
            )
        )
        gone = [row_id for row_id, student, section in rows if section not in keep.get((student, term_uid), set())]
        for start in range(0, len(gone), 500):
            await session.execute(delete(Enrollment).where(Enrollment.id.in_(gone[start : start + 500])))
        result.removed += len(gone)
