"""The demo mode's generated key: random, made on first start, kept in a file only the owner reads.

A demo deployment with no ``CAMPUS_MCP_SECRET_KEY`` still seals sessions and requestState with a
key nobody else knows. The file is written whole before it gets its name (a temporary file, then
a hard link that fails if the name is taken), so two processes starting at once agree on one key
and neither ever reads half a key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

KEY_BYTES = 32


def generated_key(path: Path) -> bytes:
    """The key in ``path``, made (32 random bytes, mode 0600) when the file does not exist yet."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(secrets.token_bytes(KEY_BYTES))
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> bytes:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise RuntimeError(
            f"{path} (the demo mode's secret key) can be read by other users of this machine. "
            f"Run: chmod 600 {path}   (or set CAMPUS_MCP_SECRET_KEY instead)"
        )
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise RuntimeError(
            f"{path} (the demo mode's secret key) holds {len(key)} bytes, not {KEY_BYTES}: it is damaged. "
            "Delete it to make a new key on the next start (everyone signed in signs in again), "
            "or set CAMPUS_MCP_SECRET_KEY instead."
        )
    return key
