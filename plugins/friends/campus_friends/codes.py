"""Friend codes: how one student finds another without learning who they are on the campus's books.

A student of the campus sign-in has their campus id (a student number) as username, so a request
"by username" would make students swap student numbers, and show them to every friend (issue 35,
point 6). Each student has a friend code instead, shown only to them on their Friends page, to give
to the friends they choose: eight letters and digits that cannot be mixed up (no 0/O, 1/I/L),
written ``ABCD-EFGH``, typed in any case, with or without the dash. A local account can still be
asked by its username, which an administrator chose; a campus account cannot.

A code is random (31^8, about 40 bits) and a request to a code nobody has is answered as one sent,
so trying codes tells nothing, and a code that does hit only sends a request its owner can decline.
"""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from campus_friends.models import FriendCode

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 8


def shown(code: str) -> str:
    """``ABCDEFGH`` as the page shows it: ``ABCD-EFGH``."""
    return f"{code[:4]}-{code[4:]}"


def typed(text: str) -> str | None:
    """The code a student typed (any case, spaces or dashes anywhere), or None when it cannot be one."""
    code = "".join(char for char in text.upper() if char not in " -")
    return code if len(code) == LENGTH and all(char in ALPHABET for char in code) else None


async def friend_code(session: AsyncSession, student_id: int) -> str:
    """The student's friend code, made on first use. Flushes; the caller commits."""
    found = await session.scalar(select(FriendCode.code).where(FriendCode.student_id == student_id))
    if found is not None:
        return found
    for _attempt in range(5):
        code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        try:
            async with session.begin_nested():
                session.add(FriendCode(student_id=student_id, code=code))
            return code
        except IntegrityError:
            # Another page load made this student's code at the same moment (or, once in a great
            # while, another student has this code): read it, or try another.
            found = await session.scalar(select(FriendCode.code).where(FriendCode.student_id == student_id))
            if found is not None:
                return found
    raise RuntimeError("no free friend code after 5 tries")


async def student_with_code(session: AsyncSession, text: str) -> int | None:
    """The student whose friend code ``text`` is, or None."""
    code = typed(text)
    if code is None:
        return None
    return await session.scalar(select(FriendCode.student_id).where(FriendCode.code == code))
