"""A secret made by a form, shown once on the page the form redirects to (post/redirect/get).

A page that answers the POST with the secret on it makes a second secret when the student reloads
it (the browser posts the form again): a second personal access token, or a regenerated calendar
feed whose just-copied address then answers 404. So the POST keeps the new secret in the session
(the encrypted cookie, ``campus_mcp.oauth.session``) and redirects with 303; the GET takes it out
of the session as it shows it, so a reload, the back button or another tab shows it no more.

The box it is shown in is read-only, with a Copy button: a script from this server (the pages'
Content-Security-Policy lets a page that shows a secret run ``script-src 'self'`` and nothing
else). Without the script the button stays hidden and selecting the box is the copy.
"""

from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request

COPY_SCRIPT_PATH = "/assets/copy.js"
_PREFIX = "shown-once:"

# Unhides each Copy button, and copies its box's value on click: the Clipboard API where the page
# is a secure context (https, or this machine), else the box selected and execCommand("copy").
COPY_SCRIPT = """
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var box = document.getElementById(button.getAttribute("data-copy"));
  var said = document.getElementById(button.getAttribute("data-copy") + "-copied");
  if (!box) { return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    function done(ok) {
      if (said) { said.textContent = ok ? "Copied." : "Select the text and copy it."; }
    }
    box.focus();
    box.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(box.value).then(function () { done(true); }, function () {
        done(document.execCommand("copy"));
      });
    } else {
      done(document.execCommand("copy"));
    }
  });
});
"""


def keep_for_one_display(request: Request[Any, Any, Any], what: str, secret: str) -> None:
    """Keep ``secret`` in the session until the next page that shows ``what`` takes it."""
    session = request.scope.get("session")
    data = dict(session) if isinstance(session, dict) else {}
    data[_PREFIX + what] = secret
    request.set_session(data)


def take_for_display(request: Request[Any, Any, Any], what: str) -> str | None:
    """The secret kept for ``what``, removed from the session as it is returned (shown once)."""
    session = request.scope.get("session")
    if not isinstance(session, dict) or _PREFIX + what not in session:
        return None
    data = dict(session)
    secret = data.pop(_PREFIX + what)
    request.set_session(data)
    return secret if isinstance(secret, str) else None


def copy_box(box_id: str, label: str, secret: str) -> str:
    """The secret in a labelled read-only box, with its Copy button and where it says it copied."""
    return (
        f'<label for="{escape(box_id)}">{escape(label)}</label>'
        '<div class="copy-row">'
        f'<input type="text" id="{escape(box_id)}" readonly value="{escape(secret)}" autocomplete="off" '
        'spellcheck="false">'
        f'<button type="button" data-copy="{escape(box_id)}" hidden>Copy</button></div>'
        f'<p class="muted" id="{escape(box_id)}-copied" role="status" aria-live="polite"></p>'
    )
