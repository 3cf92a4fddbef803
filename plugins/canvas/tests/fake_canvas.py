"""A fake Canvas on loopback: Canvas's real paths, its OAuth2 endpoints, its pagination, its
rate-limit headers and its error answers, for the Canvas family's tests.

Canvas is a Rails application whose dependencies are not in this machine's package registries, so
it cannot run here; this serves what the family reads from it. The bodies come from the files in
``fixtures/``, each naming where its shape comes from (Canvas's published API documentation, the
MIT-licensed canvasapi test fixtures). What the fake adds is Canvas's behaviour around them:

- OAuth2: ``GET /login/oauth2/auth`` shows an "Authorize" page (a browser clicks it; ``approve``
  makes it redirect at once), ``POST /login/oauth2/token`` trades a code once and a refresh token
  any number of times (``invalid_grant`` otherwise), ``DELETE /login/oauth2/token`` revokes.
- The API answers only a live access token; anything else is ``401`` with ``WWW-Authenticate``.
- Pages: ``per_page`` (at most ``max_per_page``) and ``page``, with a ``Link`` header of ``next``,
  ``current``, ``first`` and ``last`` as Canvas writes it; the planner filters by its window and the
  announcements by ``context_codes[]``.
- ``X-Rate-Limit-Remaining`` and ``X-Request-Cost`` on every API answer; ``rate_limited`` answers
  the next N API requests ``403 Forbidden (Rate Limit Exceeded)``.
- Faults per test: a slow answer (``delay_seconds``), a status for a path (``fail``), a page of
  more than 4 MB (``huge``), a next link to another origin (``foreign_next``).

Every request is recorded (``seen``) with whether it carried a token, never the token itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import uvicorn
from litestar import Litestar, Request, Response, route
from litestar.enums import HttpMethod
from litestar.params import FromPath

FIXTURES = Path(__file__).with_name("fixtures")
CLIENT_ID = "10000000000042"
CLIENT_SECRET = "fake-developer-key-secret-do-not-log"
FIXTURE_ORIGIN = "https://canvas.example.edu"
RATE_LIMITED_BODY = "403 Forbidden (Rate Limit Exceeded)"
FIXTURE_WEEK = date(2030, 9, 9)
MOMENT = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@dataclasses.dataclass(frozen=True)
class Seen:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    authorized: bool

    def param(self, name: str) -> list[str]:
        return [value for key, value in self.query if key == name]


@dataclasses.dataclass
class Token:
    user: dict[str, Any]
    refresh: str
    expires_at: float
    revoked: bool = False


@dataclasses.dataclass
class FakeCanvas:
    origin: str = ""
    approve: bool = False  # GET /login/oauth2/auth redirects at once (no page to click)
    expires_in: int = 3600
    max_per_page: int = 100
    delay_seconds: float = 0.0
    rate_limited: int = 0
    remaining: float = 700.0
    cost: float = 1.0
    huge: bool = False
    fail: dict[str, int] = dataclasses.field(default_factory=dict)
    foreign_next: str | None = None
    # The fixtures' week (from Monday 9 September 2030) moved to the week of this day, every time in them.
    week_of: date | None = None
    seen: list[Seen] = dataclasses.field(default_factory=list)
    authorizations: list[dict[str, str]] = dataclasses.field(default_factory=list)
    codes: dict[str, str] = dataclasses.field(default_factory=dict)  # code -> redirect_uri
    tokens: dict[str, Token] = dataclasses.field(default_factory=dict)  # access token -> its grant
    refresh_tokens: dict[str, bool] = dataclasses.field(default_factory=dict)  # refresh token -> live

    def reset(self) -> None:
        """A well Canvas that has given no token yet (each test connects its own campus)."""
        self.approve = False
        self.expires_in = 3600
        self.max_per_page = 100
        self.delay_seconds = 0.0
        self.rate_limited = 0
        self.remaining = 700.0
        self.cost = 1.0
        self.huge = False
        self.fail = {}
        self.foreign_next = None
        self.week_of = None
        self.seen.clear()
        self.authorizations.clear()
        self.codes.clear()
        self.tokens.clear()
        self.refresh_tokens.clear()

    def api_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.path.startswith("/api/")]

    def grants(self, kind: str) -> list[Seen]:
        return [s for s in self.seen if s.path == "/login/oauth2/token" and s.param("grant_type") == [kind]]

    def live_tokens(self) -> list[str]:
        return [access for access, token in self.tokens.items() if not token.revoked and token.expires_at > time.time()]

    def revoke_everything(self) -> None:
        """What a student removing the app under Approved Integrations in Canvas does."""
        for token in self.tokens.values():
            token.revoked = True
        for refresh in self.refresh_tokens:
            self.refresh_tokens[refresh] = False

    def expire_access_tokens(self) -> None:
        for token in self.tokens.values():
            token.expires_at = time.time() - 1

    # --- OAuth2 ----------------------------------------------------------------------------

    def authorize(self, query: Mapping[str, str]) -> Response[Any]:
        self.authorizations.append(dict(query))
        if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
            return Response({"error": "invalid_client"}, status_code=400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = query.get("redirect_uri", "")
        back = f"{query.get('redirect_uri', '')}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        denied = (
            f"{query.get('redirect_uri', '')}?{urlencode({'error': 'access_denied', 'state': query.get('state', '')})}"
        )
        if self.approve:
            return Response("", status_code=302, headers={"Location": back})
        page = (
            "<!doctype html><html><head><title>Authorize Campus MCP</title></head><body>"
            "<h1>Campus MCP is requesting access to your account</h1>"
            f'<p><a id="authorize" href="{back}">Authorize</a> <a id="cancel" href="{denied}">Cancel</a></p>'
            "</body></html>"
        )
        return Response(page, media_type="text/html")

    def _issue(self, user: dict[str, Any], refresh: str) -> dict[str, Any]:
        access = f"fake-access-{secrets.token_urlsafe(12)}"
        self.tokens[access] = Token(user=user, refresh=refresh, expires_at=time.time() + self.expires_in)
        return {"access_token": access, "token_type": "Bearer", "user": user, "expires_in": self.expires_in}

    def token(self, form: Mapping[str, str]) -> Response[Any]:
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return Response({"error": "invalid_client", "error_description": "unknown client"}, status_code=401)
        grant = form.get("grant_type")
        shape = fixture("token")
        if grant == "authorization_code":
            code = form.get("code", "")
            if self.codes.pop(code, None) != form.get("redirect_uri") or not code:
                return Response({"error": "invalid_grant", "error_description": "bad code"}, status_code=400)
            refresh = f"fake-refresh-{secrets.token_urlsafe(12)}"
            self.refresh_tokens[refresh] = True
            return Response(
                shape["authorization_code"]
                | self._issue(shape["authorization_code"]["user"], refresh)
                | {"refresh_token": refresh}
            )
        if grant == "refresh_token":
            refresh = form.get("refresh_token", "")
            if not self.refresh_tokens.get(refresh):
                return Response(
                    {"error": "invalid_grant", "error_description": "refresh_token not found"}, status_code=400
                )
            return Response(shape["refresh_token"] | self._issue(shape["refresh_token"]["user"], refresh))
        return Response({"error": "unsupported_grant_type"}, status_code=400)

    def revoke(self, access: str | None) -> Response[Any]:
        token = self.tokens.get(access or "")
        if token is None or token.revoked or token.expires_at < time.time():
            return _unauthorized()
        token.revoked = True
        self.refresh_tokens[token.refresh] = False
        return Response({})

    # --- the API ---------------------------------------------------------------------------

    def api(self, request: Request[Any, Any, Any], path: str, access: str | None) -> Response[Any]:
        token = self.tokens.get(access or "")
        if token is None or token.revoked or token.expires_at < time.time():
            return _unauthorized()
        self.remaining -= self.cost
        headers = {"X-Rate-Limit-Remaining": f"{max(self.remaining, 0):.1f}", "X-Request-Cost": f"{self.cost:.1f}"}
        if self.rate_limited > 0:
            self.rate_limited -= 1
            return Response(RATE_LIMITED_BODY, status_code=403, media_type="text/plain", headers=headers)
        if path in self.fail:
            return Response(
                {"errors": [{"message": "An error occurred."}]}, status_code=self.fail[path], headers=headers
            )
        if self.huge:
            filler = [{"id": n, "title": "x" * 1000} for n in range(5000)]
            return Response(filler, headers=headers)
        items = self._items(request, path)
        if items is None:
            return Response(
                {"errors": [{"message": "The specified resource does not exist."}]}, status_code=404, headers=headers
            )
        return self._page(request, path, items, headers)

    def _items(self, request: Request[Any, Any, Any], path: str) -> list[Any] | None:
        names = {
            "/api/v1/courses": "courses",
            "/api/v1/planner/items": "planner_items",
            "/api/v1/users/self/missing_submissions": "missing_submissions",
            "/api/v1/courses/101/assignments": "assignments_101",
            "/api/v1/announcements": "announcements",
        }
        if path not in names:
            return None
        text = json.dumps(fixture(names[path])["body"]).replace(FIXTURE_ORIGIN, self.origin)
        if self.week_of is not None:
            days = timedelta(days=(self.week_of - timedelta(days=self.week_of.weekday()) - FIXTURE_WEEK).days)
            text = MOMENT.sub(lambda m: (_moment(m.group(1)) + days).strftime("%Y-%m-%dT%H:%M:%SZ"), text)  # type: ignore[operator]
        items: list[Any] = json.loads(text)
        query = request.query_params
        if path == "/api/v1/planner/items":
            start, end = _moment(query.get("start_date")), _moment(query.get("end_date"))
            items = [i for i in items if _within(_moment(i.get("plannable_date")), start, end)]
        if path == "/api/v1/announcements":
            wanted = set(query.getall("context_codes[]", []))
            items = [i for i in items if i.get("context_code") in wanted]
        return items

    def _page(
        self, request: Request[Any, Any, Any], path: str, items: list[Any], headers: dict[str, str]
    ) -> Response[Any]:
        query = request.query_params
        size = max(1, min(int(query.get("per_page", "10")), self.max_per_page))
        page = max(1, int(query.get("page", "1")))
        last = max(1, -(-len(items) // size))
        kept = [(key, value) for key, value in query.multi_items() if key not in ("page", "per_page")]

        def link(number: int, origin: str | None = None) -> str:
            return f"{origin or self.origin}{path}?{urlencode([*kept, ('page', str(number)), ('per_page', str(size))])}"

        links = [f'<{link(page)}>; rel="current"', f'<{link(1)}>; rel="first"', f'<{link(last)}>; rel="last"']
        if page < last:
            links.insert(0, f'<{link(page + 1, self.foreign_next)}>; rel="next"')
        return Response(items[(page - 1) * size : page * size], headers=headers | {"Link": ",".join(links)})


def _unauthorized() -> Response[Any]:
    # Canvas's answer to an invalid, expired or revoked token: 401 with WWW-Authenticate.
    return Response(
        {"errors": [{"message": "Invalid access token."}]},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="canvas-lms"'},
    )


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _within(moment: datetime | None, start: datetime | None, end: datetime | None) -> bool:
    if moment is None:
        return True
    return (start is None or moment >= start) and (end is None or moment <= end)


def _bearer(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization", "")
    return header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else None


def build_app(fake: FakeCanvas) -> Litestar:
    @route("/{endpoint:path}", http_method=[HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE])
    async def canvas(request: Request[Any, Any, Any], endpoint: FromPath[str]) -> Response[Any]:
        path = "/" + endpoint.lstrip("/")
        form = dict(await request.form()) if request.method == "POST" else {}
        query = tuple(
            (k, str(v))
            for k, v in [*request.query_params.multi_items(), *form.items()]
            if k not in ("client_secret", "code", "refresh_token")
        )
        access = _bearer(request)
        fake.seen.append(Seen(request.method, path, query, access is not None))
        if fake.delay_seconds:
            await asyncio.sleep(fake.delay_seconds)
        if path in fake.fail:
            return Response({"errors": [{"message": "An error occurred."}]}, status_code=fake.fail[path])
        if path == "/login/oauth2/auth" and request.method == "GET":
            return fake.authorize({k: str(v) for k, v in request.query_params.items()})
        if path == "/login/oauth2/token" and request.method == "POST":
            return fake.token({k: str(v) for k, v in form.items()})
        if path == "/login/oauth2/token" and request.method == "DELETE":
            return fake.revoke(access)
        if path.startswith("/api/") and request.method == "GET":
            return fake.api(request, path, access)
        return Response({"errors": [{"message": "The specified resource does not exist."}]}, status_code=404)

    return Litestar(route_handlers=[canvas], debug=False, logging_config=None)


@contextlib.asynccontextmanager
async def serve_on_loopback(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (a port of the kernel's) in this event loop."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1)
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def serve_fake_canvas(fake: FakeCanvas) -> AsyncIterator[FakeCanvas]:
    async with serve_on_loopback(build_app(fake)) as origin:
        fake.origin = origin
        yield fake
