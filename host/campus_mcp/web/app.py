"""The Litestar application: the MCP endpoint, the plugins' routes, and the lifespan.

``create_app`` is the one place that wires things together. Everything per-deployment lives in
a :class:`~campus_mcp.assembly.deployment.Deployment` on ``app.state.deployment`` so that tests can build as
many apps as they like in one process.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from litestar import Litestar, MediaType, Request, Response, Router, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.logging.config import LoggingConfig
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from campus_mcp.assembly.deployment import Deployment
from campus_mcp.assembly.icons import ICON_HANDLERS
from campus_mcp.assembly.registry import PluginError, Registry, load_registry
from campus_mcp.base import metrics
from campus_mcp.base.db import DATABASE_UNREACHABLE_TEXT, database_unreachable, make_engine, make_sessions
from campus_mcp.base.mcp_paths import MCP_PATH
from campus_mcp.base.settings import Settings
from campus_mcp.base.speedups import Switches
from campus_mcp.dashboard.home import HOST_CONTROLLERS
from campus_mcp.jobs.scheduler import scheduler_election
from campus_mcp.jobs.warm_ups import warm_ups
from campus_mcp.limits import bad_token_middleware, limits_middleware, request_limits
from campus_mcp.mcp.endpoint import McpEndpoint, TokenResolver, mcp_route_handlers
from campus_mcp.mcp.server_card import SERVER_CARD_HANDLERS
from campus_mcp.oauth import build_oauth
from campus_mcp.oauth.personal_tokens import PersonalTokens, bearer_resolver, rest_token_middleware_factory
from campus_mcp.oauth.routes import oauth_controllers
from campus_mcp.oauth.session import browser_session_middleware
from campus_mcp.oauth.sign_in import login_controllers
from campus_mcp.plugin.errors import CampusError, SignInNeeded
from campus_mcp.plugin.principal import ANONYMOUS, Principal
from campus_mcp.plugin.route_errors import PLUGIN_ROUTE_HANDLERS
from campus_mcp.students.access_journal import journal_folder
from campus_mcp.students.access_log import AccessLog
from campus_mcp.web.cors import cors_middleware, is_mcp_path
from campus_mcp.web.health import readyz
from campus_mcp.web.openapi import openapi_config, with_access

log = logging.getLogger(__name__)

PLUGIN_OPT = "campus_plugin"


def plugin_routers(registry: Registry) -> list[Router]:
    """One router per route group, tagged with its plugin; clashes are refused naming both."""
    routers: list[Router] = []
    owners: dict[tuple[str, str], str] = {}
    for group in registry.route_groups:
        router = Router(
            path="/",
            route_handlers=[with_access(handler, registry) for handler in group.handlers],
            opt={PLUGIN_OPT: group.plugin},
            exception_handlers=PLUGIN_ROUTE_HANDLERS,  # bad input of a plugin route: a 400 naming the field
        )
        for route in router.routes:
            for method in sorted(getattr(route, "methods", ()) or ()):
                if method in ("HEAD", "OPTIONS"):
                    continue
                key = (method, route.path)
                if key in owners and owners[key] != group.plugin:
                    raise PluginError(
                        f"two plugins register the route {method} {route.path}: {owners[key]!r} and "
                        f"{group.plugin!r}. Disable one of them (CAMPUS_MCP_DISABLE)."
                    )
                owners[key] = group.plugin
        routers.append(router)
    return routers


async def provide_db_session(state: State) -> AsyncIterator[AsyncSession]:
    deployment: Deployment = state.deployment
    async with deployment.session() as session:
        yield session


async def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    """The signed-in student of a REST or page request (set by the sign-in middleware), else anonymous."""
    principal = request.scope.get("campus_principal")
    return principal if isinstance(principal, Principal) else ANONYMOUS


def provide_deployment(state: State) -> Deployment:
    deployment: Deployment = state.deployment
    return deployment


def provide_settings(state: State) -> Settings:
    deployment: Deployment = state.deployment
    return deployment.settings


def provide_plugin_settings(request: Request[Any, Any, Any], state: State) -> Any:
    """The settings object of the plugin that owns the route (its router's PLUGIN_OPT), else None."""
    deployment: Deployment = state.deployment
    return deployment.plugin_settings(str(request.route_handler.opt.get(PLUGIN_OPT, "")))


def campus_error_handler(_request: Request[Any, Any, Any], exc: CampusError) -> Response[Any]:
    body: dict[str, Any] = {"error": type(exc).__name__, "message": exc.message}
    if exc.field:
        body["field"] = exc.field
    headers = {"WWW-Authenticate": exc.challenge} if isinstance(exc, SignInNeeded) else None
    return Response(body, status_code=exc.status, media_type=MediaType.JSON, headers=headers)


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if isinstance(exc, HTTPException):
        return Response(
            {"error": type(exc).__name__, "message": exc.detail, **({"extra": exc.extra} if exc.extra else {})},
            status_code=exc.status_code,
            media_type=MediaType.JSON,
            headers=exc.headers,
        )
    if database_unreachable(exc):
        log.warning("%s %s: the database cannot be reached (%s)", request.method, request.url.path, type(exc).__name__)
        return Response(
            {"error": "DatabaseUnavailable", "message": DATABASE_UNREACHABLE_TEXT},
            status_code=503,
            media_type=MediaType.JSON,
            headers={"Retry-After": "30"},
        )
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return Response(
        {"error": "InternalServerError", "message": "Something failed on the server. It was logged; try again later."},
        status_code=500,
        media_type=MediaType.JSON,
    )


@get("/healthz", media_type=MediaType.JSON, opt={"exclude_from_parity": True})
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/metrics", media_type=metrics.CONTENT_TYPE, opt={"exclude_from_parity": True}, guards=[metrics.metrics_guard])
async def metrics_page() -> str:
    return metrics.render()


def create_app(
    settings: Settings | None = None,
    *,
    registry: Registry | None = None,
    extra_plugins: Iterable[tuple[str, object]] = (),
    resolve_token: TokenResolver | None = None,
    extra_handlers: Sequence[Any] = (),
    run_scheduler: bool | None = None,
    engine: AsyncEngine | None = None,
) -> Litestar:
    """``engine``: a ready engine for the database (the test kit passes one without a pool on
    PostgreSQL); by default one is made from ``CAMPUS_MCP_DATABASE_URL``."""
    settings = settings or Settings()
    registry = registry or load_registry(settings, extra_plugins)
    engine = (
        engine
        if engine is not None
        else make_engine(
            registry.settings.database_url,
            timeout_seconds=registry.settings.database_timeout_seconds,
            pool=(registry.settings.database_pool_size, registry.settings.database_pool_overflow),
            speedups=Switches.of(registry.settings),
        )
    )
    sessions = make_sessions(engine)
    # The authorization server (oauth/): bearer tokens of /api/mcp resolve through it.
    oauth = build_oauth(registry, sessions)
    # No allow list, no step-up: the endpoint then leaves request bodies to the SDK alone.
    step_up = oauth.step_up_allowed if registry.settings.step_up_clients else None
    # Personal access tokens (issue 14.3) work on /api/mcp beside OAuth tokens, and on the REST routes.
    personal_tokens = PersonalTokens(sessions, registry.settings)
    resolver = resolve_token or bearer_resolver(personal_tokens, oauth.resolve_token)
    # /api/mcp, /api/mcp/toolboxes and /api/mcp/{plugin}: one server each, one bearer check (endpoint.py).
    endpoint = McpEndpoint(registry, sessions, resolver, step_up=step_up)
    endpoint.other_resource = oauth.other_resource
    # Rate limits (campus_mcp.limits): per student, per address, per platform range.
    limits = request_limits(registry.settings)
    endpoint.admit = None if limits is None else limits.admit_mcp
    # The access log of student data (campus_mcp.students.access_log): one writer for every endpoint, its
    # entries journaled on this machine until they are in the database (campus_mcp.students.access_journal).
    access_log = AccessLog(
        sessions,
        journal_folder(registry.settings.var_dir, registry.settings.database_url),
        enabled=registry.settings.student_access_log,
    )
    for server in endpoint.servers.values():
        server.access_log = access_log
    deployment = Deployment(
        registry=registry, engine=engine, sessions=sessions, mcp=endpoint.flat, endpoint=endpoint, access_log=access_log
    )
    with_scheduler = registry.settings.scheduler if run_scheduler is None else run_scheduler

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # This process's scheduler runs only while it wins the election (campus_mcp.jobs.leader).
        election = scheduler_election(registry, sessions, name="serve") if with_scheduler else None
        if election is not None:
            election.start()
        access_log.start()  # the entries of this machine's processes that were killed, to the database
        try:
            # The plugins' warm-ups run beside the server, never before it answers (warm_ups).
            async with endpoint.run(), warm_ups(registry, sessions):
                yield
        finally:
            if election is not None:
                await election.stop()  # releases the scheduler lock: a standby takes over at once
            await access_log.close()
            await engine.dispose()

    return Litestar(
        route_handlers=[
            *mcp_route_handlers(endpoint),
            healthz,
            readyz,
            metrics_page,
            *HOST_CONTROLLERS,
            *oauth_controllers(oauth),
            *login_controllers(registry.settings),
            *plugin_routers(registry),
            *SERVER_CARD_HANDLERS,
            *ICON_HANDLERS,
            *extra_handlers,
        ],
        dependencies={
            "db_session": Provide(provide_db_session),
            "principal": Provide(provide_principal),
            "deployment": Provide(provide_deployment, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
            "plugin_settings": Provide(provide_plugin_settings, sync_to_thread=False),
        },
        exception_handlers={CampusError: campus_error_handler, Exception: internal_error_handler},
        # The session cookie, then the student it signs in (for the dashboard and REST user routes).
        # Last, a personal access token on a REST request, which then acts with the token's scopes.
        middleware=[
            # Outermost: each request's time and answer by its route template (campus_mcp.base.metrics).
            metrics.http_timing_middleware,
            cors_middleware(registry),  # first: a preflight is answered before the session is read
            # Not for an MCP request that sends no session cookie: it would read nothing there.
            browser_session_middleware(registry, sessions, cookieless_skip=is_mcp_path),
            *bad_token_middleware(limits),  # outside every bearer check: counts the 401s of bad tokens
            rest_token_middleware_factory(personal_tokens, [MCP_PATH]),
            *limits_middleware(limits),  # last: it counts the student the others found
        ],
        lifespan=[lifespan],
        # "oauth": the authorization server, for the host's sign-in and dashboard controllers.
        state=State({"deployment": deployment, "oauth": oauth, "personal_tokens": personal_tokens}),
        # The REST API's document, /api/v1/openapi.json (campus_mcp.web.openapi): only the operations'
        # routes put themselves in it, so pages, OAuth, /api/mcp and /healthz stay out.
        openapi_config=openapi_config(registry),
        include_in_schema=False,
        # Litestar's default would replace the root logger's handlers: an operator's own logging
        # set-up would be lost, and pytest's caplog would see nothing. `campus-mcp serve` sets up
        # the root logger itself (campus_mcp.base.log_lines), and Litestar's logger passes its lines on to
        # it, so they come in the one format of the log.
        logging_config=LoggingConfig(
            configure_root_logger=False, loggers={"litestar": {"level": "INFO", "handlers": [], "propagate": True}}
        ),
        debug=False,
    )
