"""The platform address ranges: claude.ai and ChatGPT send many students' requests from a few
addresses, so those get one backstop per range instead of the per-address limits.

``CAMPUS_MCP_PLATFORM_RANGES`` holds the fixed ones (Anthropic's published range by default).
OpenAI publishes a list that changes; ``CAMPUS_MCP_PLATFORM_RANGES_SOURCE`` names it (an https
URL, fetched behind the SSRF guard of ``oauth/cimd.py``, or a file), and the job
``core.platform_ranges`` reads it every 6 hours. The copy it reads is kept where the counters
are: in Redis for every worker, or in this process for one. Until a copy exists those
addresses get the normal per-address limits (seed 000).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
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

# Without Redis: the refreshed copy of each deployment (by database) in this process.
_process_copies: dict[str, list[str]] = {}


def parse_ranges(raw: bytes) -> list[str]:
    """The networks of a list: OpenAI's JSON (``{"prefixes": [{"ipv4Prefix": ...}]}``), a JSON
    array of strings, or text with one network per line (``#`` starts a comment)."""
    text = raw.decode("utf-8", errors="replace")
    entries: list[Any]
    try:
        document = json.loads(text)
    except ValueError:
        entries = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    else:
        if isinstance(document, dict):
            document = document.get("prefixes", [])
        if not isinstance(document, list):
            raise ValueError(f"{WHAT} is JSON but neither a list nor an object with 'prefixes'")
        entries = []
        for item in document:
            if isinstance(item, dict):
                entries.extend(v for k, v in item.items() if k in ("ipv4Prefix", "ipv6Prefix", "prefix"))
            else:
                entries.append(item)
    found: list[str] = []
    for entry in entries:
        if not isinstance(entry, str) or not entry:
            continue
        try:
            found.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ValueError(f"{WHAT} holds {entry[:60]!r}, which is not a network like 192.0.2.0/24") from None
    if not found:
        raise ValueError(f"{WHAT} holds no network")
    return sorted(set(found))


async def read_source(source: str, settings: Settings) -> bytes:
    if source.startswith(("https://", "http://")):
        from campus_mcp.oauth.cimd import _download

        return await _download(source, settings, what=WHAT, max_bytes=MAX_LIST_BYTES)
    return await asyncio.to_thread(_read_file, Path(source))


def _read_file(path: Path) -> bytes:
    if path.stat().st_size > MAX_LIST_BYTES:
        raise ValueError(f"{WHAT} {path} is larger than {MAX_LIST_BYTES // 1024} KB")
    return path.read_bytes()


async def _redis_call(settings: Settings, command: str, *args: Any) -> Any:
    import redis.asyncio as redis_asyncio

    client = redis_asyncio.Redis.from_url(
        settings.redis_url.get_secret_value(), socket_timeout=2, socket_connect_timeout=2
    )
    try:
        return await getattr(client, command)(*args)
    finally:
        await client.aclose()


async def save_copy(settings: Settings, ranges: list[str]) -> None:
    if settings.redis_url.get_secret_value():
        await _redis_call(settings, "set", REDIS_KEY, json.dumps(ranges))
    else:
        _process_copies[settings.database_url] = ranges


async def load_copy(settings: Settings) -> list[str] | None:
    if settings.redis_url.get_secret_value():
        raw = await _redis_call(settings, "get", REDIS_KEY)
        return json.loads(raw) if raw else None
    return _process_copies.get(settings.database_url)


async def refresh_platform_ranges(context: JobContext) -> JobOutcome:
    """Read the configured list and keep the copy the workers read (all of it or nothing)."""
    source = context.settings.platform_ranges_source
    if not source:
        return JobOutcome(summary="no CAMPUS_MCP_PLATFORM_RANGES_SOURCE configured; nothing to read")
    ranges = parse_ranges(await read_source(source, context.settings))
    await save_copy(context.settings, ranges)
    return JobOutcome(items=len(ranges), summary=f"{len(ranges)} platform network(s) from {source}")


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
                self._all = self.static + tuple(ipaddress.ip_network(entry) for entry in copy)
        return self._all
