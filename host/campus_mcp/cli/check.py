"""``campus-mcp check``: a production configuration checked before it serves.

Each problem is one line saying what is wrong and what to do. An error stops ``serve`` outside
demo mode (and makes ``check`` exit 1); a note is printed and does not. The checks that need the
network (the database, the identity provider) are run by ``check``, and by ``serve`` only where
its start would not find the problem itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import os
from collections.abc import Iterable
from typing import Literal
from urllib.parse import urlsplit

from campus_mcp.assembly.registry import Registry
from campus_mcp.base.settings import Settings

MIN_KEY_BYTES = 32
MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"
# Read from the environment by the host outside Settings (the TOML file's name, stdio's token, tests).
OTHER_VARIABLES = frozenset({"CAMPUS_MCP_CONFIG", "CAMPUS_MCP_TOKEN", "CAMPUS_MCP_TEST_DATABASE_URL"})


@dataclasses.dataclass(frozen=True)
class Problem:
    level: Literal["error", "note"]
    text: str

    def __str__(self) -> str:
        return f"{self.level.upper()}: {self.text}"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_problems(settings: Settings, *, workers: int = 1) -> list[Problem]:
    """What the settings alone show (no network): the key, the URL, proxies, Redis, metrics, demo."""
    found: list[Problem] = []
    if settings.demo:
        found.append(
            Problem("error", "demo mode is on (demo students with a known password). Set CAMPUS_MCP_DEMO=false.")
        )
    key = settings.secret_key.get_secret_value()
    if not key:
        found.append(Problem("error", f"CAMPUS_MCP_SECRET_KEY is not set. Set it to a long random value: {MAKE_A_KEY}"))
    elif len(key.encode()) < MIN_KEY_BYTES:
        found.append(
            Problem(
                "error",
                f"CAMPUS_MCP_SECRET_KEY is {len(key.encode())} bytes; it must be at least {MIN_KEY_BYTES}. "
                f"Set a long random value (the same on every worker): {MAKE_A_KEY}",
            )
        )
    public = urlsplit(settings.base_url)
    if public.scheme != "https" and not _loopback(public.hostname or ""):
        found.append(
            Problem(
                "error",
                f"the public URL {settings.base_url} is not https: tokens and passwords would cross the network "
                "in the clear. Put a TLS proxy in front and set CAMPUS_MCP_PUBLIC_URL=https://HOST.",
            )
        )
    if settings.trusted_proxies and not settings.public_url:
        found.append(
            Problem(
                "error",
                "CAMPUS_MCP_TRUSTED_PROXIES names a proxy in front, but CAMPUS_MCP_PUBLIC_URL is unset: the server "
                f"would give apps its own address, {settings.base_url}, in its sign-in and OAuth metadata, which "
                "nobody outside reaches. Set CAMPUS_MCP_PUBLIC_URL to the https address clients use "
                "(https://HOST).",
            )
        )
    if not settings.local_accounts and not settings.campus_sign_in:
        found.append(
            Problem(
                "error",
                "CAMPUS_MCP_LOCAL_ACCOUNTS is false and no campus sign-in is set up: nobody can sign in. Set up "
                "one (CAMPUS_MCP_OIDC_ISSUER with CAMPUS_MCP_OIDC_CLIENT_ID, CAMPUS_MCP_SAML_IDP_METADATA or "
                "CAMPUS_MCP_CAS_SERVER_URL; docs/sign-in.md), or set CAMPUS_MCP_LOCAL_ACCOUNTS=true.",
            )
        )
    if public.scheme == "https" and not settings.trusted_proxies:
        found.append(
            Problem(
                "error",
                f"the public URL is https but serve speaks http on {settings.host}:{settings.port}, so a proxy "
                "answers for it, and CAMPUS_MCP_TRUSTED_PROXIES is empty: every client would look like the proxy to "
                "the rate limits. Set CAMPUS_MCP_TRUSTED_PROXIES to the proxy's address or network.",
            )
        )
    if workers > 1 and settings.rate_limits and not settings.redis_url.get_secret_value():
        found.append(
            Problem(
                "error",
                f"{workers} processes without CAMPUS_MCP_REDIS_URL: each would count the rate limits on its own, "
                "so a client gets the limit once per process. Set CAMPUS_MCP_REDIS_URL=redis://HOST:6379/0.",
            )
        )
    from campus_mcp.base.mail import mail_setting_problems

    found += [Problem("error", text) for text in mail_setting_problems(settings)]
    loopback_only = all(_loopback(entry.split("/")[0]) for entry in settings.metrics_addresses)
    if not settings.metrics_token.get_secret_value() and loopback_only:
        found.append(
            Problem(
                "note",
                "/metrics answers only this machine: set CAMPUS_MCP_METRICS_TOKEN for a scraper elsewhere, or "
                "name its address in CAMPUS_MCP_METRICS_ADDRESSES.",
            )
        )
    return found


def unknown_variables(registry: Registry, environment: Iterable[str] | None = None) -> list[Problem]:
    """``CAMPUS_MCP_`` variables neither the host nor an enabled plugin reads: a typo's setting is
    silently not applied."""
    from campus_mcp.plugin.settings import env_variable

    known = {f"CAMPUS_MCP_{name.upper()}" for name in Settings.model_fields} | OTHER_VARIABLES
    for plugin, model in registry.plugin_settings.items():
        if model is not None:
            known |= {env_variable(plugin, key) for key in type(model).model_fields}
    # A disabled or not-loaded plugin's settings are its own business: left alone while it is off.
    from campus_mcp.assembly.registry import installed_plugin_names

    others = tuple(f"CAMPUS_MCP_{name.upper()}_" for name in installed_plugin_names() if name not in registry.plugins)
    names = os.environ if environment is None else environment
    return [
        Problem("error", f"{name} is not a setting of the host or of an enabled plugin: correct its name or remove it.")
        for name in sorted(names)
        if name.startswith("CAMPUS_MCP_") and name not in known and "__" not in name and not name.startswith(others)
    ]


async def database_problems(registry: Registry) -> list[Problem]:
    """The database answers, and every enabled plugin's migrations are applied."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from campus_mcp.assembly.migrate import alembic_config
    from campus_mcp.base.db import make_engine

    settings = registry.settings
    engine = make_engine(settings.database_url, timeout_seconds=min(settings.database_timeout_seconds, 10))
    try:
        async with engine.connect() as connection:
            current = set(await connection.run_sync(lambda sync: MigrationContext.configure(sync).get_current_heads()))
    except Exception as exc:  # any failure to connect is the one problem reported
        return [
            Problem(
                "error",
                f"the database cannot be reached ({type(exc).__name__}). Check CAMPUS_MCP_DATABASE_URL "
                "(the host, the user and its password, the database name) and that the server runs.",
            )
        ]
    finally:
        await engine.dispose()
    script = ScriptDirectory.from_config(alembic_config(registry))
    behind = [
        plugin
        for plugin in dict.fromkeys(m.plugin for m in registry.migrations)
        if not {revision.revision for revision in script.get_revisions(f"{plugin}@head") if revision} <= current
    ]
    if behind:
        return [
            Problem(
                "error",
                f"the database is not migrated for {', '.join(behind)}. Run `campus-mcp db upgrade` "
                "(or let `serve` do it).",
            )
        ]
    return []


async def redis_problems(settings: Settings) -> list[Problem]:
    """Redis answers a PING, when ``CAMPUS_MCP_REDIS_URL`` is set. ``check`` only: ``serve`` starts
    without it (a request is let through, or refused with ``CAMPUS_MCP_REDIS_FAIL_CLOSED``, until
    it is back), but a URL where nothing answers would leave every process counting on its own."""
    url = settings.redis_url.get_secret_value()
    if not url:
        return []
    from campus_mcp.base.redis_client import redis_client

    client = redis_client(url, timeout_seconds=5)
    try:
        await client.ping()
    except Exception as exc:  # any failure to reach it is the one problem reported
        # Never the URL: it may hold Redis's password.
        return [
            Problem(
                "error",
                f"Redis at CAMPUS_MCP_REDIS_URL does not answer ({type(exc).__name__}): the rate limits and resource "
                "changes would not be shared between processes. Check the host, port, password and database "
                "number in CAMPUS_MCP_REDIS_URL and that Redis runs, or unset it for a single process.",
            )
        ]
    finally:
        await client.aclose()
    return []


async def mail_server_problems(settings: Settings) -> list[Problem]:
    """The SMTP server answers and takes the login, when e-mail is set up. ``check`` only: a mail
    that cannot be sent is kept and retried, so ``serve`` starts without it."""
    from campus_mcp.base.mail import mail_server_problem

    problem = await mail_server_problem(settings)
    if problem is None:
        return []
    return [Problem("error", f"students' e-mail (seat watches) cannot be sent: {problem}.")]


def identity_provider_problems(settings: Settings) -> list[Problem]:
    """The OpenID Connect issuer's metadata answers and names itself, when one is configured."""
    if not settings.oidc_issuer:
        return []
    import httpx

    from campus_mcp.base.outside_documents import DocumentTooLarge, read_document, sign_in_limit

    issuer = settings.oidc_issuer.rstrip("/")
    url = f"{issuer}/.well-known/openid-configuration"

    async def _read() -> httpx.Response:
        async with httpx.AsyncClient(timeout=10) as http:
            limit = sign_in_limit(settings, "the identity provider's metadata")
            return await read_document(http, "GET", url, limit=limit)

    try:
        answer = asyncio.run(_read())
        answer.raise_for_status()
        metadata = answer.json()
    except DocumentTooLarge as exc:
        return [Problem("error", str(exc))]
    except (httpx.HTTPError, ValueError) as exc:
        return [
            Problem(
                "error",
                f"the identity provider's metadata at {url} cannot be read ({type(exc).__name__}). "
                "Check CAMPUS_MCP_OIDC_ISSUER and that this machine reaches it.",
            )
        ]
    missing = [key for key in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri") if key not in metadata]
    if missing or str(metadata.get("issuer", "")).rstrip("/") != issuer:
        return [
            Problem(
                "error",
                f"the identity provider's metadata at {url} is not valid (issuer {metadata.get('issuer')!r}, "
                f"missing {', '.join(missing) or 'nothing'}). Set CAMPUS_MCP_OIDC_ISSUER to the issuer it names.",
            )
        ]
    if not settings.oidc_client_id:
        return [Problem("error", "CAMPUS_MCP_OIDC_CLIENT_ID is not set: the identity provider gave this server one.")]
    return []


def saml_problems(settings: Settings) -> list[Problem]:
    """The SAML IdP's metadata reads, names one IdP and passes its signature check; xmlsec1 is
    installed; the SP's key pair is whole. When SAML is configured."""
    if not settings.saml_idp_metadata:
        return []
    from campus_mcp.oauth.saml import setup_problem

    if bool(settings.saml_sp_key_file) != bool(settings.saml_sp_cert_file):
        return [
            Problem(
                "error",
                "only one of CAMPUS_MCP_SAML_SP_KEY_FILE and CAMPUS_MCP_SAML_SP_CERT_FILE is set: set both "
                "(a key and its certificate) or neither.",
            )
        ]
    problem = asyncio.run(setup_problem(settings))
    return [Problem("error", problem)] if problem else []


def icon_problems(registry: Registry) -> list[Problem]:
    """The campus and family icons (campus_mcp.assembly.icons): each readable, a URL one over https."""
    from campus_mcp.assembly.icons import IconError, icons_of

    try:
        icons = icons_of(registry)
    except IconError as exc:
        return [Problem("error", str(exc))]
    if isinstance(icons.campus, str) and icons.campus.startswith("http://"):
        return [
            Problem(
                "note",
                f"CAMPUS_MCP_ICON is an http:// URL ({icons.campus}): clients on https pages may not show it. "
                "Give its https:// URL, or the file itself (the server then serves it).",
            )
        ]
    return []


def all_problems(registry: Registry, *, workers: int = 1, database: bool = True, redis: bool = False) -> list[Problem]:
    """Every check: ``campus-mcp check``'s (``redis`` too), and ``serve``'s (without the database
    when it migrates, without Redis, which may come back after the start)."""
    found = settings_problems(registry.settings, workers=workers)
    found += unknown_variables(registry)
    found += identity_provider_problems(registry.settings)
    found += saml_problems(registry.settings)
    found += icon_problems(registry)
    if redis:
        found += asyncio.run(redis_problems(registry.settings))
        found += asyncio.run(mail_server_problems(registry.settings))
    if database:
        found += asyncio.run(database_problems(registry))
    return found
