"""Students: who can sign in, and how.

Three kinds of account, one table:

- local accounts with a password hashed by argon2id (memory-hard, so a stolen table is slow to
  crack); hashing runs in a worker thread because one hash takes tens of milliseconds of CPU;
- demo students (``student1`` .. ``studentN``) of the demo campus. They have no stored hash: their
  password is the setting ``CAMPUS_MCP_DEMO_PASSWORD`` (default ``demo``), and they are refused
  outright when the deployment is not in demo mode, so a demo database promoted to production
  cannot be entered with a published password;
- students of the campus sign-in (OpenID Connect, SAML or CAS), known by issuer and subject, with
  no password here at all. Each carries the campus student id (``campus_id``, the provider's
  mapped claim), which the enrollment feed names them by. The feed creates a student it does not
  know yet with that id and no way in (no issuer, no password); the first sign-in with the same id
  attaches the provider's account to it, so rows imported before then are theirs.

A campus id (a student number) is never a student's name: the name comes from the sign-in's name
claim or attribute, or the feed's name column, and a student with neither is shown as
``untrusted.UNNAMED_STUDENT`` (``untrusted.shown_name``), to themselves and to other students.

A disabled student cannot sign in in any way (``disable`` also ends what they hold already).

Every sign-in attempt pays exactly one argon2 verification, whichever kind of account it names
and whether or not the name exists, so response times do not tell which usernames exist.

A student's ``session_generation`` is written into each browser session at sign-in; sign-out and a
password change move it on, which ends every session signed with the old value (a copied cookie
included).

Invariant: no function here logs or returns a password or a hash.
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Mapping
from datetime import datetime

import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import Boolean, Integer, String, UniqueConstraint, false, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from campus_mcp.contributions import DemoData
from campus_mcp.db import Base, UTCDateTime, utcnow
from campus_mcp.settings import Settings
from campus_mcp.untrusted import STUDENT_NAME_LENGTH, clean_student_text, shown_name

# Module-level so that a test can count the verifications (the step a timing attack would see).
password_hasher = PasswordHasher()


@functools.cache
def dummy_hash() -> str:
    """Verified against when no stored hash decides (unknown username, demo student, no
    password), so that every attempt costs the same. Made on first use: one hash takes a good
    fraction of a second, too much for every import."""
    return password_hasher.hash("campus-mcp: no such student")


DEMO_PREFIX = "student"


class Student(Base):
    __tablename__ = "students"
    __table_args__ = (UniqueConstraint("oidc_issuer", "oidc_subject", name="uq_students_oidc"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(150), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False)
    oidc_issuer: Mapped[str | None] = mapped_column(String(500), nullable=True)
    oidc_subject: Mapped[str | None] = mapped_column(String(255), nullable=True)
    campus_id: Mapped[str | None] = mapped_column(String(150), nullable=True, unique=True, index=True)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Moved on by sign-out and a password change; a session signed with another value is refused.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


async def hash_password(password: str) -> str:
    return await anyio.to_thread.run_sync(password_hasher.hash, password)


async def _verify(stored_hash: str, password: str) -> bool:
    def check() -> bool:
        try:
            return password_hasher.verify(stored_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    return await anyio.to_thread.run_sync(check)


async def authenticate(session: AsyncSession, settings: Settings, username: str, password: str) -> Student | None:
    """The student these credentials belong to, or None. Same cost whether or not the name exists."""
    student = await student_by_username(session, username.strip().lower())
    if student is not None and student.disabled:
        student = None  # still pays for the verification below, as an unknown name does
    stored = student.password_hash if student is not None and not student.is_demo and password else None
    if stored is not None:
        return student if await _verify(stored, password) else None
    # No stored hash decides (unknown name, no password, a demo or identity-provider account):
    # pay for one verification all the same.
    await _verify(dummy_hash(), password or "x")
    if student is None or not student.is_demo or not password or not settings.demo:
        # A demo student outside demo mode is refused whatever the password.
        return None
    expected = settings.demo_password.get_secret_value()
    return student if expected and hmac.compare_digest(password.encode(), expected.encode()) else None


async def set_password(session: AsyncSession, student: Student, password: str) -> None:
    """Give a local student a new password; every browser signed in as them has to sign in again."""
    student.password_hash = await hash_password(password)
    await end_sessions(session, student.id)


async def end_sessions(session: AsyncSession, student_id: int) -> None:
    """End every browser session of this student (sign-out, password change).

    An increment in the database, not in Python, so two sign-outs at once both move it on.
    """
    await session.execute(
        update(Student)
        .where(Student.id == student_id)
        .values(session_generation=Student.session_generation + 1)
        .execution_options(synchronize_session=False)
    )


def student_name(given: str | None, fallback: str) -> str:
    """The display name to keep: ``given`` cleaned to one short line (other students' assistants
    read it: campus_mcp.untrusted), else ``fallback`` cleaned the same way. Local, OIDC and
    (later) SAML accounts all take their name through here."""
    cleaned = clean_student_text(given or "", limit=STUDENT_NAME_LENGTH)
    return cleaned or clean_student_text(fallback, limit=STUDENT_NAME_LENGTH)


async def create_local_student(
    session: AsyncSession, username: str, password: str, *, display_name: str | None = None, email: str | None = None
) -> Student:
    student = Student(
        username=username.strip().lower(),
        display_name=student_name(display_name, username),
        email=email,
        password_hash=await hash_password(password),
    )
    session.add(student)
    await session.flush()
    return student


class IdentityRefused(Exception):
    """Why this identity-provider account gets no student here, in words for the person."""


def campus_id_of(value: str) -> str:
    """The campus id as kept and matched: trimmed, lower case (ids and emails are not case-sensitive)."""
    return value.strip().lower()


async def oidc_student(
    session: AsyncSession, issuer: str, subject: str, *, campus_id: str, display_name: str, email: str | None
) -> Student:
    """The student of this identity-provider account: the one linked to it, else the one the
    enrollment feed made for ``campus_id`` (linked now), else a new one. The caller decided the
    person is admitted."""
    campus_id = campus_id_of(campus_id)
    student = (
        await session.execute(select(Student).where(Student.oidc_issuer == issuer, Student.oidc_subject == subject))
    ).scalar_one_or_none()
    if student is None:
        student = (await session.execute(select(Student).where(Student.campus_id == campus_id))).scalar_one_or_none()
        if student is not None and (student.oidc_subject or student.password_hash or student.is_demo):
            raise IdentityRefused(
                f"The campus id {campus_id} belongs to another account here already, so this sign-in "
                "cannot be linked to it."
            )
        if student is None:
            taken = (await session.execute(select(Student.id).where(Student.username == campus_id))).first()
            student = Student(username=campus_id if taken is None else f"{campus_id}-{subject[:12]}")
            session.add(student)
        student.oidc_issuer, student.oidc_subject, student.campus_id = issuer, subject, campus_id
    if student.disabled:
        raise IdentityRefused("Your account on this service is disabled.")
    # The IdP's name is rewritten at each sign-in, so it is cleaned at each one. Without a name (the
    # sign-in hands the id back instead), the name kept is the feed's, never the campus id.
    given = "" if campus_id_of(display_name or "") == campus_id else display_name
    kept = "" if campus_id_of(student.display_name or "") == campus_id else student.display_name
    student.display_name = student_name(given, kept or "")
    student.email = email or student.email
    await session.flush()
    return student


async def student_for_feed(session: AsyncSession, campus_id: str) -> int:
    """The id of the student the enrollment feed names by ``campus_id``, created (without any way
    in, and without a name until the feed's name column or the first sign-in gives one) when there
    is none: the first sign-in with that id attaches to it."""
    campus_id = campus_id_of(campus_id)
    found = await session.scalar(select(Student.id).where(Student.campus_id == campus_id))
    if found is not None:
        return int(found)
    taken = await session.scalar(select(Student.id).where(Student.username == campus_id))
    student = Student(username=campus_id if taken is None else f"{campus_id}-feed", display_name="")
    student.campus_id = campus_id
    session.add(student)
    await session.flush()
    return student.id


async def name_feed_students(session: AsyncSession, names: Mapping[int, str]) -> int:
    """Give each student of ``names`` (student id -> the enrollment feed's name column) that name
    when they have none yet (or only their campus id, as rows saved before held); how many were
    named. A name the campus sign-in gave is kept: the sign-in rewrites its own at each sign-in."""
    named = 0
    wanted = sorted(names)
    for start in range(0, len(wanted), 500):
        rows = await session.execute(
            select(Student.id, Student.display_name, Student.campus_id).where(
                Student.id.in_(wanted[start : start + 500]), Student.campus_id.is_not(None)
            )
        )
        for student_id, display_name, campus_id in rows:
            name = student_name(names[student_id], "")
            if name and campus_id_of(display_name or "") in ("", campus_id_of(campus_id or "")):
                await session.execute(update(Student).where(Student.id == student_id).values(display_name=name))
                named += 1
    return named


async def signed_in_student(session: AsyncSession, student_id: int) -> tuple[int, str] | None:
    """The student's session generation and the name pages show them by (``shown_name``), or
    None when the student no longer exists: one read for the session check of every request."""
    found = (
        await session.execute(
            select(Student.session_generation, Student.display_name, Student.campus_id, Student.username).where(
                Student.id == student_id
            )
        )
    ).first()
    if found is None:
        return None
    generation, display_name, campus_id, username = found
    return int(generation), shown_name(display_name, campus_id=campus_id, username=username)


async def student_by_username(session: AsyncSession, username: str) -> Student | None:
    return (await session.execute(select(Student).where(Student.username == username))).scalar_one_or_none()


def demo_students_loader(settings: Settings) -> DemoData:
    """Demo students first (order 0): the other families' demo data refers to them by id."""

    async def load(session: AsyncSession, scale: int) -> None:
        for number in range(1, settings.demo_students * max(scale, 1) + 1):
            session.add(
                Student(
                    id=number,
                    username=f"{DEMO_PREFIX}{number}",
                    display_name=f"Demo Student {number}",
                    email=None,
                    is_demo=True,
                )
            )
        await session.flush()
        if session.get_bind().dialect.name == "postgresql":
            # Explicit ids do not move PostgreSQL's sequence; move it past them for later sign-ups.
            await session.execute(
                text("SELECT setval(pg_get_serial_sequence('students', 'id'), (SELECT max(id) FROM students))")
            )

    return DemoData(load=load, order=0)
