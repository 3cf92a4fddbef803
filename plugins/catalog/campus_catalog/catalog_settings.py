"""Settings of the catalog's upstream sources: environment variables prefixed ``CAMPUS_MCP_CATALOG_``.

Every source is optional. A source with neither a URL nor a file contributes no job and no tool
(seed 001: a tool that can only fail is worse than a missing one), so an unconfigured campus runs
on its demo data or on what an administrator imports by hand.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from campus_mcp import PluginError
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Banner failed after about 40 requests in one minute (seed 000, 2026-10-14); stay well under it.
DEFAULT_BANNER_REQUESTS_PER_MINUTE = 30.0
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class CatalogSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CAMPUS_MCP_CATALOG_", extra="ignore")

    banner_url: str = Field(
        default="",
        description=(
            "Base URL of the Banner 9 Student Registration Self-Service, ending in /ssb, "
            "for example https://selfservice.example.edu/StudentRegistrationSsb/ssb."
        ),
    )
    banner_file: Path | None = Field(
        default=None,
        description="A saved searchResults JSON file, or a folder of them: file mode, no network.",
    )
    banner_requests_per_minute: float = Field(
        default=DEFAULT_BANNER_REQUESTS_PER_MINUTE, gt=0, description="Pacing of every Banner request."
    )
    banner_timeout_seconds: float = Field(default=30.0, gt=0, description="Timeout of one Banner request.")
    banner_page_size: int = Field(default=500, ge=1, le=500, description="Sections per searchResults page.")
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
    # Test-only allowance: plain http to a loopback address (the fake Banner of the tests).
    # Anything else must be https, because the job follows the URL unattended every night.
    allow_loopback_http: bool = Field(default=False, description="Tests only: allow http://127.0.0.1 upstreams.")

    @field_validator("banner_url", "calendar_url", "programs_url", "electives_url")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip().rstrip("/")

    @field_validator("banner_file", "calendar_file", "programs_file", "electives_file", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # An empty variable means "not configured", not the current directory.
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _check_urls(self) -> CatalogSettings:
        for name in ("banner_url", "calendar_url", "programs_url", "electives_url"):
            url = getattr(self, name)
            if not url:
                continue
            parts = urlsplit(url)
            loopback_http = parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS and self.allow_loopback_http
            if parts.scheme != "https" and not loopback_http:
                raise ValueError(
                    f"CAMPUS_MCP_CATALOG_{name.upper()} must be an https:// URL (it is read unattended on a schedule)."
                )
        return self

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


class CatalogSettingsError(PluginError):
    """The CAMPUS_MCP_CATALOG_* variables do not make a valid configuration; says which and why.

    A :class:`PluginError`, so that ``campus-mcp`` and ``serve`` stop with this one line rather
    than a traceback."""


def load_catalog_settings() -> CatalogSettings:
    try:
        return CatalogSettings()
    except ValidationError as exc:
        problems = "; ".join(
            (f"CAMPUS_MCP_CATALOG_{str(error['loc'][0]).upper()}: " if error["loc"] else "")
            + error["msg"].removeprefix("Value error, ")
            for error in exc.errors()
        )
        raise CatalogSettingsError(f"the catalog's source settings are not valid: {problems}") from None
