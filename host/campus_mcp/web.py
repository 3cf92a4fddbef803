"""The host's own web routes (sign-in, consent, dashboard shell) beside the plugins' routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar import MediaType, get

if TYPE_CHECKING:
    from campus_mcp.app import Campus


def host_handlers(campus: Campus) -> list[Any]:
    settings = campus.settings

    @get("/", media_type=MediaType.HTML, opt={"exclude_from_parity": True}, include_in_schema=False)
    async def home() -> str:
        return (
            "<!doctype html><html lang=en><meta charset=utf-8>"
            f"<title>{settings.product_name}</title>"
            f"<h1>{settings.product_name} for {settings.campus_name}</h1>"
            f"<p>Connect your AI assistant to <code>{settings.mcp_url}</code>.</p></html>"
        )

    return [home]
