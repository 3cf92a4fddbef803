"""The speed-ups: every mechanism that makes an answer cheaper without changing it, one module each.

The rule of this package (held by tests/base/test_speedups_seam.py):

- Each mechanism has a setting that turns it off (the "Speed-ups" group of the settings, in the
  README table), and ``CAMPUS_MCP_SPEEDUPS=off`` turns every one off at once. Off, the plain path
  answers: it is the reference, and the same answers come out either way.
- Each mechanism's tests run both ways (the ``both_ways`` fixture of tests/conftest.py).
- A private name of ``mcp``, ``sqlalchemy`` or ``aiosqlite`` is used here and nowhere else in
  host/ or plugins/, and each such use is checked at start-up by versions and attributes (never by
  reading source text): when a dependency moved, the mechanism logs one line and turns itself off.

Mechanisms: ``fast_call`` (a read-only tools/call answered without the SDK's per-request
machinery), ``statement_shapes`` (a search page's statement kept per shape of its filters),
``sqlite_driver`` (one trip to aiosqlite's thread per statement; no rollback sent for a
connection with no transaction). ``serve --workers N``'s workers forked from a supervisor that
loaded the host and the plugins, sharing those pages, is ``campus_mcp.cli.forked_workers``, beside
the serving it speeds up (its switch is here).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from campus_mcp.base.settings import Settings

LOG = logging.getLogger("campus_mcp.base.speedups")


@dataclass(frozen=True)
class Switches:
    """Which speed-ups are on, as the settings ask (each is also off when its check fails)."""

    fast_reads: bool = True
    statement_shapes: bool = True
    sqlite_one_trip: bool = True
    sqlite_skip_idle_rollback: bool = True
    forked_workers: bool = True

    @classmethod
    def of(cls, settings: Settings) -> Switches:
        """The switches of ``settings``: each its own setting, and all off with ``speedups`` off."""
        on = settings.speedups
        return cls(
            fast_reads=on and settings.fast_reads,
            statement_shapes=on and settings.statement_shapes,
            sqlite_one_trip=on and settings.sqlite_one_trip,
            sqlite_skip_idle_rollback=on and settings.sqlite_skip_idle_rollback,
            forked_workers=on and settings.forked_workers,
        )

    @classmethod
    def from_environment(cls) -> Switches:
        """The switches of the settings this process reads (environment and campus.toml)."""
        from campus_mcp.base.settings import Settings

        return cls.of(Settings())


ALL_OFF = Switches(
    fast_reads=False,
    statement_shapes=False,
    sqlite_one_trip=False,
    sqlite_skip_idle_rollback=False,
    forked_workers=False,
)


def turned_off(mechanism: str, moved: tuple[str, ...]) -> None:
    """The one log line of a mechanism whose dependency moved: what, and that it is off."""
    LOG.warning(
        "speed-up %s is off: its dependency moved (%s); answers are unchanged, only slower. "
        "Check campus_mcp.base.speedups against the installed versions.",
        mechanism,
        "; ".join(moved),
    )
