"""``campus-mcp students``: every student (local, demo, identity provider) listed by campus id,
disabled and enabled again; local accounts for campuses without an identity provider."""

from __future__ import annotations

import asyncio

import click
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.accounts import Student, campus_id_of, create_local_student, set_password, student_by_username
from campus_mcp.db import make_engine, make_sessions
from campus_mcp.deployment import open_deployment
from campus_mcp.limits.policy import address_key, parse_address
from campus_mcp.logsafe import cell
from campus_mcp.oauth.disabling import disable
from campus_mcp.oauth.login_limit import LoginLimit, account_key
from campus_mcp.settings import Settings


@click.group("students")
def students() -> None:
    """Students: list, disable and enable any; local accounts (passwords hashed with argon2id)."""


@students.command("add")
@click.argument("username")
@click.option("--name", "display_name", default=None, help="The name shown on the dashboard.")
@click.option("--email", default=None)
@click.password_option(help="The password (asked for, hidden, when not given).")
def add(username: str, display_name: str | None, email: str | None, password: str) -> None:
    """Create a local account. Run `campus-mcp db upgrade` first."""

    async def _add() -> str:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session, session.begin():
                if await student_by_username(session, username.strip().lower()) is not None:
                    raise click.ClickException(f"a student named {username!r} exists already")
                student = await create_local_student(
                    session, username, password, display_name=display_name, email=email
                )
                return student.display_name
        finally:
            await engine.dispose()

    # The name is kept cleaned (one line, no control characters, at most 100 characters): say which.
    shown = asyncio.run(_add())
    click.echo(f"Created the local account {username.strip().lower()!r}, shown to friends as {shown!r}.")


def kind_of(student: Student) -> str:
    if student.is_demo:
        return "demo"
    if student.oidc_subject:
        return "identity provider"
    if student.password_hash:
        return "local"
    return "not signed in yet"  # made by the enrollment feed; the first sign-in attaches to it


@students.command("list")
def list_students() -> None:
    """Print every student: id, username, campus id, how they sign in, name (never a password or hash)."""

    async def _list() -> list[Student]:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session:
                return list((await session.execute(select(Student).order_by(Student.id))).scalars())
        finally:
            await engine.dispose()

    for student in asyncio.run(_list()):
        state = "\tdisabled" if student.disabled else ""
        # A name or id came from an IdP or a feed: escaped, so a line break in one cannot forge a row.
        columns = (student.id, student.username, student.campus_id or "-", kind_of(student), student.display_name)
        click.echo("\t".join(map(cell, columns)) + state)


async def find_student(session: AsyncSession, who: str) -> Student:
    """The student named by username or campus id, or a ClickException saying how to find one."""
    name = campus_id_of(who)
    found = await student_by_username(session, name)
    if found is None:
        found = (await session.execute(select(Student).where(Student.campus_id == name))).scalar_one_or_none()
    if found is None:
        raise click.ClickException(
            f"no student with the username or campus id {name!r}; see `campus-mcp students list`"
        )
    return found


@students.command("disable")
@click.argument("student")
def disable_student(student: str) -> None:
    """Disable a student (username or campus id): no sign-in, and their sessions, app tokens,
    personal access tokens and calendar feed end at once."""

    async def _disable() -> tuple[str, str]:
        async with (
            open_deployment(Settings(), migrate=False) as deployment,
            deployment.sessions() as session,
            session.begin(),
        ):
            found = await find_student(session, student)
            revoked = await disable(session, found, deployment.registry.connections)
            ended = ", ".join(revoked.connections) or "no connection"
            return found.username, (
                f"{revoked.oauth_tokens} app token(s) and {revoked.personal_tokens} personal access "
                f"token(s) revoked, every browser session ended, {ended} turned off"
            )

    username, what = asyncio.run(_disable())
    click.echo(f"Disabled {username!r}: {what}.")


@students.command("enable")
@click.argument("student")
def enable_student(student: str) -> None:
    """Let a disabled student (username or campus id) sign in again; revoked tokens stay revoked."""

    async def _enable() -> str:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session, session.begin():
                found = await find_student(session, student)
                found.disabled = False
                return found.username
        finally:
            await engine.dispose()

    click.echo(f"Enabled {asyncio.run(_enable())!r}: they can sign in again (and connect their apps again).")


@students.command("password")
@click.argument("username")
@click.password_option(help="The new password (asked for, hidden, when not given).")
def change_password(username: str, password: str) -> None:
    """Give a local account a new password; it is signed out of every browser."""
    name = username.strip().lower()

    async def _change() -> None:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session, session.begin():
                student = await student_by_username(session, name)
                if student is None:
                    raise click.ClickException(f"no student named {name!r}; see `campus-mcp students list`")
                if student.is_demo or student.oidc_subject:
                    raise click.ClickException(
                        f"{name!r} is not a local account: it signs in with the demo password or the identity provider"
                    )
                await set_password(session, student, password)
        finally:
            await engine.dispose()

    asyncio.run(_change())
    click.echo(f"Changed the password of {name!r}; every browser signed in as them is signed out.")


@students.command("unlock")
@click.argument("username", required=False)
@click.option("--address", default=None, help="Clear the failed sign-ins from this address instead (IPv6: its /64).")
def unlock(username: str | None, address: str | None) -> None:
    """Clear the failed sign-ins that lock an account (or an address) out of password sign-in."""
    if (username is None) == (address is None):
        raise click.UsageError("give a USERNAME to unlock, or --address ADDRESS (one of the two)")
    if address is not None and parse_address(address.strip()) is None:
        raise click.BadParameter(f"{address!r} is not an IPv4 or IPv6 address", param_hint="--address")

    async def _unlock() -> int:
        settings = Settings()
        engine = make_engine(settings.database_url)
        try:
            limit = LoginLimit(
                make_sessions(engine),
                account_limit=settings.login_max_failures,
                address_limit=settings.login_address_max_failures,
                window_seconds=settings.login_window_seconds,
            )
            if username is not None:
                return await limit.unlock_account(username)
            assert address is not None
            return await limit.unlock_address(address.strip())
        finally:
            await engine.dispose()

    cleared = asyncio.run(_unlock())
    what = (
        f"the account {account_key(username)!r}"
        if username is not None
        else f"the address {address_key(str(address).strip())}"
    )
    click.echo(f"Unlocked {what}: cleared {cleared} failed sign-in(s); it can sign in with a password again.")
