"""Canvas's OAuth2 flow with the campus's developer key (canvas.instructure.com/doc/api/file.oauth.html).

- ``GET /login/oauth2/auth``: where the student's browser goes to allow this server
  (``client_id``, ``response_type=code``, ``redirect_uri``, ``state``, and ``scope`` when the key
  enforces scopes: the ``url:GET|/api/v1/...`` entries of :data:`SCOPES`, the reads the tools make).
- ``POST /login/oauth2/token``: the code for tokens (``grant_type=authorization_code``), and later a
  new access token from the refresh token (``grant_type=refresh_token``). Canvas's access tokens
  last an hour; the refresh token lasts until it is revoked.
- ``DELETE /login/oauth2/token``: revokes the access token and its refresh token (disconnect, a
  disabled student).

Every answer is read through ``canvas_http.send`` (one origin, bounded); the client secret and the
tokens travel only in these requests' bodies and headers, never in a log line or an error.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
from campus_mcp import CampusError, utcnow
from pydantic import BaseModel, ConfigDict, ValidationError

from campus_canvas.canvas_http import CanvasUnavailable, _json, send
from campus_canvas.settings import CanvasSettings, canvas_origin, client_credentials

# The reads the tools make, as Canvas names them for a developer key that enforces scopes.
SCOPES = (
    "url:GET|/api/v1/courses",
    "url:GET|/api/v1/courses/:course_id/assignments",
    "url:GET|/api/v1/planner/items",
    "url:GET|/api/v1/users/:user_id/missing_submissions",
    "url:GET|/api/v1/announcements",
)
TOKEN_PATH = "/login/oauth2/token"  # noqa: S105  (a path, not a secret)
AUTHORIZE_PATH = "/login/oauth2/auth"


class CanvasUser(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: int | str
    name: str = ""


class TokenAnswer(BaseModel):
    """What Canvas's token endpoint answers (the refresh grant has no refresh_token)."""

    model_config = ConfigDict(extra="ignore")
    access_token: str
    token_type: str = "Bearer"  # noqa: S105  (a kind of token, not one)
    refresh_token: str | None = None
    expires_in: int | None = None
    user: CanvasUser | None = None

    def expires_at(self, now: datetime | None = None) -> datetime | None:
        return None if self.expires_in is None else (now or utcnow()) + timedelta(seconds=self.expires_in)


class GrantRefused(CampusError):
    """Canvas refused the code or the refresh token (``invalid_grant``, a wrong key): connect again."""

    status = 409


def scopes_for(plugin_settings: CanvasSettings) -> str:
    return " ".join(SCOPES) if plugin_settings.enforce_scopes else ""


def authorize_url(plugin_settings: CanvasSettings, redirect_uri: str, state: str) -> str:
    client_id, _secret = client_credentials(plugin_settings)
    query: dict[str, str] = {
        "client_id": client_id,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "state": state,
    }
    scope = scopes_for(plugin_settings)
    if scope:
        query["scope"] = scope
    return f"{canvas_origin(plugin_settings)}{AUTHORIZE_PATH}?{urlencode(query)}"


async def _token_request(
    client: httpx.AsyncClient, plugin_settings: CanvasSettings, form: dict[str, str]
) -> TokenAnswer:
    client_id, secret = client_credentials(plugin_settings)
    response, body = await send(
        client,
        "POST",
        f"{canvas_origin(plugin_settings)}{TOKEN_PATH}",
        data={**form, "client_id": client_id, "client_secret": secret},
        headers={"Accept": "application/json"},
        seconds=plugin_settings.timeout_seconds,
    )
    if response.status_code in (400, 401):
        raise GrantRefused(_refusal(_json_or_none(body)))
    if response.status_code >= 500 or response.status_code >= 300:
        raise CanvasUnavailable(
            f"Canvas's sign-in answered with an error (HTTP {response.status_code}). Try again in a few minutes.",
            kind="server",
        )
    try:
        return TokenAnswer.model_validate(_json(body))
    except ValidationError as exc:
        raise CanvasUnavailable(
            "Canvas's sign-in answered without a token. Try again later.", kind="unreadable"
        ) from exc


def _json_or_none(body: bytes) -> Any:
    try:
        return _json(body)
    except CanvasUnavailable:
        return None


def _refusal(answer: Any) -> str:
    error = answer.get("error") if isinstance(answer, dict) else None
    # The error code is Canvas's (a fixed word), safe to name; its description is not repeated.
    what = (
        f" ({error})"
        if isinstance(error, str) and error.isascii() and len(error) < 40 and error.replace("_", "").isalpha()
        else ""
    )
    return (
        f"Canvas did not accept the sign-in{what}: the connection is not made or no longer works. "
        "Connect Canvas again from your dashboard."
    )


async def exchange_code(
    client: httpx.AsyncClient, plugin_settings: CanvasSettings, code: str, redirect_uri: str
) -> TokenAnswer:
    return await _token_request(
        client,
        plugin_settings,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "replace_tokens": "1"},
    )


async def refresh(client: httpx.AsyncClient, plugin_settings: CanvasSettings, refresh_token: str) -> TokenAnswer:
    return await _token_request(
        client, plugin_settings, {"grant_type": "refresh_token", "refresh_token": refresh_token}
    )


async def revoke(client: httpx.AsyncClient, plugin_settings: CanvasSettings, access_token: str) -> bool:
    """Revoke the token (and its refresh token) at Canvas; False when Canvas could not be told."""
    try:
        response, _body = await send(
            client,
            "DELETE",
            f"{canvas_origin(plugin_settings)}{TOKEN_PATH}",
            headers={"Authorization": f"Bearer {access_token}"},
            seconds=plugin_settings.timeout_seconds,
        )
    except CanvasUnavailable:
        return False
    return 200 <= response.status_code < 300
