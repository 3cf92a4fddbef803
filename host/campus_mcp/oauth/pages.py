"""The HTML of the sign-in pages and the dashboard shell: accessible, self-contained, escaped.

Every value that came from a request, a client or the database goes through ``escape``. The
pages load one stylesheet from this server and nothing else, so the Content-Security-Policy can
forbid everything but ``'self'``. Each form field has a ``<label>``; checkboxes are real
``<input type=checkbox>`` so a keyboard and a screen reader work without scripts (there are none).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from litestar import MediaType, Response

from campus_mcp.oauth.session import with_next
from campus_mcp.plugin.contributions import Scope

if TYPE_CHECKING:
    from campus_mcp.oauth.app_return import AppReturn
    from campus_mcp.oauth.asking_app import AskingApp

CSS_PATH = "/assets/campus.css"
CURRENT = ' aria-current="page"'

# Phone first: nothing may be wider than a 390 px screen. The header wraps (the navigation gets
# a row of its own on a narrow screen), grid columns may shrink below their content
# (``minmax(0, 1fr)``), and codes, URLs and app names - which come from clients - break anywhere.
STYLESHEET = """
:root {
  color-scheme: light dark;
  --accent: #8a1c1c; --on-accent: #fff; --ink: #1d1d1f; --muted: #5f5f66; --line: #dcdce0;
  --page: #f5f5f7; --surface: #fff; --code: #efeff2; --focus: #1a5fb4;
}
@media (prefers-color-scheme: dark) {
  :root {
    --accent: #e07a7a; --on-accent: #1d1d1f; --ink: #ececf1; --muted: #a8a8b3; --line: #3a3a40;
    --page: #161618; --surface: #1f1f23; --code: #2a2a30; --focus: #8ab4f8;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
  color: var(--ink); background: var(--page); overflow-wrap: break-word;
}
a { color: var(--accent); }
header.site {
  display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem;
  padding: .75rem clamp(1rem, 4vw, 2rem); background: var(--surface); border-bottom: 1px solid var(--line);
}
header.site .brand { font-weight: 700; color: var(--ink); text-decoration: none; }
header.site nav { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; min-width: 0; }
header.site nav a { color: var(--ink); text-decoration: none; padding: .25rem 0; border-bottom: 2px solid transparent; }
header.site nav a:hover { border-bottom-color: var(--line); }
header.site nav a[aria-current=page] { border-bottom-color: var(--accent); font-weight: 600; }
header.site .who { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; margin-left: auto; min-width: 0; }
header.site .who form { margin: 0; }
header.site .who button { margin: 0; padding: .35rem .9rem; }
@media (max-width: 40rem) {
  header.site nav { order: 3; flex-basis: 100%; }
  header.site .who .muted { display: none; }
}
main { max-width: 42rem; margin: clamp(1rem, 5vw, 2.5rem) auto; padding: 0 clamp(1rem, 4vw, 1.5rem); }
h1 { font-size: clamp(1.4rem, 5vw, 1.85rem); line-height: 1.25; margin: 0 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 0 0 .75rem; }
h3 { font-size: 1.05rem; margin: 0 0 .25rem; overflow-wrap: anywhere; }
.lead { font-size: 1.1rem; }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
input[type=text], input[type=password] {
  width: 100%; max-width: 100%; padding: .6rem .7rem; font: inherit; color: inherit;
  background: var(--surface); border: 1px solid var(--line); border-radius: 6px;
}
input[type=checkbox] { width: 1.15rem; height: 1.15rem; margin: .2rem 0 0; accent-color: var(--accent); }
button {
  font: inherit; min-height: 2.5rem; padding: .5rem 1.25rem; margin: 1rem .5rem 0 0; cursor: pointer;
  color: var(--ink); background: var(--surface); border: 1px solid var(--line); border-radius: 6px;
}
button.primary { background: var(--accent); color: var(--on-accent); border-color: var(--accent); font-weight: 600; }
/* A link that is the page's action (Return to the app): drawn as a button. */
a.button {
  display: inline-block; min-height: 2.5rem; padding: .5rem 1.25rem; margin: 1rem .5rem 0 0; border-radius: 6px;
  color: var(--ink); background: var(--surface); border: 1px solid var(--line); text-decoration: none;
}
a.button.primary { background: var(--accent); color: var(--on-accent); border-color: var(--accent); font-weight: 600; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
code {
  font: .875em/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere;
  background: var(--code); border-radius: 4px; padding: .05em .35em;
}
.url { display: block; padding: .6rem .75rem; margin: .5rem 0 1rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: .25rem 1rem .5rem; margin: 1rem 0; background: var(--surface); min-width: 0; }
legend { font-weight: 600; padding: 0 .35rem; overflow-wrap: anywhere; }
.scope {
  display: grid; grid-template-columns: auto minmax(0, 1fr); gap: .15rem .75rem; align-items: start;
  padding: .75rem 0; border-top: 1px solid var(--line);
}
.scope:first-of-type { border-top: 0; }
.scope label { margin: 0; }
.scope .what { grid-column: 2; color: var(--muted); margin: 0; }
.scope-code { font-size: .75rem; font-weight: 400; color: var(--muted); margin-left: .35rem; }
.writes, .public {
  display: inline-block; font-size: .75rem; font-weight: 600; color: var(--accent); border: 1px solid currentColor;
  border-radius: 999px; padding: 0 .5rem; margin-left: .35rem; white-space: nowrap;
}
.always { margin: 0 0 .75rem; padding: .75rem 1rem; background: var(--surface); border: 1px solid var(--line); border-radius: 8px; }
.public { color: var(--muted); font-weight: 400; }
.always .what { display: block; color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1rem; }
.actions button { margin: 0; }
.error { border-left: 4px solid var(--accent); padding: .25rem .75rem; background: var(--surface); }
.card { background: var(--surface); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
.copy-row { display: flex; gap: .5rem; align-items: stretch; }
.copy-row input { flex: 1 1 auto; min-width: 0; }
.copy-row button { margin: 0; flex: none; }
/* Folded sections (Calendar settings' levels): the heading and what it sets on the summary line. */
details.card > summary { cursor: pointer; }
details.card > summary h2 { display: inline; margin: 0 .5rem 0 0; }
details.card[open] > summary { margin-bottom: .5rem; }
details.card details.card { margin: .75rem 0; }
/* A form's fields beside the names they may use; stacked on a phone. */
.templated { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 16rem); gap: 0 1.25rem; }
.vars ul, .swatches { list-style: none; padding: 0; margin: .25rem 0; display: flex; flex-wrap: wrap; gap: .25rem .5rem; }
.vars p { margin: .75rem 0 0; }
.swatches li { display: inline-flex; align-items: center; gap: .25rem; white-space: nowrap; }
svg.swatch { vertical-align: -2px; border: 1px solid var(--line); border-radius: 3px; }
@media (max-width: 40rem) { .templated { grid-template-columns: minmax(0, 1fr); } }
.app { border-top: 1px solid var(--line); padding: .75rem 0; }
.app:first-of-type { border-top: 0; }
.app form button { margin-top: .5rem; }
.perms-title { margin: .5rem 0 .25rem; }
.perms { margin: 0; padding-left: 1.25rem; }
.muted { color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
/* break-word, not anywhere: a column is never narrower than its longest word, so a header or a
   button is not cut mid-word ("CR / N"); a word longer than the whole table still wraps. */
th, td { text-align: left; vertical-align: top; padding: .45rem .5rem; border-top: 1px solid var(--line); overflow-wrap: break-word; }
td button, .nowrap { white-space: nowrap; }
/* A page with a table (My schedule) gets the width a desktop has, so its columns need not wrap. */
main:has(table) { max-width: 64rem; }
thead th { border-top: 0; font-size: .875rem; color: var(--muted); }
td form, td form button { margin: 0; }
/* A table of a plugin page becomes one block per row on a phone, so no page scrolls sideways;
   a cell's data-label names its column there, since the header row is hidden. */
@media (max-width: 40rem) {
  table, tbody, tr, td { display: block; width: 100%; }
  thead { display: none; }
  tr { border-top: 1px solid var(--line); padding: .5rem 0; }
  td { border-top: 0; padding: .15rem 0; overflow-wrap: anywhere; }
  td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
}
"""


# A form target is a plain origin: scheme://host[:port], the host a name or a bracketed IP. The
# consent page's target comes from a client's redirect URI; clients registered before the
# redirect-URI rules may hold one with ``;`` (a directive of the client's choosing), a quote or a
# space (a source of its choosing), so anything else is left out of the header.
_PLAIN_ORIGIN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def content_security_policy(form_targets: Iterable[str] = (), *, scripts: bool = False) -> str:
    """Only this server's own stylesheet; forms may post here (and the consent form's redirect
    may continue to the app's redirect URI, which Chromium checks against form-action).
    ``scripts``: a page that shows a secret may also run this server's own Copy script.

    A target that is not a plain origin is skipped: the form then cannot continue to it, which is
    the safe failure (the header stays this server's own)."""
    plain = {target for target in form_targets if _PLAIN_ORIGIN.fullmatch(target)}
    targets = " ".join(["'self'", *sorted(plain)])
    script = "script-src 'self'; " if scripts else ""
    return (
        f"default-src 'none'; {script}style-src 'self'; img-src 'self'; "
        f"form-action {targets}; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(form_targets: Iterable[str] = (), *, scripts: bool = False) -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(form_targets, scripts=scripts),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def html_response(
    html: str, *, status: int = 200, form_targets: Iterable[str] = (), scripts: bool = False
) -> Response[str]:
    """An HTML page with the security headers every page of the host carries."""
    return Response(
        html, status_code=status, media_type=MediaType.HTML, headers=security_headers(form_targets, scripts=scripts)
    )


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
    csrf: str = "",
    script: str = "",
) -> str:
    """The shell of every page; ``current`` is the path of the page, marked in the navigation.

    ``csrf``: the session's CSRF token, for the Sign out form of a signed-in page (sign-out ends
    every session of the student, so another page must not be able to post it). ``script``: the
    path of this server's script the page runs (a Copy button), else none."""
    links = "".join(
        f'<a href="{escape(href)}"{CURRENT if href == current else ""}>{escape(text)}</a>' for href, text in nav
    )
    who = ""
    if signed_in_as:
        who = (
            f'<div class="who"><span class="muted">Signed in as {escape(signed_in_as)}</span>'
            f'<form method="post" action="/logout">{hidden("csrf_token", csrf) if csrf else ""}'
            '<button type="submit">Sign out</button></form></div>'
        )
    # A title that already names the product (the home page's) does not repeat it.
    full_title = title if product in title else f"{title} · {product}"
    nav_html = f'<nav aria-label="Main">{links}</nav>' if links else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(full_title)}</title>"
        f'<link rel="stylesheet" href="{CSS_PATH}">'
        + (f'<script src="{escape(script)}" defer></script>' if script else "")
        + "</head><body>"
        f'<header class="site"><a class="brand" href="/">{escape(product)}</a>'
        f"{nav_html}{who}</header>"
        f'<main id="main">{body}</main></body></html>'
    )


def hidden(name: str, value: str) -> str:
    return f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">'


def login_body(
    *,
    campus: str,
    next_url: str,
    csrf: str,
    error: str = "",
    username: str = "",
    oidc_label: str = "",
    saml_label: str = "",
    cas_label: str = "",
    demo: bool,
    app: AskingApp | None = None,
    local_accounts: bool = True,
) -> str:
    alert = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    oidc = ""
    if oidc_label:
        oidc = f'<p><a href="{escape(with_next("/login/oidc", next_url), quote=True)}">{escape(oidc_label)}</a></p>'
    for path, label in (("/login/saml", saml_label), ("/login/cas", cas_label)):
        if label:
            oidc += f'<p><a href="{escape(with_next(path, next_url), quote=True)}">{escape(label)}</a></p>'
    if oidc and local_accounts:
        oidc += "<p class=muted>Or sign in with a local account:</p>"
    demo_note = (
        '<p class="muted">Demo campus: sign in as <code>student1</code>, <code>student2</code>, … '
        "with the demo password.</p>"
        if demo
        else ""
    )
    # Local passwords switched off: the campus button (above) is the only way in, so no form.
    form = (
        '<form method="post" action="/login">'
        f"{hidden('csrf_token', csrf)}{hidden('next', next_url)}"
        '<label for="username">Username</label>'
        f'<input type="text" id="username" name="username" autocomplete="username" required value="{escape(username)}">'
        '<label for="password">Password</label>'
        '<input type="password" id="password" name="password" autocomplete="current-password" required>'
        '<button type="submit" class="primary">Sign in</button></form>'
        f"{demo_note}"
        if local_accounts
        else ""
    )
    # An OAuth sign-in names the app that asks, not only the campus.
    asking = f" to connect {escape(app.label())}" if app else ""
    return f"<h1>Sign in to {escape(campus)}{asking}</h1>{alert}{oidc}{form}"


@dataclasses.dataclass(frozen=True)
class ScopeChoice:
    """One permission on the consent page: its title in plain words, its code beside it."""

    name: str
    description: str
    writes: bool
    checked: bool
    title: str = ""
    # The titles of the tools the permission gives ("Change a class's settings").
    gives: tuple[str, ...] = ()

    @classmethod
    def of(cls, scope: Scope, checked: bool, gives: Sequence[str] = ()) -> ScopeChoice:
        return cls(scope.name, scope.description, scope.writes, checked, scope.title, tuple(gives))

    def lets(self, app: str) -> str:
        """For a permission that changes data (they start unchecked): what checking it lets the app
        do, and what leaving it unchecked means, so a student can choose knowingly (issue 39)."""
        if not self.writes:
            return ""
        if not self.gives:
            return f"Reserved for tools to come: checked or not, {escape(app)} can do nothing with it yet."
        tools = "; ".join(escape(title) for title in self.gives)
        return (
            f"Checked, {escape(app)} can: {tools}, each only after you confirm the change. "
            "Unchecked, it cannot; if you ask it to, it tells you how to come back here and check this box."
        )

    def heading(self) -> str:
        """The title, the code small beside it, and a mark on a permission that changes data."""
        writes = ' <span class="writes">changes your data</span>' if self.writes else ""
        return (
            f'<span class="scope-title">{escape(self.title or self.name)}</span>'
            f' <code class="scope-code">{escape(self.name)}</code>{writes}'
        )


def consent_body(
    *,
    app: AskingApp,
    redirect_uri: str,
    student: str,
    product: str,
    choices: Sequence[ScopeChoice],
    always_on: Sequence[ScopeChoice],
    hidden_fields: Sequence[tuple[str, str]],
    csrf: str,
) -> str:
    host = urlsplit(redirect_uri).netloc
    app_name = app.label()
    boxes = "".join(
        '<div class="scope">'
        f'<input type="checkbox" id="scope-{escape(c.name)}" name="scope_choice" value="{escape(c.name)}"'
        f'{" checked" if c.checked else ""} aria-describedby="scope-{escape(c.name)}-what">'
        f'<label for="scope-{escape(c.name)}">{c.heading()}</label>'
        f'<p class="what" id="scope-{escape(c.name)}-what">{escape(c.description)}'
        f"{' ' + c.lets(app_name) if c.writes else ''}</p></div>"
        for c in choices
    )
    fixed = "".join(
        f'<p class="always"><strong>{c.heading()}</strong> <span class="public">always on: public data</span>'
        f'<span class="what">{escape(c.description)}</span></p>'
        for c in always_on
    )
    fieldset = f"<fieldset><legend>Permissions for {escape(app_name)}</legend>{boxes}</fieldset>" if boxes else ""
    fields = "".join(hidden(name, value) for name, value in hidden_fields)
    return (
        f"<h1>Allow {escape(app_name)} to use {escape(product)}?</h1>"
        f"{app.note(escape(product))}"
        f"<p>You are signed in as <strong>{escape(student)}</strong>. After you choose, "
        f"you go back to <code>{escape(host)}</code>.</p>"
        f'<form method="post" action="/api/oauth/authorize">{hidden("csrf_token", csrf)}{fields}'
        f"{fixed}{fieldset}"
        "<p class=muted>Only the boxes you check are given to the app. You can disconnect it any time "
        'in <a href="/dashboard/settings#connected-apps">Settings</a>.</p>'
        '<div class="actions"><button type="submit" name="decision" value="allow" class="primary">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></div></form>'
    )


def error_body(title: str, message: str) -> str:
    return f'<h1>{escape(title)}</h1><p class="error" role="alert">{escape(message)}</p>'


def sign_in_refused(exc: Exception, *, product: str, admitted: bool, back_to: AppReturn | None = None) -> Response[str]:
    """The page after an identity provider's answer that signs nobody in (OIDC, SAML and CAS alike):
    403 for a person the campus does not admit here, 400 for an answer that failed its checks, and
    the error's own ``status`` when it has one (502: the campus sign-in service did not answer).

    ``back_to``: the app that asked for the sign-in, which is waiting for it; the refusal page's
    button takes the student back to it with ``access_denied`` (``app_return``)."""
    if not admitted:
        body = error_body("You cannot sign in to this service", str(exc))
        if back_to is not None:
            app = escape(back_to.app)
            body += (
                f"<p>{app} is waiting for this sign-in. Go back to it, so it stops waiting: it will hear "
                "that the sign-in was refused.</p>"
                f'<p><a class="button primary" href="{escape(back_to.url, quote=True)}">Return to {app}</a></p>'
            )
        return html_response(page("Not admitted", body, product=product), status=403)
    status = getattr(exc, "status", 400)
    return html_response(
        page("Sign-in failed", error_body("Sign-in failed", str(exc)), product=product),
        status=status if isinstance(status, int) else 400,
    )
