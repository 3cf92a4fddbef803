"""E-mail to a student through the campus's SMTP server (``CAMPUS_MCP_SMTP_*``).

The standard library's ``smtplib`` in a thread: one message per conversation, a handful a day per
student, so a connection pool or another dependency would buy nothing. A message that cannot be
sent raises :class:`MailNotSent` with a reason safe to store and show (never the password, never the
server's whole answer, which may echo what was sent); the caller keeps the message and tries again.
"""

from __future__ import annotations

import asyncio
import smtplib
import socket
import ssl
from email.message import EmailMessage
from email.utils import parseaddr

from campus_mcp.base.settings import Settings


class MailNotSent(Exception):
    """The SMTP server did not take the message. ``str()`` is the reason, fit for the dashboard."""


def mask_address(address: str) -> str:
    """``jane.doe@school.edu`` -> ``j***@school.edu``: enough for the student to recognise their own
    address in a tool answer a model reads (and may repeat), not enough to hand it on."""
    local, at, domain = address.partition("@")
    if not at or not local:
        return "***"
    return f"{local[0]}***@{domain}"


def looks_like_address(value: str | None) -> bool:
    if not value:
        return False
    _name, address = parseaddr(value)
    local, at, domain = address.partition("@")
    return bool(at and local and "." in domain and address == value.strip())


def _connect(settings: Settings) -> smtplib.SMTP:
    """A conversation with the SMTP server, encrypted as set and logged in when an account is set."""
    timeout = settings.smtp_timeout_seconds
    smtp: smtplib.SMTP
    if settings.smtp_tls == "tls":
        smtp = smtplib.SMTP_SSL(
            settings.smtp_host, settings.smtp_port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=timeout)
    try:
        if settings.smtp_tls == "starttls":
            smtp.starttls(context=ssl.create_default_context())
        if settings.smtp_username:
            smtp.login(settings.smtp_username, settings.smtp_password.get_secret_value())
    except BaseException:
        smtp.close()
        raise
    return smtp


def _send(settings: Settings, message: EmailMessage) -> None:
    with _connect(settings) as smtp:
        smtp.send_message(message)


def _reason(exc: Exception) -> str:
    """Why, in a line: the SMTP code and its first words, or the kind of network failure."""
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"the SMTP server refused the login ({exc.smtp_code}); check CAMPUS_MCP_SMTP_USERNAME and the password"
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = sorted({code for code, _text in exc.recipients.values()})
        return f"the SMTP server refused the recipient ({', '.join(str(c) for c in codes)})"
    if isinstance(exc, smtplib.SMTPResponseException):
        text = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        return f"the SMTP server answered {exc.smtp_code} {text.splitlines()[0][:120] if text else ''}".rstrip()
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return "the SMTP server does not offer STARTTLS; check CAMPUS_MCP_SMTP_TLS and the port"
    if isinstance(exc, ssl.SSLError):
        return f"TLS with the SMTP server failed ({type(exc).__name__}); check CAMPUS_MCP_SMTP_TLS and the port"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"the SMTP server did not answer within {exc.args[0] if exc.args else 'the timeout'}"
    if isinstance(exc, OSError):
        return f"the SMTP server could not be reached ({type(exc).__name__})"
    return f"the SMTP conversation failed ({type(exc).__name__})"


async def send_mail(settings: Settings, message: EmailMessage) -> None:
    """Send ``message`` (its From is the configured sender) or raise :class:`MailNotSent`."""
    if not settings.mail_configured:
        raise MailNotSent("e-mail is not set up on this campus (CAMPUS_MCP_SMTP_HOST and CAMPUS_MCP_SMTP_SENDER)")
    if "From" not in message:
        message["From"] = settings.smtp_sender
    try:
        await asyncio.to_thread(_send, settings, message)
    except (smtplib.SMTPException, OSError) as exc:
        raise MailNotSent(_reason(exc)) from None


def mail_setting_problems(settings: Settings) -> list[str]:
    """What the SMTP settings alone show is wrong, each with what to do (``campus-mcp check``)."""
    if not settings.smtp_host and not settings.smtp_sender:
        return []
    found: list[str] = []
    if not settings.smtp_host:
        found.append("CAMPUS_MCP_SMTP_SENDER is set but CAMPUS_MCP_SMTP_HOST is not: set the SMTP server's host name.")
    if not settings.smtp_sender:
        found.append(
            "CAMPUS_MCP_SMTP_HOST is set but CAMPUS_MCP_SMTP_SENDER is not: set the From address (seat-watch@school.edu)."
        )
    elif not looks_like_address(settings.smtp_sender):
        found.append(
            f"CAMPUS_MCP_SMTP_SENDER {settings.smtp_sender!r} is not an e-mail address: set one such as seat-watch@school.edu."
        )
    has_password = bool(settings.smtp_password.get_secret_value())
    if has_password and not settings.smtp_username:
        found.append("CAMPUS_MCP_SMTP_PASSWORD is set without CAMPUS_MCP_SMTP_USERNAME: set the account's name too.")
    if settings.smtp_username and not has_password:
        found.append("CAMPUS_MCP_SMTP_USERNAME is set without CAMPUS_MCP_SMTP_PASSWORD: set the account's password.")
    if settings.smtp_username and settings.smtp_tls == "none" and not _local(settings.smtp_host):
        found.append(
            f"CAMPUS_MCP_SMTP_TLS is none with a login to {settings.smtp_host}: the password would cross the network "
            "in the clear. Set CAMPUS_MCP_SMTP_TLS=starttls (port 587) or tls (port 465)."
        )
    return found


def _local(host: str) -> bool:
    return host in ("localhost", "127.0.0.1", "::1")


async def mail_server_problem(settings: Settings) -> str | None:
    """The SMTP server answers, speaks the TLS mode set and takes the login; ``campus-mcp check`` only."""
    if not settings.mail_configured:
        return None

    def _probe() -> None:
        with _connect(settings) as smtp:
            smtp.noop()

    try:
        await asyncio.to_thread(_probe)
    except (smtplib.SMTPException, OSError) as exc:
        return f"{_reason(exc)} (CAMPUS_MCP_SMTP_HOST {settings.smtp_host}, port {settings.smtp_port})"
    return None
