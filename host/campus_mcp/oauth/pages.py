"""The HTML of the sign-in pages and the dashboard shell: accessible, self-contained, escaped.

Every value that came from a request, a client or the database goes through ``escape``. The
pages load one stylesheet from this server and nothing else, so the Content-Security-Policy can
forbid everything but ``'self'``. Each form field has a ``<label>``; checkboxes are real
``<input type=checkbox>`` so a keyboard and a screen reader work without scripts (there are none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import urlsplit

from litestar import MediaType, Response

CSS_PATH = "/assets/campus.css"
CURRENT = ' aria-current="page"'

STYLESHEET = """
:root { color-scheme: light dark; --accent: #8a1c1c; --muted: #666; --line: #ccc; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; }
header.site { display: flex; gap: 1.5rem; align-items: center; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); }
header.site a { color: inherit; }
header.site .brand { font-weight: 700; text-decoration: none; }
header.site nav { display: flex; gap: 1rem; }
header.site form { margin-left: auto; }
header.site form button { margin: 0; }
main { max-width: 42rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
input[type=text], input[type=password] { width: 100%; padding: .5rem; font: inherit; }
button { font: inherit; padding: .5rem 1.25rem; margin: 1rem .5rem 0 0; cursor: pointer; }
button.primary { background: var(--accent); color: #fff; border: 1px solid var(--accent); }
:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
fieldset { border: 1px solid var(--line); padding: .5rem 1rem; }
.scope { display: grid; grid-template-columns: auto 1fr; gap: .25rem .75rem; margin: .75rem 0; align-items: start; }
.scope label { margin: 0; }
.scope .what { grid-column: 2; color: var(--muted); margin: 0; }
.always { margin: .75rem 0; }
.error { border-left: 4px solid var(--accent); padding: .25rem .75rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 1rem 0; }
.app { border-top: 1px solid var(--line); padding: .75rem 0; }
.app:first-of-type { border-top: 0; }
.muted { color: var(--muted); }
code { overflow-wrap: anywhere; }
"""


def content_security_policy(form_targets: Iterable[str] = ()) -> str:
    """Only this server's own stylesheet; forms may post here (and the consent form's redirect
    may continue to the app's redirect URI, which Chromium checks against form-action)."""
    targets = " ".join(["'self'", *sorted(set(form_targets))])
    return (
        "default-src 'none'; style-src 'self'; img-src 'self'; "
        f"form-action {targets}; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(form_targets: Iterable[str] = ()) -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(form_targets),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def html_response(html: str, *, status: int = 200, form_targets: Iterable[str] = ()) -> Response[str]:
    """An HTML page with the security headers every page of the host carries."""
    return Response(html, status_code=status, media_type=MediaType.HTML, headers=security_headers(form_targets))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def page(
    title: str,
    body: str,
    *,
    product: str,
    nav: Sequence[tuple[str, str]] = (),
    current: str = "",
    signed_in_as: str = "",
) -> str:
    """The shell of every page; ``current`` is the path of the page, marked in the navigation."""
    links = "".join(
        f'<a href="{escape(href)}"{CURRENT if href == current else ""}>{escape(text)}</a>' for href, text in nav
    )
    who = ""
    if signed_in_as:
        who = (
            f'<span class="muted">Signed in as {escape(signed_in_as)}</span>'
            '<form method="post" action="/logout"><button type="submit">Sign out</button></form>'
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · {escape(product)}</title>"
        f'<link rel="stylesheet" href="{CSS_PATH}"></head><body>'
        f'<header class="site"><a class="brand" href="/">{escape(product)}</a>'
        f'<nav aria-label="Main">{links}</nav>{who}</header>'
        f'<main id="main">{body}</main></body></html>'
    )


def hidden(name: str, value: str) -> str:
    return f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">'


def login_body(
    *, campus: str, next_url: str, csrf: str, error: str = "", username: str = "", oidc_label: str = "", demo: bool
) -> str:
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    oidc = ""
    if oidc_label:
        oidc = (
            f'<p><a href="/login/oidc?next={escape(next_url, quote=True)}">{escape(oidc_label)}</a></p>'
            "<p class=muted>Or sign in with a local account:</p>"
        )
    demo_note = (
        '<p class="muted">Demo campus: sign in as <code>student1</code>, <code>student2</code>, … '
        "with the demo password.</p>"
        if demo
        else ""
    )
    return (
        f"<h1>Sign in to {escape(campus)}</h1>{alert}{oidc}"
        '<form method="post" action="/login">'
        f"{hidden('csrf_token', csrf)}{hidden('next', next_url)}"
        '<label for="username">Username</label>'
        f'<input type="text" id="username" name="username" autocomplete="username" required value="{escape(username)}">'
        '<label for="password">Password</label>'
        '<input type="password" id="password" name="password" autocomplete="current-password" required>'
        '<button type="submit" class="primary">Sign in</button></form>'
        f"{demo_note}"
    )


@dataclasses.dataclass(frozen=True)
class ScopeChoice:
    name: str
    description: str
    writes: bool
    checked: bool


def consent_body(
    *,
    app_name: str,
    redirect_uri: str,
    student: str,
    product: str,
    choices: Sequence[ScopeChoice],
    always_on: Sequence[ScopeChoice],
    hidden_fields: Sequence[tuple[str, str]],
    csrf: str,
) -> str:
    host = urlsplit(redirect_uri).netloc
    boxes = "".join(
        '<div class="scope">'
        f'<input type="checkbox" id="scope-{escape(c.name)}" name="scope_choice" value="{escape(c.name)}"'
        f'{" checked" if c.checked else ""} aria-describedby="scope-{escape(c.name)}-what">'
        f'<label for="scope-{escape(c.name)}">{escape(c.name)}{" (changes your data)" if c.writes else ""}</label>'
        f'<p class="what" id="scope-{escape(c.name)}-what">{escape(c.description)}</p></div>'
        for c in choices
    )
    fixed = "".join(
        f'<p class="always"><strong>{escape(c.name)}</strong>: {escape(c.description)} '
        '<span class="muted">(always on: public data)</span></p>'
        for c in always_on
    )
    fieldset = f"<fieldset><legend>Permissions for {escape(app_name)}</legend>{boxes}</fieldset>" if boxes else ""
    fields = "".join(hidden(name, value) for name, value in hidden_fields)
    return (
        f"<h1>Allow {escape(app_name)} to use {escape(product)}?</h1>"
        f"<p>You are signed in as <strong>{escape(student)}</strong>. After you choose, "
        f"you go back to <code>{escape(host)}</code>.</p>"
        f'<form method="post" action="/api/oauth/authorize">{hidden("csrf_token", csrf)}{fields}'
        f"{fixed}{fieldset}"
        "<p class=muted>Only the boxes you check are given to the app. You can disconnect it any time "
        'in <a href="/dashboard/settings#connected-apps">Settings</a>.</p>'
        '<button type="submit" name="decision" value="allow" class="primary">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>'
    )


def error_body(title: str, message: str) -> str:
    return f'<h1>{escape(title)}</h1><p class="error" role="alert">{escape(message)}</p>'
