"""The campus's instructors by name and public id, held in process per database: which
instructors an ``instructor`` filter of a section search names.

A part of a name cannot seek a b-tree (``LIKE '%garcia%'``), so asking the database read every
name each search: at ``--scale 67`` (20,100 instructors) a good part of the search, plus a count
of whether the campus has ten times as many instructors. Held here, the names are one folded text
searched in one pass and the count is their number.

Each name is folded as the engine's own test folds it, so the same instructors are named:

- SQLite's ``LIKE`` ignores the case of ASCII letters only (the name is read as it is stored and
  folded here the same way);
- PostgreSQL tests ``lower(name)``, which folds every letter by the database's locale: the name
  is read already lowered by the database.

Held by ``lookups.HeldTable``, as the terms are, but keyed by the roster's own version
(``data_version.ROSTER``), which moves only with a write of an instructor's id, public id or name
(an insert, a delete, a rename): a seat refresh, which moves the data version every 30 minutes of
registration and at every section the refresh queue reads from Banner, read every name again
(slow at ``--scale 67``). So: per database (the engine's URL), forgotten when this process
commits a change to the roster, always compared with the roster's version (read once per
call), never kept from a read a commit overtook; and
never used by a session with uncommitted catalog writes (the caller then asks the database, see
``instructor_filter``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import data_version
from campus_catalog.models import Instructor
from campus_catalog.queries import lookups

# Ends each folded name in the one text; a part holding it is tested name by name instead.
_END = "\n"
# SQLite's LIKE folds these and nothing else.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True, slots=True)
class Roster:
    """Every instructor of one campus: folded names (in id order) and public ids."""

    ids: tuple[int, ...]
    folded: tuple[str, ...]
    by_pub_id: dict[str, int]
    # The folded names, each followed by _END, and where each begins in that text.
    text: str
    starts: tuple[int, ...]

    @classmethod
    def of(cls, rows: list[tuple[int, str, str]]) -> Roster:
        """From (id, public id, folded name) rows."""
        rows = sorted(rows)
        folded = tuple(name for _id, _pub, name in rows)
        starts: list[int] = []
        at = 0
        for name in folded:
            starts.append(at)
            at += len(name) + len(_END)
        return cls(
            ids=tuple(row[0] for row in rows),
            folded=folded,
            by_pub_id={pub_id: id_ for id_, pub_id, _name in rows},
            text="".join(name + _END for name in folded),
            starts=tuple(starts),
        )

    def __len__(self) -> int:
        return len(self.ids)

    def _holding(self, part: str, most: int | None = None) -> list[int]:
        """The positions (ascending) of the folded names that hold ``part``; with ``most``, the
        search stops once it has found more than that many names."""
        if _END in part:
            return [i for i, name in enumerate(self.folded) if part in name][: None if most is None else most + 1]
        # One pass of the text (a str.find per match redid its setup each time: 290 finds for
        # "garcia"); a name holding the part twice is found once.
        found: set[int] = set()
        for match in re.finditer(re.escape(part), self.text):
            found.add(bisect_right(self.starts, match.start()) - 1)
            if most is not None and len(found) > most:
                break
        return sorted(found)

    def named(self, instructor: str, most: int) -> list[int]:
        """The ids (ascending) of the instructors whose folded name holds ``instructor`` lowered,
        or whose public id is ``instructor``; at most ``most`` + 1 of them (enough to tell that
        there are more than ``most``)."""
        found = {self.ids[i] for i in self._holding(instructor.lower(), most)}
        pub = self.by_pub_id.get(instructor)
        if pub is not None:
            found.add(pub)
        return sorted(found)[: most + 1]

    def with_words(self, words: list[str]) -> list[int]:
        """The ids (ascending) of the instructors whose folded name holds every one of ``words``
        (already lowered), as search_instructors tests a name: found from the longest word (likely
        the one that names fewest), then tested for the others name by name."""
        longest = max(words, key=len)
        others = [word for word in words if word != longest]
        return [self.ids[i] for i in self._holding(longest) if all(word in self.folded[i] for word in others)]


async def _read(session: AsyncSession) -> Roster:
    if session.get_bind().dialect.name == "sqlite":
        # Two covering indexes, (name, id) and the unique public id (with the rowid), each read
        # whole: one read of the table would read every row with its vector.
        names = {id_: name for id_, name in await session.execute(select(Instructor.id, Instructor.name))}
        pub_ids = await session.execute(select(Instructor.id, Instructor.pub_id))
        return Roster.of([(id_, pub_id, names[id_].translate(_ASCII_LOWER)) for id_, pub_id in pub_ids if id_ in names])
    rows = await session.execute(select(Instructor.id, Instructor.pub_id, func.lower(Instructor.name)))
    return Roster.of([(id_, pub_id, name) for id_, pub_id, name in rows])


_rosters: lookups.HeldTable[Roster] = lookups.HeldTable(_read, data_version.ROSTER)


async def roster(session: AsyncSession) -> Roster | None:
    """The campus's roster; None for a session with uncommitted catalog writes (they may be
    rolled back: the caller asks the database what it sees)."""
    if data_version.writing(session):
        return None
    return await _rosters.rows(session)
