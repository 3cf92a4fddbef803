"""The step that adds a permission, in the app the student uses (issue 39, point 4).

The change permissions start unchecked (seed 000), so "make my labs green" is often the first
call without one. "Open the app's connector settings" leaves the student to find out where that
is; for the apps students use most, the permission error says where, in that app's own words.
The app is known by its registered name or its client ID (a Client ID Metadata Document's URL
names the app's site); an app we do not know gets the general step. The name only chooses the
words: it is never repeated, as anyone can register any name.

Each step ends on the consent page, where the student checks the box; the seed's 403 step-up
(``step_up_clients``, for apps a test showed sign in again and retry) needs no step at all.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class AppSteps:
    """How to connect an app again in one client: ``marks`` are lower-case words of its name or
    client ID that identify it, ``step`` the words, with ``{product}`` for this service."""

    app: str
    marks: tuple[str, ...]
    step: str


# Most specific first: Claude Code's name also says "Claude".
KNOWN_APPS = (
    AppSteps(
        app="Claude Code",
        marks=("claude code", "claude-code"),
        step=(
            "in Claude Code, run /mcp, choose {product}, clear its authentication and authenticate again "
            "(or, in a shell, claude mcp logout and then claude mcp login with the server's name)"
        ),
    ),
    AppSteps(
        app="ChatGPT",
        marks=("chatgpt", "openai"),
        step=(
            "in ChatGPT, open Settings, then Apps & Connectors, open {product} and disconnect it, then connect it again"
        ),
    ),
    AppSteps(
        app="Claude",
        marks=("claude",),
        step="in Claude, open Settings > Connectors, find {product} and click Disconnect, then Connect again",
    ),
)
GENERAL_STEP = "open the app's connector settings, disconnect {product}, connect it again"


def app_steps(client_name: str | None, client_id: str | None) -> AppSteps | None:
    """The known app a token belongs to, or None."""
    words = f"{client_name or ''} {client_id or ''}".lower()
    return next((known for known in KNOWN_APPS if any(mark in words for mark in known.marks)), None)


def reconnect_step(client_name: str | None, client_id: str | None, product: str) -> str:
    """What the student does in their app to reach the consent page again (lower-case start)."""
    known = app_steps(client_name, client_id)
    return (known.step if known is not None else GENERAL_STEP).format(product=product)
