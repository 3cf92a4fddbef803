"""The platform address ranges: claude.ai and ChatGPT send many students' requests from a few
addresses, so those get one backstop per range instead of the per-address limits.

``CAMPUS_MCP_PLATFORM_RANGES`` holds the fixed ones (Anthropic's published range by default).
OpenAI publishes a list that changes; ``CAMPUS_MCP_PLATFORM_RANGES_SOURCE`` names it (an https
URL, fetched behind the SSRF guard of ``oauth/cimd.py``, or a file), and the job
``core.platform_ranges`` reads it every 6 hours. The copy it reads is kept where every process
that serves can read it, and where a restart finds it: in Redis when the counters are there, else
in a file of ``CAMPUS_MCP_VAR_DIR`` (the job runs in one process, the leader's, while every
``serve`` process reads the copy; a copy in the job's memory would reach none of the others and be
lost with it). Until a copy exists those addresses get the normal per-address limits (seed 000):
after setting the source, run ``campus-mcp jobs run core.platform_ranges`` once rather than wait
6 hours for the first run.

A line of the list that is not a network is reported in the run (``lost``) and the others are
kept; a list with no network at all, or a source that cannot be read, fails the run and keeps the
copy in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from campus_mcp.contributions import Interval, Job, JobOutcome
from campus_mcp.job_context import JobContext
from campus_mcp.limits.policy import Network
from campus_mcp.settings import Settings

log = logging.getLogger(__name__)

JOB_ID = "core.platform_ranges"
REDIS_KEY = "campus-mcp:platform-ranges"
# A worker looks for a newer copy at most this often.
RELOAD_SECONDS = 60.0
# OpenAI's list is a few hundred prefixes; a document far larger is not a list of ranges.
MAX_LIST_BYTES = 256 * 1024
WHAT = "the platform range list"
# Without Redis: the copy's file in CAMPUS_MCP_VAR_DIR.
COPY_FILE = "platform-ranges.json"
# A list of garbage would report every line; the run keeps this many and counts the rest.
MAX_REPORTED = 20


def _entries(raw: bytes) -> list[tuple[str, Any]]:
    """Each entry of a list with where it is (``line 3``, ``prefix 2``): OpenAI's JSON
    (``{"prefixes": [{"ipv4Prefix": ...}]}``), a JSON array of strings, or text with one network
    per line (``#`` starts a comment)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except ValueError:
        lines = [(f"line {n}", line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), 1)]
        return [(where, entry) for where, entry in lines if entry]
    if isinstance(document, dict):
        document = document.get("prefixes", [])
    if not isinstance(document, list):
        raise ValueError(f"{WHAT} is JSON but neither a list nor an object with 'prefixes'")
    entries: list[tuple[str, Any]] = []
    for n, item in enumerate(document, 1):
        if isinstance(item, dict):
            entries.extend((f"prefix {n}", v) for k, v in item.items() if k in ("ipv4Prefix", "ipv6Prefix", "prefix"))
        elif item != "":
            entries.append((f"entry {n}", item))
    return entries


def read_ranges(raw: bytes) -> tuple[list[str], dict[str, str]]:
    """The networks of a list, and each entry that is not one with why (by where it is, at most
    :data:`MAX_REPORTED` of them). Raises ValueError when the list holds no network at all."""
    found: set[str] = set()
    bad: dict[str, str] = {}
    skipped = 0
    for where, entry in _entries(raw):
        try:
            if not isinstance(entry, str):
                raise ValueError(entry)
            found.add(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            if len(bad) < MAX_REPORTED:
                shown = entry[:60] if isinstance(entry, str) else entry
                bad[where] = f"{shown!r} is not a network like 192.0.2.0/24; left out"
            else:
                skipped += 1
    if skipped:
        bad["more"] = f"{skipped} more entries are not networks either"
    if not found:
        first = next(iter(bad.items()), None)
        because = f": {first[0]}: {first[1]}" if first else ""
        raise ValueError(f"{WHAT} holds no network{because}")
    return sorted(found), bad


def parse_ranges(raw: bytes) -> list[str]:
    """The networks of a list (the entries that are not networks left out; see :func:`read_ranges`)."""
    return read_ranges(raw)[0]


async def read_source(source: str, settings: Settings) -> bytes:
    if source.startswith(("https://", "http://")):
        from campus_mcp.oauth.cimd import _download
        from campus_mcp.outside_documents import DocumentLimit

        # A list of a few hundred networks: its publisher keeps it small, no setting raises this.
        return await _download(source, settings, limit=DocumentLimit(WHAT, MAX_LIST_BYTES))
    return await asyncio.to_thread(_read_file, Path(source))


def _read_file(path: Path) -> bytes:
    if path.stat().st_size > MAX_LIST_BYTES:
        raise ValueError(f"{WHAT} {path} is larger than {MAX_LIST_BYTES // 1024} KB")
    return path.read_bytes()


async def _redis_call(settings: Settings, command: str, *args: Any) -> Any:
    from campus_mcp.redis_client import redis_client

    client = redis_client(settings.redis_url.get_secret_value(), timeout_seconds=2)
    try:
        return await getattr(client, command)(*args)
    finally:
        await client.aclose()


def copy_path(settings: Settings) -> Path:
    return Path(settings.var_dir) / COPY_FILE


def _write_copy(path: Path, ranges: list[str]) -> None:
    # Written beside and renamed over: a reader sees the old copy or the new one, never half.
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{COPY_FILE}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(ranges, out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _read_copy(path: Path) -> list[str] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return [entry for entry in document if isinstance(entry, str)] if isinstance(document, list) else None


async def save_copy(settings: Settings, ranges: list[str]) -> None:
    if settings.redis_url.get_secret_value():
        await _redis_call(settings, "set", REDIS_KEY, json.dumps(ranges))
    else:
        await asyncio.to_thread(_write_copy, copy_path(settings), ranges)


async def load_copy(settings: Settings) -> list[str] | None:
    if settings.redis_url.get_secret_value():
        raw = await _redis_call(settings, "get", REDIS_KEY)
        return json.loads(raw) if raw else None
    return await asyncio.to_thread(_read_copy, copy_path(settings))


async def refresh_platform_ranges(context: JobContext) -> JobOutcome:
    """Read the configured list and keep the copy the workers read. Entries that are not
    networks are reported (``lost``) and left out; a source that cannot be read, or holds no
    network, fails the run and leaves the copy in use as it was."""
    source = context.settings.platform_ranges_source
    if not source:
        return JobOutcome(summary="no CAMPUS_MCP_PLATFORM_RANGES_SOURCE configured; nothing to read")
    import httpx

    from campus_mcp.oauth.cimd import MetadataDocumentError
    from campus_mcp.outside_documents import DocumentTooLarge

    try:
        ranges, bad = read_ranges(await read_source(source, context.settings))
    except (MetadataDocumentError, DocumentTooLarge, httpx.HTTPError, ValueError, OSError) as exc:
        # MetadataDocumentError: the SSRF guard refused the URL, or what it answered.
        raise ValueError(
            f"CAMPUS_MCP_PLATFORM_RANGES_SOURCE {source}: {exc}. The platform ranges in use are kept; "
            "fix the source (an https URL on a public address, or a readable file) and run the job again."
        ) from None
    await save_copy(context.settings, ranges)
    summary = f"{len(ranges)} platform network(s) from {source}"
    if bad:
        summary += f"; {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} left out (see lost)"
    return JobOutcome(items=len(ranges), lost=bad, summary=summary)


def platform_ranges_job() -> Job:
    return Job(
        id=JOB_ID,
        description="Read the platform address ranges (CAMPUS_MCP_PLATFORM_RANGES_SOURCE) for the rate limits.",
        trigger=Interval(minutes=360),
        run=refresh_platform_ranges,
    )


class PlatformRanges:
    """The fixed ranges and the job's latest copy, looked up again at most once a minute."""

    def __init__(self, settings: Settings, static: tuple[Network, ...]) -> None:
        self.settings = settings
        self.static = static
        self._all = static
        self._loaded_at: float | None = None

    async def current(self) -> tuple[Network, ...]:
        if not self.settings.platform_ranges_source:
            return self.static
        now = time.monotonic()
        if self._loaded_at is None or now - self._loaded_at >= RELOAD_SECONDS:
            self._loaded_at = now
            try:
                copy = await load_copy(self.settings)
            except Exception as exc:  # Redis down: keep the ranges already known
                log.warning("rate limits: the platform ranges could not be read (%s)", type(exc).__name__)
                copy = None
            if copy is not None:
                self._all = self.static + tuple(_networks_of(copy))
        return self._all


def _networks_of(copy: list[str]) -> list[Network]:
    # The job wrote only networks; an entry edited by hand into something else is skipped, not fatal.
    found: list[Network] = []
    for entry in copy:
        with contextlib.suppress(ValueError):
            found.append(ipaddress.ip_network(entry, strict=False))
    return found
