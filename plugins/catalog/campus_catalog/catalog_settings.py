"""The catalog's settings: its upstream sources and its campus words.

A :class:`campus_mcp.PluginSettings` model named in the catalog's ``PluginInfo(settings_model=...)``:
the host fills it from the ``[plugins.catalog]`` table of ``campus-mcp.toml`` and from the
environment variables ``CAMPUS_MCP_CATALOG_<KEY>`` (the environment wins), stops start-up naming
the variable or TOML key of a bad value, and hands the one object to the catalog's hooks
(``plugin_settings``), its tools and routes (``context.plugin_settings``) and its jobs. The
catalog never reads the environment itself.

Every source is optional. A source with neither a URL nor a file contributes no job and no tool
(seed 001: a tool that can only fail is worse than a missing one), so an unconfigured campus runs
on its demo data or on what an administrator imports by hand.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from campus_mcp import DocumentLimit, PluginSettings
from pydantic import Field, ValidationInfo, field_validator

# Banner failed after about 40 requests in one minute (seed 000, 2026-10-14); stay well under it.
DEFAULT_BANNER_REQUESTS_PER_MINUTE = 30.0
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
URL_FIELDS = ("banner_url", "calendar_url", "programs_url", "electives_url")
# Measured on the fixtures: a Banner searchResults page holds about 4 KB a section (Texas A&M's
# 157 sections, 633 KB), so a full page of 500 is about 2 MB; a year's academic calendar is 56 KB.
DEFAULT_BANNER_PAGE_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_FEED_MAX_BYTES = 8 * 1024 * 1024


def feed_limit(what: str, max_bytes: int = DEFAULT_FEED_MAX_BYTES) -> DocumentLimit:
    """How much of one feed document (``what``: "calendar feed") is read."""
    return DocumentLimit(what, max_bytes, "CAMPUS_MCP_CATALOG_FEED_MAX_BYTES")


def banner_limit(max_bytes: int = DEFAULT_BANNER_PAGE_MAX_BYTES) -> DocumentLimit:
    """How much of one Banner answer (a searchResults page, an HTML fragment) is read."""
    return DocumentLimit("a Banner answer", max_bytes, "CAMPUS_MCP_CATALOG_BANNER_PAGE_MAX_BYTES")


class CatalogSettings(PluginSettings):
    # CAMPUS_MCP_OVERRIDE_OFFICE and CAMPUS_MCP_STUDENT_SYSTEM_NAME still set: start-up warns.
    moved_from_host = ("override_office", "student_system_name")
    # The campus's own rules (campus_rules.py): empty is "not set". The demo campus, when it sets
    # none, gets Wentworth's (seed 000); any other campus gets neutral words for a rule not set.
    override_office: str = Field(
        default="",
        description=(
            "Who grants course overrides, in answers about restrictions (demo campus: the dean's office of "
            "the school that offers the course; unset elsewhere: the department that offers the course)."
        ),
    )
    student_system_name: str = Field(
        default="",
        description="The campus's student system, named in answers (demo campus: LeopardWeb).",
    )
    time_ticket_place: str = Field(
        default="",
        description=(
            "Where a student finds their registration time (time ticket), for example 'myWentworth, Prepare for "
            "Registration' (the demo campus's); unset, the answers say it is in the student system."
        ),
    )
    time_ticket_basis: str = Field(
        default="",
        description="What a registration time comes from, for example 'completed earned credits'; unset, not said.",
    )
    registration_pin_rule: str = Field(
        default="",
        description=(
            "Who needs a PIN or an approval to register, as a clause, for example 'first-year students need a "
            "PIN from their advisor'; unset, the answers tell the student to check with their advisor."
        ),
    )
    waitlist_rule: str = Field(
        default="",
        description=(
            "The campus's rule for a full section with a waitlist, a sentence (demo campus: join the waitlist "
            "before asking for a capacity override); unset, not said."
        ),
    )
    elective_rule: str = Field(
        default="",
        description="What to do about an elective missing from the schedule, a sentence; unset, not said.",
    )
    substitution_approval: str = Field(
        default="",
        description=(
            "Who approves a course substitution or transfer credit (demo campus: the program director, the "
            "dean's office of the school, or both); unset, the student asks their academic advisor."
        ),
    )
    # Test-only allowance: plain http to a loopback address (the fake Banner of the tests).
    # Anything else must be https, because the job follows the URL unattended every night.
    # Before the URLs: their https rule reads it (a field validator sees only the fields above it).
    allow_loopback_http: bool = Field(default=False, description="Tests only: allow http://127.0.0.1 upstreams.")
    banner_url: str = Field(
        default="",
        description=(
            "Base URL of the Banner 9 Student Registration Self-Service, ending in /ssb, "
            "for example https://selfservice.example.edu/StudentRegistrationSsb/ssb."
        ),
    )
    banner_file: Path | None = Field(
        default=None,
        description=(
            "A saved searchResults JSON file, or a folder of them and of saved course detail pages: "
            "file mode, no network."
        ),
    )
    banner_requests_per_minute: float = Field(
        default=DEFAULT_BANNER_REQUESTS_PER_MINUTE, gt=0, description="Pacing of every Banner request."
    )
    banner_timeout_seconds: float = Field(default=30.0, gt=0, description="Timeout of one Banner request.")
    banner_page_size: int = Field(default=500, ge=1, le=500, description="Sections per searchResults page.")
    banner_page_max_bytes: int = Field(
        default=DEFAULT_BANNER_PAGE_MAX_BYTES,
        ge=64 * 1024,
        description=(
            "The most read of one Banner answer (a searchResults page of 500 sections is about 2 MB); a larger "
            "one is refused and the run records why."
        ),
    )
    calendar_url: str = Field(default="", description="iCalendar (.ics) feed of the academic calendar.")
    calendar_file: Path | None = Field(default=None, description="A saved .ics file of the academic calendar.")
    calendar_timeout_seconds: float = Field(default=30.0, gt=0)
    programs_url: str = Field(
        default="",
        description=(
            "JSON feed of one catalog year's degree programs, with {catalog_year} where the year goes, "
            "for example https://catalog.example.edu/export/programs-{catalog_year}.json."
        ),
    )
    programs_file: Path | None = Field(default=None, description="A saved programs JSON file (one catalog year).")
    electives_url: str = Field(default="", description="JSON feed of the schools' elective lists for the terms.")
    electives_file: Path | None = Field(default=None, description="A saved elective lists JSON file.")
    feed_timeout_seconds: float = Field(default=30.0, gt=0)
    feed_max_bytes: int = Field(
        default=DEFAULT_FEED_MAX_BYTES,
        ge=64 * 1024,
        description=(
            "The most read of one feed document: the academic calendar (.ics, a year is about 60 KB), the "
            "programs and the elective lists; a larger one is refused and the run records why."
        ),
    )
    answer_cache_entries: int = Field(
        default=2048,
        ge=0,
        description=(
            "Public catalog answers kept per process (keyed by tool, arguments and the catalog's data "
            "version); 0 turns the answer cache off. With the host's shared store configured, the "
            "answers are kept there instead."
        ),
    )

    graphql_in_flight: int = Field(
        default=2,
        ge=1,
        description=(
            "GraphQL queries one address (or one signed-in student) may have running at once; more "
            "are refused with 429 and Retry-After. Counted per process: each worker keeps its own count."
        ),
    )

    @field_validator(*URL_FIELDS)
    @classmethod
    def _https(cls, value: str, info: ValidationInfo) -> str:
        # A field validator, not a model one, so the host names the variable or TOML key it came from.
        url = value.strip().rstrip("/")
        if not url:
            return url
        parts = urlsplit(url)
        loopback_http = (
            parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS and bool(info.data.get("allow_loopback_http"))
        )
        if parts.scheme != "https" and not loopback_http:
            raise ValueError("must be an https:// URL (it is read unattended on a schedule)")
        return url

    @field_validator("banner_file", "calendar_file", "programs_file", "electives_file", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # An empty variable means "not configured", not the current directory.
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def banner_configured(self) -> bool:
        return bool(self.banner_url or self.banner_file)

    @property
    def banner_live(self) -> bool:
        """Live mode reads Banner over HTTP; file mode reads saved responses and never refreshes seats."""
        return bool(self.banner_url)

    @property
    def calendar_configured(self) -> bool:
        return bool(self.calendar_url or self.calendar_file)

    @property
    def programs_configured(self) -> bool:
        return bool(self.programs_url or self.programs_file)

    @property
    def electives_configured(self) -> bool:
        return bool(self.electives_url or self.electives_file)
