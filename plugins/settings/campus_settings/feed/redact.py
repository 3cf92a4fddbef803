"""Keep the feed's secret out of the access log.

The token in ``/calendar/<token>.ics`` is the credential, and ``campus-mcp serve`` runs uvicorn
with its access log on, which logs every request's path. A filter on uvicorn's access logger
replaces the token before any handler sees the line. It is added to the logger (not a handler),
so it stays when uvicorn applies its logging config at start-up (``dictConfig`` replaces a
logger's handlers, never its filters).
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
FEED_PATH = re.compile(r"/calendar/[^/?#\s\"]+")
REDACTED = "/calendar/[secret].ics"


def redact(text: str) -> str:
    return FEED_PATH.sub(REDACTED, text)


class FeedPathFilter(logging.Filter):
    """Rewrites a log record whose message or arguments hold a feed path; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "/calendar/" in record.msg:
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) and "/calendar/" in a else a for a in record.args)
        return True


def install_access_log_filter() -> None:
    """Add the filter to uvicorn's access logger once (building several apps adds it once)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, FeedPathFilter) for f in logger.filters):
        logger.addFilter(FeedPathFilter())
