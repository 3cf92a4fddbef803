"""The calendar feed as the student sees it elsewhere: listed with the connected apps on the host's
Settings page (``register_connections``), and a short card on the Calendar settings page. Both only
say whether it is on and link to its page, where it is regenerated or turned off: the address
itself is shown once, when it is made, and never again (only its hash is kept)."""

from __future__ import annotations

from html import escape

from campus_mcp import Connection, ConnectionState
from sqlalchemy.ext.asyncio import AsyncSession

from campus_settings.feed import tokens
from campus_settings.feed.routes import FEED_APP_ID, FEED_PAGE

TITLE = "Calendar feed"


def on_since(feed: tokens.CalendarFeed) -> str:
    return f"{feed.created_at:%Y-%m-%d}"


async def describe_feed(session: AsyncSession, student_id: int) -> ConnectionState | None:
    feed = await tokens.feed_of(session, student_id)
    if feed is None:
        return None
    return ConnectionState(
        summary=f"On since {on_since(feed)}; calendar apps read it with a secret link.", manage_url=FEED_PAGE
    )


CALENDAR_FEED = Connection(title=TITLE, describe=describe_feed, end=tokens.turn_off, access_log_id=FEED_APP_ID)


def feed_card(feed: tokens.CalendarFeed | None) -> str:
    """The Calendar settings page's card: the feed's state and the way to its page."""
    state = (
        f"Your calendar feed is on since {escape(on_since(feed))}."
        if feed is not None
        else "Your calendar feed is off. Turn it on to see your classes, finals and meetings in any calendar app."
    )
    link = "Regenerate or turn off the feed" if feed is not None else "Turn on the feed"
    return (
        f'<section class="card" aria-labelledby="feed-card-title"><h2 id="feed-card-title">{TITLE}</h2>'
        f'<p>{state}</p><p><a href="{FEED_PAGE}">{link}</a></p></section>'
    )
