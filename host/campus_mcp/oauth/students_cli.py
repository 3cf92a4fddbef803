"""``campus-mcp students``: local accounts for campuses without an identity provider."""

from __future__ import annotations

import asyncio

import click
from sqlalchemy import select

from campus_mcp.accounts import Student, create_local_student, set_password, student_by_username
from campus_mcp.db import make_engine, make_sessions
from campus_mcp.limits.policy import address_key, parse_address
from campus_mcp.oauth.login_limit import LoginLimit, account_key
from campus_mcp.settings import Settings


@click.group("students")
def students() -> None:
    """Local student accounts (passwords hashed with argon2id)."""


@students.command("add")
@click.argument("username")
@click.option("--name", "display_name", default=None, help="The name shown on the dashboard.")
@click.option("--email", default=None)
@click.password_option(help="The password (asked for, hidden, when not given).")
def add(username: str, display_name: str | None, email: str | None, password: str) -> None:
    """Create a local account. Run `campus-mcp db upgrade` first."""

    async def _add() -> None:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session, session.begin():
                if await student_by_username(session, username.strip().lower()) is not None:
                    raise click.ClickException(f"a student named {username!r} exists already")
                await create_local_student(session, username, password, display_name=display_name, email=email)
        finally:
            await engine.dispose()

    asyncio.run(_add())
    click.echo(f"Created the local account {username.strip().lower()!r}.")


@students.command("list")
def list_students() -> None:
    """Print every student and how they sign in (never a password or hash)."""

    async def _list() -> list[Student]:
        engine = make_engine(Settings().database_url)
        try:
            async with make_sessions(engine)() as session:
                return list((await session.execute(select(Student).order_by(Student.id))).scalars())
        finally:
            await engine.dispose()

    for student in asyncio.run(_list()):
        kind = "demo" if student.is_demo else ("identity provider" if student.oidc_subject else "local")
        click.echo(f"{student.id}\t{student.username}\t{kind}\t{student.display_name}")


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
