"""Deployment settings: environment variables prefixed ``CAMPUS_MCP_`` and an optional TOML file.

The TOML file is named by ``CAMPUS_MCP_CONFIG`` (default ``campus-mcp.toml`` in the working
directory, if present). Environment variables win over the file. Its ``[plugins.<name>]`` tables
belong to the plugins (``campus_mcp.plugin.settings``), so in a file with such tables the allow
list is set with ``CAMPUS_MCP_PLUGINS``. Campus texts (the institution's
name, the advisor message) are settings with the Wentworth texts of the seed specification as the
example values; the words only one plugin uses are that plugin's settings (the override office is
the catalog's, ``CAMPUS_MCP_CATALOG_OVERRIDE_OFFICE``).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from campus_mcp.base.demo_key import generated_key

DEFAULT_ADVISOR_MESSAGE = (
    "{product} is not an official {campus} service and copies its data on a schedule. "
    "Ask the student to confirm any course plan with their program director and their "
    "academic advisor."
)


def config_file() -> Path:
    """The TOML file of the deployment: ``CAMPUS_MCP_CONFIG``, default ``campus-mcp.toml`` here."""
    return Path(os.environ.get("CAMPUS_MCP_CONFIG", "campus-mcp.toml"))


class _HostTomlSource(TomlConfigSettingsSource):
    """The TOML file without its ``[plugins.<name>]`` tables: those are the plugins' settings
    (``campus_mcp.plugin.settings``), not the host's ``plugins`` allow list."""

    def __call__(self) -> dict[str, Any]:
        values = super().__call__()
        if isinstance(values.get("plugins"), dict):
            values = {key: value for key, value in values.items() if key != "plugins"}
        return values


class Settings(BaseSettings):
    # enable_decoding=False: list settings are comma-separated (CAMPUS_MCP_DISABLE=friends,apps), not JSON.
    model_config = SettingsConfigDict(
        env_prefix="CAMPUS_MCP_", extra="ignore", env_nested_delimiter="__", enable_decoding=False
    )

    # Storage
    database_url: str = Field(
        default="sqlite+aiosqlite:///var/campus.db",
        description="SQLAlchemy async URL; PostgreSQL as postgresql+asyncpg://user@host/db.",
    )
    # Plugins
    plugins: list[str] | None = Field(
        default=None,
        description=(
            "Allow list of plugin names; unset loads every installed one, except, outside demo mode, an "
            "example (the dining plugin), which loads only when named here."
        ),
    )
    disable: list[str] = Field(default_factory=list, description="Block list of plugin names.")
    # Serving
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = Field(
        default="",
        description="The URL clients reach the server at; default http://HOST:PORT.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description=(
            "Extra Host header values the MCP endpoint and /metrics accept (DNS-rebinding guard; name:* for any port)."
        ),
    )
    allowed_origins: list[str] = Field(default_factory=list)
    anonymous_access: bool = Field(
        default=False,
        description=(
            "Serve the public catalog tools to requests with no token. Off by default, in demo mode "
            "too: every client signs in and sees the whole product (DESIGN 11)."
        ),
    )
    scheduler: bool = Field(
        default=True,
        description=(
            "Let `serve` take part in the scheduler election (one scheduler across every process; "
            "off: only `campus-mcp worker` runs jobs)."
        ),
    )
    scheduler_retry_seconds: float = Field(
        default=5.0,
        gt=0,
        description="How often a standby tries to become the scheduler, and the scheduler checks its lock.",
    )
    database_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description=(
            "Longest wait for a database connection or one statement (PostgreSQL) before a request "
            "or tool call is answered that the database cannot be reached."
        ),
    )
    database_pool_size: int = Field(
        default=10,
        ge=1,
        description=(
            "Database connections each server process keeps open. Up to this many requests at once "
            "reuse them; each one past it opens a connection and closes it after (a few ms each)."
        ),
    )
    database_pool_overflow: int = Field(
        default=5,
        ge=0,
        description=(
            "Connections a process may open past database_pool_size at a busy moment; a request past "
            "both waits up to database_timeout_seconds. On PostgreSQL, processes times (size + overflow) "
            "must stay under the server's max_connections."
        ),
    )
    shutdown_grace_seconds: float = Field(
        default=30.0,
        gt=0,
        description="On SIGTERM, how long `serve` lets in-flight requests finish before it stops.",
    )
    http_header_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description=(
            "How long `serve` waits for a request's headers (from the connection's start, or a later "
            "request's first byte) before it closes the connection (408): a client that sends them "
            "slowly, or half of them, holds no connection longer (slowloris)."
        ),
    )
    http_keep_alive_seconds: int = Field(
        default=5,
        ge=1,
        description=(
            "How long `serve` keeps an idle connection open for the client's next request. Behind a "
            "proxy that keeps connections to it, keep the proxy's idle time shorter (docs/deployment.md)."
        ),
    )
    access_log: bool = Field(
        default=False,
        description=(
            "Whether `serve` logs a line for every HTTP request (uvicorn's access log). Off by default: "
            "at a few hundred requests a second it is most of the log and a cost on every answer."
        ),
    )
    student_access_log: bool = Field(
        default=True,
        description=(
            "Record every read and change of a student's data by an app (when, the student, the app, the "
            "tool or route, the outcome; never arguments or answers): the student's Recent activity page "
            "and campus-mcp audit. Journaled on this machine before the answer, written to the database in "
            "batches off the answer's path; a killed process's entries at the next start (docs/privacy.md)."
        ),
    )
    student_access_days: int = Field(
        default=365,
        ge=1,
        description="Days the access log keeps an entry; a daily job deletes older ones (docs/privacy.md).",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description=(
            "How `serve`, `worker` and `stdio` write their log: readable text, or json (one object a "
            "line, for a log collector). Either way every logger's lines, in UTC, with the request id."
        ),
    )
    sdk_log_level: str = Field(
        default="WARNING",
        description=(
            "Level of the MCP SDK's loggers (mcp.*); at INFO they log a line for every request. "
            "A log config that sets the 'mcp' logger itself wins."
        ),
    )
    # Speed-ups (campus_mcp.base.speedups, docs/performance.md): each off gives the same answers, slower.
    speedups: bool = Field(
        default=True,
        description=(
            "Whether any speed-up runs (campus_mcp.base.speedups): off (CAMPUS_MCP_SPEEDUPS=off) turns every "
            "one below off at once, leaving the plain path that gives the same answers."
        ),
    )
    sqlite_one_trip: bool = Field(
        default=True,
        description=(
            "SQLite: whether each statement makes one trip to aiosqlite's thread instead of four. "
            "Off also when the installed SQLAlchemy or aiosqlite is not one it was written for (logged)."
        ),
    )
    sqlite_skip_idle_rollback: bool = Field(
        default=True,
        description="SQLite: whether closing a session that only read skips the rollback SQLite would ignore.",
    )
    fast_reads: bool = Field(
        default=True,
        description=(
            "Whether /api/mcp answers a single read-only tools/call itself, with the SDK's checks and "
            "serializers but without its per-request streams and runner (the same bytes, less CPU per call). "
            "Off: every request goes through the SDK's transport."
        ),
    )
    statement_shapes: bool = Field(
        default=True,
        description=(
            "Whether a catalog search page's statement is built once per shape of its filters and run "
            "with each call's values. Off also when the installed SQLAlchemy moved (logged)."
        ),
    )
    forked_workers: bool = Field(
        default=True,
        description=(
            "serve --workers N: whether the workers are forked from the supervisor after it loaded the host "
            "and the plugins, sharing those pages (about half a worker's memory), instead of each starting a "
            "fresh interpreter. Off also when the installed uvicorn moved (logged)."
        ),
    )
    metrics_dir: str = Field(
        default="",
        description=(
            "One folder where every process of this deployment on this machine (serve and its workers, "
            "worker, jobs run, a plugin's command such as import enrollments) keeps its metrics, so "
            "/metrics sums them all. Unset: serve --workers uses "
            "VAR_DIR/metrics-PORT, emptied at its start. Set: empty it only with every process stopped."
        ),
    )
    worker_metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description=(
            "A port on which `campus-mcp worker` serves its own /metrics (its job runs, with the same "
            "guard as serve's) and /healthz, on HOST; for a worker in a container or on a machine of its own, "
            "whose metrics folder no serve reads. 0: none."
        ),
    )
    metrics_addresses: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "::1"],
        description="Client addresses or networks (CIDR) that may read /metrics without a token.",
    )
    metrics_token: SecretStr = Field(
        default=SecretStr(""),
        description="A bearer token that lets a scraper at any address read /metrics.",
    )
    secret_key: SecretStr = Field(
        default=SecretStr(""),
        description=(
            "Seals requestState and sessions; required outside demo mode. In demo mode, unset means "
            "a random key made on first start and kept in CAMPUS_MCP_VAR_DIR/secret.key."
        ),
    )
    var_dir: str = Field(default="var", description="The folder of the server's own files (the demo mode's key).")
    demo: bool = Field(default=True, description="Demo mode: demo campus and demo students.")
    demo_password: SecretStr = SecretStr("demo")
    # Sign-in (docs/sign-in.md)
    demo_students: int = Field(default=5, description="How many demo students (student1..N) the demo campus has.")
    confirmation_fallback: Literal["page", "in_band", "apply", "refuse"] = Field(
        default="page",
        description=(
            "What a write tool does for a client that cannot show the student a form (no 2026-07-28 "
            "form or URL elicitation over HTTP, no elicitation on stdio): page answers the question and "
            "a link to the campus's confirmation page, where the signed-in student confirms (on stdio "
            "only when public_url is set, else in_band); in_band answers the question and a one-time "
            "code and changes only on a second call with the code; apply changes at once; refuse "
            "changes nothing."
        ),
    )
    step_up_clients: list[str] = Field(
        default_factory=list,
        description="Client ids or client names that get a 403 insufficient_scope step-up instead of a tool error.",
    )
    login_max_failures: int = Field(
        default=10, description="Failed sign-ins at one account (from any address) per window; then it is locked."
    )
    login_address_max_failures: int = Field(
        default=100,
        description="Failed sign-ins from one address per window before its wrong passwords are slowed "
        "(right ones still sign in); ten times this blocks the address.",
    )
    login_window_seconds: int = 900
    local_accounts: bool = Field(
        default=True, description="Sign-in with a local username and password; false: the campus button only."
    )
    # Rate limits (seed 000 "Rate limits", campus_mcp.limits)
    listen_streams_per_student: int = Field(
        default=3, ge=1, le=100, description="Open subscriptions/listen streams one student may hold in each worker."
    )
    listen_uris_per_stream: int = Field(
        default=20, ge=1, le=1000, description="Resources one subscriptions/listen stream may ask for."
    )
    listen_max_seconds: int = Field(
        default=3600,
        ge=1,
        le=86400,
        description="When a listen stream is closed (gracefully: the client listens again).",
    )
    rate_limits: bool = Field(default=True, description="Count requests and refuse floods (429); off only for tests.")
    rate_limit_overrides: list[str] = Field(
        default_factory=list,
        description="Other numbers for named limits: NAME=COUNT or NAME=COUNT/SECONDS, e.g. api/user=200.",
    )
    platform_ranges: list[str] = Field(
        default_factory=lambda: ["160.79.104.0/21"],
        description="Networks of MCP platforms (claude.ai): one backstop per range instead of per-address limits.",
    )
    platform_ranges_source: str = Field(
        default="",
        description="More platform networks (OpenAI's): an https URL or a file, read every 6 h into Redis or var_dir.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Proxies (addresses or CIDR) whose X-Forwarded-For names the client (limits, sign-in, /metrics).",
    )
    redis_url: SecretStr = Field(
        default=SecretStr(""),
        description="Redis (redis://host:6379/0) for what every worker shares: rate-limit counters, resource changes; unset: in process.",
    )
    redis_fail_closed: bool = Field(
        default=False,
        description="Refuse requests while Redis is unreachable, with 503 and Retry-After (default: let them through).",
    )
    # E-mail to students (campus_mcp.base.mail): a seat watch's opening. Unset host: nobody is e-mailed.
    smtp_host: str = Field(
        default="", description="The campus's SMTP server that sends students' e-mail (seat watches); unset: none sent."
    )
    smtp_port: int = Field(default=587, ge=1, le=65535, description="The SMTP server's port (587 STARTTLS, 465 TLS).")
    smtp_tls: Literal["none", "starttls", "tls"] = Field(
        default="starttls",
        description="How the SMTP connection is encrypted: starttls (port 587), tls (465), none (a relay on this machine only).",
    )
    smtp_username: str = Field(default="", description="The SMTP account's name; unset: no login.")
    smtp_password: SecretStr = Field(default=SecretStr(""), description="The SMTP account's password.")
    smtp_sender: str = Field(
        default="", description="The From address of students' e-mail (seat-watch@school.edu); needed with the host."
    )
    smtp_timeout_seconds: float = Field(
        default=20.0, gt=0, description="How long one SMTP conversation may take before the mail is retried later."
    )
    session_hours: int = Field(default=12, description="How long a dashboard sign-in lasts.")
    oidc_issuer: str = Field(default="", description="The campus identity provider (OpenID Connect issuer URL).")
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr = SecretStr("")
    oidc_button_label: str = "Sign in with your campus account"
    oidc_scopes: str = Field(
        default="openid profile email", description="The scopes asked of the identity provider, space-separated."
    )
    oidc_student_id_claim: str = Field(
        default="preferred_username",
        description="The claim that is the campus student id (preferred_username, email, eduPersonPrincipalName, uin).",
    )
    oidc_admit_claim: str = Field(
        default="", description="The claim that admits a student (groups, eduPersonAffiliation); unset: everyone."
    )
    oidc_admit_values: list[str] = Field(
        default_factory=lambda: ["student"],
        description="Values of oidc_admit_claim that admit a student (any one; comma-separated).",
    )
    oidc_help_contact: str = Field(
        default="your campus IT service desk", description="Whom a person the sign-in refuses is told to ask."
    )
    saml_idp_metadata: str = Field(
        default="",
        description="The campus SAML IdP's metadata: a file, or an https URL (the IdP's own or a federation's per-entity URL).",
    )
    saml_idp_metadata_cert: str = Field(
        default="",
        description="A certificate (PEM) the IdP's metadata must be signed with (a federation's); unset: not checked.",
    )
    saml_idp_entity_id: str = Field(
        default="", description="The IdP's entityID, when the metadata names more than one."
    )
    saml_sp_key_file: str = Field(
        default="", description="This SAML SP's private key (PEM): signs AuthnRequests, decrypts encrypted assertions."
    )
    saml_sp_cert_file: str = Field(
        default="", description="The certificate of saml_sp_key_file (PEM), published in the SP metadata."
    )
    saml_button_label: str = "Sign in with your campus account (SAML)"
    saml_student_id_attribute: str = Field(
        default="eduPersonPrincipalName",
        description="The SAML attribute that is the campus student id (friendly name or urn:oid: name).",
    )
    saml_display_name_attribute: str = Field(
        default="displayName", description="The SAML attribute that names the student."
    )
    saml_admit_attribute: str = Field(
        default="", description="The SAML attribute that admits a student (eduPersonAffiliation); unset: everyone."
    )
    saml_admit_values: list[str] = Field(
        default_factory=lambda: ["student"],
        description="Values of saml_admit_attribute that admit a student (any one; comma-separated; scoped values match too).",
    )
    saml_clock_skew_seconds: int = Field(
        default=60,
        ge=0,
        le=300,
        description="Seconds of clock difference a SAML assertion's times may show (at most 300).",
    )
    saml_metadata_refresh_hours: int = Field(
        default=12, ge=1, description="How long IdP metadata fetched from a URL is kept before it is fetched again."
    )
    cas_server_url: str = Field(
        default="",
        description="The campus CAS server (CAS 3.0), e.g. https://cas.campus.edu/cas; unset: no CAS button.",
    )
    cas_button_label: str = "Sign in with your campus account (CAS)"
    cas_student_id_attribute: str = Field(
        default="", description="The CAS attribute that is the campus student id; unset: the CAS user name."
    )
    cas_display_name_attribute: str = Field(
        default="displayName", description="The CAS attribute that names the student."
    )
    cas_admit_attribute: str = Field(
        default="", description="The CAS attribute that admits a student (eduPersonAffiliation); unset: everyone."
    )
    cas_admit_values: list[str] = Field(
        default_factory=lambda: ["student"],
        description="Values of cas_admit_attribute that admit a student (any one; comma-separated).",
    )
    campus_id_pattern: str = Field(
        default=r"[\x21-\x7e]{1,64}",
        description=(
            "A regular expression the whole campus student id from a campus sign-in must match (OIDC, SAML, CAS), "
            "and each of the enrollment feed's; default: printable ASCII, no whitespace, at most 64 characters. "
            "Control, invisible and look-alike characters are refused whatever it allows."
        ),
    )
    sign_in_document_max_bytes: int = Field(
        default=2 * 1024 * 1024,
        ge=1024,
        description=(
            "The most read of one document of the campus sign-in service: OpenID Connect discovery, its "
            "keys (JWKS), token answer and userinfo, a CAS answer, the SAML metadata (a few KB each; a "
            "larger one is refused and the log says so)."
        ),
    )
    jwks_max_keys: int = Field(
        default=50,
        ge=1,
        description="The most keys the campus sign-in service's JWKS may list (a provider publishes a few).",
    )
    oauth_metadata_loopback_for_tests: bool = Field(
        default=False,
        description="TESTS ONLY: let client ID metadata documents come from loopback on any port.",
    )
    oauth_metadata_ca_file: str = Field(
        default="", description="TESTS ONLY: a CA bundle that client ID metadata document fetches trust."
    )
    # Campus
    timezone: str = "America/New_York"
    campus_name: str = "Wentworth Institute of Technology"
    campus_short_name: str = "WIT"
    product_name: str = "Campus MCP"
    icon: str = Field(
        default="",
        description=(
            "The campus icon clients show: an image file (.svg, .png, .jpg, .webp; served at /icons/campus.EXT) "
            "or an https:// URL; unset, the product's own drawing."
        ),
    )
    advisor_message: str = Field(
        default=DEFAULT_ADVISOR_MESSAGE,
        description="The advisory text put in answers; `{campus}` becomes the short name, `{product}` the product's name.",
    )

    @field_validator(
        "plugins",
        "disable",
        "allowed_hosts",
        "allowed_origins",
        "step_up_clients",
        "metrics_addresses",
        "rate_limit_overrides",
        "platform_ranges",
        "trusted_proxies",
        "oidc_admit_values",
        "saml_admit_values",
        "cas_admit_values",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            items = [part.strip() for part in value.split(",") if part.strip()]
            return items
        return value

    @field_validator("campus_id_pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"CAMPUS_MCP_CAMPUS_ID_PATTERN is not a regular expression ({exc})") from exc
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if config_file().is_file():
            sources.append(_HostTomlSource(settings_cls, toml_file=config_file()))
        return tuple(sources)

    @property
    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/api/mcp"

    @property
    def advisor_text(self) -> str:
        return self.advisor_message.format(campus=self.campus_short_name, product=self.product_name)

    @property
    def oidc_sign_in(self) -> bool:
        """OpenID Connect sign-in is set up: an issuer and the client it registered."""
        return bool(self.oidc_issuer and self.oidc_client_id)

    @property
    def saml_sign_in(self) -> bool:
        return bool(self.saml_idp_metadata)

    @property
    def cas_sign_in(self) -> bool:
        return bool(self.cas_server_url)

    @property
    def mail_configured(self) -> bool:
        """Students can be e-mailed: an SMTP host and a sender are set (``campus-mcp check`` says what is missing)."""
        return bool(self.smtp_host and self.smtp_sender)

    @property
    def campus_sign_in(self) -> bool:
        """A campus sign-in (OpenID Connect, SAML or CAS) is set up: students are the campus's, known
        by their campus id. The one rule every part asks (the login page, the enrollment feed that
        creates the students it names, ``campus-mcp check``), so they never disagree."""
        return self.oidc_sign_in or self.saml_sign_in or self.cas_sign_in

    @property
    def key_is_generated(self) -> bool:
        """True when the seal key is the demo mode's generated one (one machine's file), not a
        configured ``CAMPUS_MCP_SECRET_KEY`` that every worker and machine shares."""
        return not self.secret_key.get_secret_value()

    def seal_key(self) -> bytes:
        """The 32-byte key that seals requestState and, derived, the session cookie.

        A configured ``CAMPUS_MCP_SECRET_KEY`` always wins. In demo mode without one, the key is
        random, made on first start and kept in ``var_dir/secret.key`` (owner-only) so that a
        restart keeps students signed in; never a fixed key, which anyone could forge sessions
        with. Outside demo mode a missing key stops start-up.
        """
        raw = self.secret_key.get_secret_value()
        if raw:
            return hashlib.sha256(raw.encode()).digest()
        if not self.demo:
            raise RuntimeError(
                "CAMPUS_MCP_SECRET_KEY is not set. Set it to a long random value (the same "
                "on every worker), for example: python -c 'import secrets; "
                "print(secrets.token_urlsafe(48))'"
            )
        return generated_key(Path(self.var_dir) / "secret.key")


def settings_problem(exc: ValidationError) -> str:
    """What is wrong with the settings, for a command's one-line error: where each bad value is set
    and why it is refused. Never the value: a bad CAMPUS_MCP_SECRET_KEY or database URL must not
    reach the terminal."""
    problems = []
    for error in exc.errors(include_input=False, include_url=False):
        field = str(error["loc"][0]) if error["loc"] else ""
        where = f"CAMPUS_MCP_{field.upper()} ({field} in {config_file()})" if field else str(config_file())
        problems.append(f"{where}: {str(error['msg']).removeprefix('Value error, ')}")
    return f"the settings are not valid: {'; '.join(problems)}. Correct them and start again."
