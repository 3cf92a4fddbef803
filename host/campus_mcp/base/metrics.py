"""Metrics in the Prometheus text format (prometheus-client), served at ``/metrics``.

What is counted (every name starts ``campus_mcp_``):

- ``tool_calls_total{outcome,tool}``: each ``tools/call`` by its outcome (:data:`TOOL_CALL_OUTCOMES`);
- ``scope_denials_total{scope,tool}``: a call refused for a missing scope, on MCP or a REST twin;
- ``job_runs_total{job,outcome}`` and ``job_run_duration_seconds{job,outcome}``: each recorded run
  (ok, partial, failed; abandoned when a later process found its owner dead, with no duration);
- ``import_items_failed_total{kind,source}``: the items an import could not store, by kind of failure;
- ``http_request_duration_seconds{method,route,status}``: each routed request, by the route's
  template (``/api/v1/catalog/sections/{crn}``, never the path a client sent, so ids make no series)
  and the status class (``2xx``); a path that matches no route is not timed;
- whatever a plugin counts with ``count_metric``.

Labels hold names the deployment chose (tools, scopes, jobs, kinds) and never a token, a secret or
a student's name or id: a plugin's ``count_metric`` labels must keep to that too.

Several processes (``serve --workers N``, or several ``serve`` on one machine): a counter lives in
its process, so each process alone would report a part. prometheus-client's multiprocess mode
keeps every process's values in files of one folder, ``PROMETHEUS_MULTIPROC_DIR``, and any
process's ``/metrics`` reads and sums them all. ``serve --workers N`` sets it up
(:func:`share_between_workers`); several separate ``serve`` processes get it from the operator.
The mode is chosen when prometheus-client is imported, so the folder must be in the environment
before the process starts, or be ``CAMPUS_MCP_METRICS_DIR``, which ``serve``, ``worker``,
``jobs run`` and every plugin's command (``import enrollments``) put there before they import it
(serving.use_metrics_folder): one setting for all of them, so a separate ``worker``'s job counts
and a command-line import's refused rows reach ``serve``'s ``/metrics``.

``/metrics`` names every tool, scope and outcome a deployment sees, so it is not public
(:func:`metrics_guard`): a scraper reads it from an address in ``CAMPUS_MCP_METRICS_ADDRESSES``
(default: loopback only) or with the bearer token ``CAMPUS_MCP_METRICS_TOKEN``. The address is
the client's, as every limit sees it (``client_address``): the X-Forwarded-For client when the
peer is in ``CAMPUS_MCP_TRUSTED_PROXIES``. A request that carries a proxy's forwarding headers
from a peer that is not trusted (a same-host nginx the deployment did not list) has no address
the check can use, so only the token lets it through: otherwise the whole internet would be
"loopback" behind such a proxy. A request let in by its address must also name a ``Host`` this
server answers to (campus_mcp.base.dns_rebinding, the rule of ``/api/mcp``): a page on another site
that rebinds its name to 127.0.0.1 makes a browser here send exactly such a request, under the
page's own name (421). The token admits whatever the ``Host`` (a scraper that reaches a pod by its
address names that address), since no page can send a token it does not know.
"""

from __future__ import annotations

import contextvars
import hmac
import ipaddress
import os
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.status_codes import HTTP_421_MISDIRECTED_REQUEST
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

from campus_mcp.base.addresses import client_address, through_unknown_proxy, trusted_proxies
from campus_mcp.base.dns_rebinding import allowed_hosts, host_allowed

if TYPE_CHECKING:
    from litestar.types import ASGIApp, Message, Receive, Scope, Send

    from campus_mcp.base.settings import Settings

# The outcome of the call being answered, as count_tool_call counted it: the call's log line
# (campus_mcp.mcp.call_log) says it too.
tool_outcome: contextvars.ContextVar[str | None] = contextvars.ContextVar("campus_mcp_tool_outcome", default=None)
PREFIX = "campus_mcp_"
# The folder of multiprocess mode: prometheus-client's own variable, read when it is imported.
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
# The text format every Prometheus reads (the names here need nothing newer), without the
# charset: Litestar adds "; charset=utf-8" to a text media type itself.
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4.removesuffix("; charset=utf-8")

# No ``*_created`` series beside each counter: nothing here reads them, and they double the page.
disable_created_metrics()  # type: ignore[no-untyped-call]
# The campus's own registry: no process or platform series, and a plugin's library that registers
# on prometheus-client's default registry does not land on this page.
REGISTRY = CollectorRegistry()
_lock = threading.Lock()

# The outcomes of campus_mcp_tool_calls_total{tool,outcome} (seed 000 "Confirmation"): a question
# sent is input_required, a change the student did not confirm is declined or cancelled; denied is a
# missing scope, error a refused call (bad arguments or requestState), failed a server fault,
# rate_limited a student over the limit (campus_mcp.limits). A client that cannot be asked
# (campus_mcp.mcp.confirmation_code): confirmation_requested is a question and code answered for the
# chat, confirmed_in_band the change its code made, unconfirmed a change refused for want of a form;
# confirmation_page a change left waiting on the confirmation page, confirmed_on_page one the student
# confirmed there (campus_mcp.mcp.confirmation_page).
TOOL_CALL_OUTCOMES = (
    "ok",
    "error",
    "failed",
    "denied",
    "input_required",
    "declined",
    "cancelled",
    "rate_limited",
    "confirmation_requested",
    "confirmed_in_band",
    "unconfirmed",
    "confirmation_page",
    "confirmed_on_page",
)

# Labels are declared in name order: the page then reads {outcome="ok",tool="x"} as it always did.
_counters: dict[str, Counter] = {
    "tool_calls_total": Counter(
        PREFIX + "tool_calls_total", "tools/call requests by tool and outcome.", ("outcome", "tool"), registry=REGISTRY
    ),
    "scope_denials_total": Counter(
        PREFIX + "scope_denials_total",
        "Calls refused because the caller lacks the tool's scope, by scope and tool.",
        ("scope", "tool"),
        registry=REGISTRY,
    ),
    "job_runs_total": Counter(
        PREFIX + "job_runs_total", "Recorded job runs by job and outcome.", ("job", "outcome"), registry=REGISTRY
    ),
    "import_items_failed_total": Counter(
        PREFIX + "import_items_failed_total",
        "Items an import could not store, by source and kind of failure.",
        ("kind", "source"),
        registry=REGISTRY,
    ),
}
JOB_RUN_SECONDS = Histogram(
    PREFIX + "job_run_duration_seconds",
    "How long job runs took, by job and outcome.",
    ("job", "outcome"),
    # From a seat refresh (seconds) to a whole catalog sync (tens of minutes).
    buckets=(1, 5, 15, 60, 300, 900, 1800, 3600, float("inf")),
    registry=REGISTRY,
)
HTTP_SECONDS = Histogram(
    PREFIX + "http_request_duration_seconds",
    "HTTP request durations by method, route template and status class.",
    ("method", "route", "status"),
    registry=REGISTRY,
)


# Each series' child by (name, label items), as count() was called: the label-name check, the
# lock and prometheus-client's own label lookup then run once per series, not on every count (a
# tools/call and every request count one). prometheus-client keeps every child it made for as long
# (nothing here removes a series), so this holds no series it does not, and the same objects.
_children: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
_http_children: dict[tuple[str, str, str], Any] = {}


def _family(name: str) -> str:
    return name if name.endswith("_total") else f"{name}_total"


def _counter(name: str, labels: Mapping[str, str]) -> Counter:
    """The counter ``name`` (made on first use for a plugin's own name) with these label names."""
    name = _family(name)
    wanted = tuple(sorted(labels))
    with _lock:
        counter = _counters.get(name)
        if counter is None:
            counter = Counter(
                PREFIX + name, "Counted by a plugin (campus_mcp.count_metric).", wanted, registry=REGISTRY
            )
            _counters[name] = counter
    declared = tuple(counter._labelnames)
    if declared != wanted:
        raise ValueError(
            f"metric {PREFIX}{name} is counted with the labels ({', '.join(declared) or 'none'}), "
            f"not ({', '.join(wanted) or 'none'}): give every count of one metric the same label names"
        )
    return counter


def count(name: str, **labels: str) -> None:
    """Count one event as ``campus_mcp_<name>`` (``_total`` is added when missing).

    Public as ``campus_mcp.count_metric``. Every count of one name takes the same label names;
    label values are names the deployment chose, never a token, secret or student's name.
    """
    key = (name, tuple(labels.items()))
    child = _children.get(key)
    if child is None:
        counter = _counter(name, labels)
        child = counter.labels(**labels) if labels else counter
        _children[key] = child
    child.inc()


def value(name: str, **labels: str) -> int:
    """This process's count of one series; with fewer labels, the sum over the series that match."""
    counter = _counters.get(_family(name))
    if counter is None:
        return 0
    sample_name = PREFIX + _family(name)
    return int(
        sum(
            sample.value
            for family in counter.collect()
            for sample in family.samples
            if sample.name == sample_name and all(sample.labels.get(k) == v for k, v in labels.items())
        )
    )


def count_tool_call(tool: str, outcome: str) -> None:
    """Count one ``tools/call`` by its outcome (one of :data:`TOOL_CALL_OUTCOMES`)."""
    if outcome not in TOOL_CALL_OUTCOMES:
        raise ValueError(f"unknown tool call outcome {outcome!r}; use one of {', '.join(TOOL_CALL_OUTCOMES)}")
    count("tool_calls_total", outcome=outcome, tool=tool)
    tool_outcome.set(outcome)  # for the call's log line (campus_mcp.mcp.call_log)


def count_scope_denial(tool: str, scope: str) -> None:
    # An empty scope is the "needs a signed-in student" refusal (ToolContext.user_id).
    count("scope_denials_total", scope=scope or "signed_in", tool=tool)


def count_job_run(job: str, outcome: str, started: datetime | None = None, finished: datetime | None = None) -> None:
    """Count one recorded run, with its duration when both times are known (an abandoned run's
    end nobody saw; a plugin's naive time against an aware one gives no duration either)."""
    count("job_runs_total", job=job, outcome=outcome)
    if started is None or finished is None or (started.tzinfo is None) != (finished.tzinfo is None):
        return
    JOB_RUN_SECONDS.labels(job=job, outcome=outcome).observe(max((finished - started).total_seconds(), 0.0))


def count_import_failures(source: str, kinds: Mapping[str, int]) -> None:
    """Count the items an import of ``source`` could not store, ``{kind of failure: how many}``.

    Public as ``campus_mcp.count_import_failures``: for example ``("banner", {"timeout": 1})`` or
    ``("enrollment_feed", {"unknown_crn": 3})``. Kinds are a short fixed list, never an item's id.
    """
    counter = _counters["import_items_failed_total"]
    for kind, n in kinds.items():
        if n > 0:
            counter.labels(kind=kind, source=source).inc(n)


def render() -> str:
    """The page a scraper reads: this process's counts, or every process's in multiprocess mode."""
    if os.environ.get(MULTIPROCESS_DIR):
        merged = CollectorRegistry()
        MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        return generate_latest(merged).decode()
    return generate_latest(REGISTRY).decode()


def share_between_workers(settings: Settings) -> Path:
    """Set up multiprocess mode for ``serve --workers N``, in the parent before the workers start.

    The folder is ``PROMETHEUS_MULTIPROC_DIR`` when the operator set one, else
    ``<CAMPUS_MCP_VAR_DIR>/metrics-<port>`` (one per deployment on a machine). Its files are removed
    first: they hold the counts of processes of an earlier start, which would be added again.
    The workers inherit the variable, so their prometheus-client starts in multiprocess mode.
    """
    folder = Path(os.environ.get(MULTIPROCESS_DIR) or Path(settings.var_dir) / f"metrics-{settings.port}")
    folder.mkdir(parents=True, exist_ok=True)
    # CAMPUS_MCP_METRICS_DIR is shared with processes this one did not start (a worker): their files stay.
    for leftover in [] if settings.metrics_dir else folder.glob("*.db"):
        leftover.unlink()
    os.environ[MULTIPROCESS_DIR] = str(folder.resolve())
    return folder


def http_timing_middleware(app: ASGIApp) -> ASGIApp:
    """Time every routed HTTP request by method, route template and status class."""

    async def timed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        method = scope["method"]
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        started = time.perf_counter()
        try:
            await app(scope, receive, sending)
        except Exception as exc:
            # Litestar turns it into the answer outside this middleware: the status it will send.
            if not status:
                status = exc.status_code if isinstance(exc, HTTPException) else 500
            raise
        finally:
            key = (method, str(scope.get("path_template") or "(no route)"), f"{status // 100}xx")
            series = _http_children.get(key)
            if series is None:
                series = _http_children[key] = HTTP_SECONDS.labels(method=key[0], route=key[1], status=key[2])
            series.observe(time.perf_counter() - started)

    return timed


def _address_allowed(host: str | None, allowed: list[str]) -> bool:
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in allowed:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # not an address: nothing matches it
    return False


def _token_allowed(authorization: str, expected: str) -> bool:
    scheme, _, given = authorization.partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    # Constant time, so the answer's timing does not tell how much of a guess was right.
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def metrics_guard(connection: ASGIConnection[Any, Any, Any, Any], _handler: BaseRouteHandler) -> None:
    """Let through a scraper with the metrics token, or one from an allowed address that names a
    ``Host`` this server answers to; refuse the rest."""
    settings = connection.app.state.deployment.settings
    if _token_allowed(connection.headers.get("authorization", ""), settings.metrics_token.get_secret_value()):
        return
    if not host_allowed(connection.headers.get("host"), allowed_hosts(settings)):
        # Admitted by address, a request under another name is a DNS-rebinding page in a browser
        # here (or on a listed network). Not echoed: the Host is the attacker's text.
        raise HTTPException(
            status_code=HTTP_421_MISDIRECTED_REQUEST,
            detail="/metrics answers only the names this server is reached by (loopback, its public URL, "
            "CAMPUS_MCP_ALLOWED_HOSTS), as /api/mcp does. Scrape it by one of them, add the name to "
            "CAMPUS_MCP_ALLOWED_HOSTS, or send the bearer token CAMPUS_MCP_METRICS_TOKEN.",
        )
    trusted = trusted_proxies(settings)
    if not through_unknown_proxy(connection.scope, trusted) and _address_allowed(
        client_address(connection.scope, trusted), settings.metrics_addresses
    ):
        return
    # The message names the settings, never the token (nor what was sent).
    raise PermissionDeniedException(
        "/metrics is open only to the addresses in CAMPUS_MCP_METRICS_ADDRESSES (default: loopback) "
        "or to a scraper that sends the bearer token CAMPUS_MCP_METRICS_TOKEN. Through a proxy, the "
        "address is the client's only when the proxy is in CAMPUS_MCP_TRUSTED_PROXIES."
    )
