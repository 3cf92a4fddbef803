"""The Canvas family's settings: the campus's Canvas and the developer key the campus made for this server.

The family is off (no tool, scope, route, prompt or feed source) until all three of ``base_url``,
``client_id`` and ``client_secret`` are set (``[plugins.canvas]`` or ``CAMPUS_MCP_CANVAS_...``).
In demo mode without them it talks to a demo Canvas inside the process (``demo_canvas.py``), as the
dining example reads its demo feed: the demo campus shows the family, and never a real Canvas.
The secret is a ``SecretStr``: printed, logged or shown it reads ``**********``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from campus_mcp import PluginSettings, Settings
from pydantic import Field, SecretStr, field_validator

# The demo Canvas's origin: a name that never resolves (RFC 6761), answered inside the process.
DEMO_ORIGIN = "https://canvas.demo.invalid"
DEMO_CLIENT_ID = "demo-client"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class CanvasSettings(PluginSettings):
    base_url: str | None = Field(
        default=None,
        description=(
            "The campus's Canvas, such as https://canvas.example.edu (https; no path). With client_id and "
            "client_secret it turns the Canvas family on."
        ),
    )
    client_id: str | None = Field(
        default=None,
        description="The client id of the Canvas developer key (API key) the campus made for this server.",
    )
    client_secret: SecretStr | None = Field(
        default=None, description="The developer key's secret; never logged or shown."
    )
    enforce_scopes: bool = Field(
        default=False,
        description=(
            "The developer key enforces scopes: ask Canvas for exactly the read scopes the tools use "
            "(docs/canvas.md lists them)."
        ),
    )
    cache_seconds: int = Field(
        default=120,
        ge=0,
        le=3600,
        description="How long one student's Canvas answers are kept and reused (0: ask Canvas every time).",
    )
    timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=60,
        description="How long one Canvas request may take before the call says Canvas is slow.",
    )
    max_pages: int = Field(
        default=5, ge=1, le=20, description="The most pages (of up to 100 items) of one Canvas list a call reads."
    )

    @field_validator("base_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        local = parts.scheme == "http" and parts.hostname in _LOOPBACK
        if parts.scheme != "https" and not local:
            raise ValueError("must be the https address of the campus's Canvas, such as https://canvas.example.edu")
        if not parts.hostname or parts.path.strip("/") or parts.query or parts.fragment or parts.username:
            raise ValueError(
                "must be Canvas's address alone (scheme and host, no path), such as https://canvas.example.edu"
            )
        return f"{parts.scheme}://{parts.netloc}"

    def configured(self) -> bool:
        """The campus named its Canvas and gave the developer key."""
        return bool(self.base_url and self.client_id and self.client_secret and self.client_secret.get_secret_value())


def canvas_on(settings: Settings, plugin_settings: CanvasSettings) -> bool:
    """Whether the family offers anything: a configured Canvas, or the demo Canvas in demo mode."""
    return plugin_settings.configured() or settings.demo


def canvas_origin(plugin_settings: CanvasSettings) -> str:
    """The one origin every request of the family goes to: the configured Canvas, else the demo one."""
    return plugin_settings.base_url if plugin_settings.configured() and plugin_settings.base_url else DEMO_ORIGIN


def is_demo(plugin_settings: CanvasSettings) -> bool:
    return canvas_origin(plugin_settings) == DEMO_ORIGIN


def client_credentials(plugin_settings: CanvasSettings) -> tuple[str, str]:
    """The developer key's id and secret (the demo Canvas's own in demo mode)."""
    if plugin_settings.configured() and plugin_settings.client_id and plugin_settings.client_secret:
        return plugin_settings.client_id, plugin_settings.client_secret.get_secret_value()
    return DEMO_CLIENT_ID, "demo-secret"
