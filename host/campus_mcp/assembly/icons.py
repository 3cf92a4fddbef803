"""Icons: the campus's and each family's, so a connector list shows more than a generic glyph.

The campus icon is ``CAMPUS_MCP_ICON``: an image file (SVG, PNG, JPEG or WebP) or an ``https://``
URL; unset, the product's own drawing (``icons/campus.svg``). A plugin names its family's icon in
``PluginInfo(icon=...)`` the same way; a family without one shows the campus icon.

Where an icon goes (MCP's ``Icon``: ``src``, ``mimeType``, ``sizes``): ``serverInfo`` and the
server card (the endpoint's: the campus's, or the family's on ``/api/mcp/{family}``), every tool,
prompt and resource (its family's), and each toolbox of ``list_toolboxes``.

A file is served by the product at ``/icons/{campus|family}.{ext}`` with a strong ``ETag`` (its
digest) and ``If-None-Match`` answered 304, and an icon's ``src`` over HTTP is that URL: a listing
stays small, and a client fetches an icon once. A ``data:`` URI only where there is no URL to give:
over stdio (``campus-mcp stdio``), a process on the student's machine has no origin of its own, and
the MCP spec asks a client to take icon URLs from the server's own domain, so there the icon comes
inline (when it is small; a large one keeps its URL).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import struct
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcp_types as types
from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.params import FromPath

from campus_mcp.assembly.registry import Registry
from campus_mcp.plugin.errors import quote_input

ICONS_PATH = "/icons"
CAMPUS = "campus"
DEFAULT_CAMPUS_ICON = Path(__file__).with_name("icons") / "campus.svg"
MEDIA_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
}
EXTENSIONS = {"image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}
# An icon is a small picture; a larger file is a mistake (a photo), and would be slow in every list.
MAX_BYTES = 512 * 1024
# Over stdio an icon is inline in every tool that shows it: only a small one (an SVG) goes inline.
INLINE_LIMIT = 8 * 1024
CACHE_SECONDS = 86400
# An SVG is a document that can hold a script: served as an image of our origin, it may run none.
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

# The operator's own setting, named whole (a long folder path is still the path to fix); a
# client's input stays short (QUOTE_LIMIT).
SETTING_QUOTE_LIMIT = 1000


class IconError(ValueError):
    """An icon setting that cannot be used: the sentence says which and what to do."""


@dataclasses.dataclass(frozen=True)
class IconFile:
    """An icon the product serves: its bytes, media type, strong ETag and sizes."""

    name: str  # "campus" or the family
    body: bytes
    media_type: str
    sizes: tuple[str, ...]

    @property
    def file_name(self) -> str:
        return f"{self.name}.{EXTENSIONS[self.media_type]}"

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:40] + '"'

    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.body).decode()}"


def _png_size(body: bytes) -> tuple[str, ...]:
    # The IHDR chunk, first after the signature, holds width and height.
    if body[:8] == b"\x89PNG\r\n\x1a\n" and body[12:16] == b"IHDR":
        width, height = struct.unpack(">II", body[16:24])
        return (f"{width}x{height}",)
    return ()


def _load(name: str, source: str, setting: str) -> IconFile | str:
    """An icon setting's value as a file the product serves, or the ``https://`` URL it names."""
    if source.startswith(("https://", "http://")):
        if Path(source.split("?", 1)[0]).suffix.lower() not in MEDIA_TYPES:
            raise IconError(
                f"{setting}={quote_input(source, SETTING_QUOTE_LIMIT)} does not end in .svg, .png, .jpg or .webp, so a client cannot "
                "tell what picture it is. Give the URL of an image file of one of those types."
            )
        return source
    path = Path(source)
    media_type = MEDIA_TYPES.get(path.suffix.lower())
    if media_type is None:
        raise IconError(
            f"{setting}={quote_input(source, SETTING_QUOTE_LIMIT)} is not an .svg, .png, .jpg or .webp file. Give the path of an image "
            "file of one of those types, or an https:// URL."
        )
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise IconError(
            f"{setting}={quote_input(source, SETTING_QUOTE_LIMIT)} cannot be read ({exc.strerror or type(exc).__name__}). Give the path "
            "of an image file the server can read, or an https:// URL."
        ) from None
    if not body or len(body) > MAX_BYTES:
        raise IconError(
            f"{setting}={quote_input(source, SETTING_QUOTE_LIMIT)} is {len(body)} bytes; an icon is 1 byte to {MAX_BYTES // 1024} KiB. "
            "Give a small square image (an SVG, or a PNG of 64x64 to 512x512)."
        )
    sizes = ("any",) if media_type == "image/svg+xml" else _png_size(body) if media_type == "image/png" else ()
    return IconFile(name=name, body=body, media_type=media_type, sizes=sizes)


class Icons:
    """The deployment's icons: the campus's and each enabled family's, read once."""

    def __init__(self, registry: Registry) -> None:
        self.base_url = registry.settings.base_url
        setting = registry.settings.icon.strip()
        self.campus = _load(CAMPUS, setting or str(DEFAULT_CAMPUS_ICON), "CAMPUS_MCP_ICON")
        self.families: dict[str, IconFile | str] = {}
        for name, info in registry.plugins.items():
            if info.icon:
                self.families[name] = _load(name, str(info.icon), f"the icon of plugin {name!r} (PluginInfo.icon)")

    def served(self) -> dict[str, IconFile]:
        """The icons the product serves, by file name (``campus.svg``, ``catalog.svg``...)."""
        files = [icon for icon in (self.campus, *self.families.values()) if isinstance(icon, IconFile)]
        return {icon.file_name: icon for icon in files}

    def _icon(self, icon: IconFile | str, *, inline: bool) -> types.Icon:
        if isinstance(icon, str):
            media_type = MEDIA_TYPES.get(Path(icon.split("?", 1)[0]).suffix.lower())
            return types.Icon(src=icon, mime_type=media_type)
        src = icon.data_uri() if inline and len(icon.body) <= INLINE_LIMIT else self.url_of(icon)
        return types.Icon(src=src, mime_type=icon.media_type, sizes=list(icon.sizes) or None)

    def url_of(self, icon: IconFile) -> str:
        return f"{self.base_url}{ICONS_PATH}/{icon.file_name}"

    def of(self, family: str | None = None, *, inline: bool = False) -> list[types.Icon]:
        """The icons of ``family`` (the campus's when it has none, or for None): for an ``icons`` field."""
        icon = self.families.get(family, self.campus) if family else self.campus
        return [self._icon(icon, inline=inline)]

    def as_json(self, family: str | None = None) -> list[dict[str, Any]]:
        """:meth:`of` as JSON (a server card, a toolbox listing)."""
        return [icon.model_dump(mode="json", by_alias=True, exclude_none=True) for icon in self.of(family)]


# By the registry's id (a frozen dataclass of dicts does not hash), dropped with the registry.
_icons: dict[int, Icons] = {}


def icons_of(registry: Registry) -> Icons:
    """The registry's icons, read on first use and kept as long as the registry."""
    icons = _icons.get(id(registry))
    if icons is None:
        icons = _icons[id(registry)] = Icons(registry)
        weakref.finalize(registry, _icons.pop, id(registry), None)
    return icons


def _matches(if_none_match: str, etag: str) -> bool:
    # RFC 9110 13.1.2: If-None-Match compares weakly, so W/"x" matches "x"; "*" matches any.
    wanted = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in wanted or etag in wanted


def icon_response(request: Request[Any, Any, Any], icon: IconFile) -> Response[bytes]:
    headers = {
        "ETag": icon.etag,
        "Cache-Control": f"public, max-age={CACHE_SECONDS}",
        "X-Content-Type-Options": "nosniff",
    }
    if icon.media_type == "image/svg+xml":
        headers["Content-Security-Policy"] = SVG_POLICY
    if _matches(request.headers.get("if-none-match", ""), icon.etag):
        return Response(b"", status_code=304, headers=headers, media_type=icon.media_type)
    return Response(icon.body, status_code=200, headers=headers, media_type=icon.media_type)


@get(ICONS_PATH + "/{file:str}", opt={"exclude_from_parity": True}, include_in_schema=False, sync_to_thread=False)
def serve_icon(request: Request[Any, Any, Any], state: State, file: FromPath[str]) -> Response[Any]:
    icons = icons_of(state.deployment.registry)
    served = icons.served()
    icon = served.get(file)
    if icon is not None:
        return icon_response(request, icon)
    known: Sequence[str] = [icons.url_of(i) for i in served.values()]
    return Response(
        {
            "error": "NotFound",
            "message": f"No icon is called {quote_input(file)}. The icons of this server: {', '.join(known)}.",
        },
        status_code=404,
    )


ICON_HANDLERS = [serve_icon]
