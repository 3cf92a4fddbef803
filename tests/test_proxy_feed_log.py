"""The documented nginx configuration keeps the calendar feed's secret out of the proxy's logs
(issue 35, point 7).

The shipped file, ``deploy/nginx/campus-mcp.conf`` (the one docs/deployment.md shows, word for
word), is run by the machine's own nginx on loopback in front of a served campus, with only its
addresses, certificate and log folder moved into the test's folder. A calendar app fetches a
student's feed over HTTPS, and over plain HTTP (redirected); then the campus stops and the feed is
fetched again (nginx answers 502 and writes an error). Neither the access log nor the error log
holds the feed's secret; the access log has a line for each fetch, the secret replaced; and the
error log does record a failed request elsewhere (so it is the configuration that keeps the
secret out, not an error log that writes nothing).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from campus_mcp.oauth.testkit import free_port, serve_on_loopback
from campus_mcp.testing import CampusFactory
from campus_settings.feed import tokens
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "deploy" / "nginx" / "campus-mcp.conf"
DOCS = ROOT / "docs" / "deployment.md"


def nginx_binary() -> str:
    binary = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must have nginx (.ci/run installs it): the proxy's configuration cannot go untested there")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    return binary


def test_the_docs_show_the_shipped_configuration_word_for_word() -> None:
    blocks = re.findall(r"```nginx\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert SHIPPED.read_text(encoding="utf-8") in blocks, (
        "docs/deployment.md's nginx block is not deploy/nginx/campus-mcp.conf"
    )


def moved(config: str, *, https: int, http: int, upstream: int, folder: Path) -> str:
    """The shipped file with only its addresses, certificate and log folder in the test's places
    (each must be found exactly where a campus changes it)."""
    for old, new in (
        ("listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;"),
        ("listen 80;", f"listen 127.0.0.1:{http};"),
        ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};"),
        ("/etc/ssl/campus-mcp/fullchain.pem", str(folder / "cert.pem")),
        ("/etc/ssl/campus-mcp/privkey.pem", str(folder / "key.pem")),
        ("/var/log/nginx/", f"{folder}/"),
    ):
        assert old in config, f"{old!r} is no longer in {SHIPPED.name}"
        config = config.replace(old, new)
    return config


def main_config(folder: Path, site: Path) -> str:
    """nginx.conf as Debian's, reduced: the shipped file included in the http block, whose default
    access log is the combined format (the one that would write the secret)."""
    return f"""
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {folder}/access.log combined;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {site};
}}
"""


def certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (the client trusts it alone)."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    return folder / "cert.pem"


def start_nginx(binary: str, config: Path) -> subprocess.Popen[bytes]:
    """nginx in the foreground on ``config``, once ``nginx -t`` accepts it."""
    checked = subprocess.run([binary, "-t", "-c", str(config)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    return subprocess.Popen([binary, "-c", str(config)], stderr=subprocess.PIPE)


async def test_nginx_never_logs_the_feed_secret(campus_factory: CampusFactory, tmp_path: Path) -> None:
    binary = nginx_binary()
    campus = await campus_factory(plugins=["catalog", "schedule", "settings"])
    async with campus.sessions() as session:
        await session.execute(
            text(
                "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
                "VALUES ('student1', 'Student 1', 's1@example.edu', true, CURRENT_TIMESTAMP, 0)"
            )
        )
        student = int((await session.execute(text("SELECT id FROM students"))).scalar_one())
        secret = await tokens.issue(session, student)
        await session.commit()

    folder = tmp_path / "nginx"
    folder.mkdir()
    folder.chmod(0o755)  # nginx's workers (nobody) read the certificate through it
    trusted = certificate(folder)
    https, http, upstream = free_port(), free_port(), free_port()
    site = folder / "campus-mcp.conf"
    site.write_text(moved(SHIPPED.read_text(), https=https, http=http, upstream=upstream, folder=folder))
    (folder / "nginx.conf").write_text(main_config(folder, site))
    proxy = start_nginx(binary, folder / "nginx.conf")
    try:
        base = f"https://127.0.0.1:{https}"
        async with httpx.AsyncClient(
            base_url=base, verify=ssl.create_default_context(cafile=trusted), timeout=10
        ) as calendar_app:
            async with serve_on_loopback(campus.app, upstream):
                deadline = time.monotonic() + 20
                while True:  # nginx has no ready signal: its port answering is one
                    try:
                        fetched = await calendar_app.get(f"/calendar/{secret}.ics")
                        break
                    except httpx.ConnectError:
                        assert proxy.poll() is None, proxy.stderr.read() if proxy.stderr else ""
                        assert time.monotonic() < deadline, "nginx did not answer within 20 s"
                        await asyncio.sleep(0.1)
                assert fetched.status_code == 200 and "BEGIN:VCALENDAR" in fetched.text
                unknown = await calendar_app.get(f"/calendar/{secret[::-1]}.ics?x={secret}")
                assert unknown.status_code == 404
                async with httpx.AsyncClient(timeout=10) as plain:
                    redirected = await plain.get(f"http://127.0.0.1:{http}/calendar/{secret}.ics")
                assert redirected.status_code == 301
            # The campus is gone: nginx fails the feed and another path, and writes its errors.
            failed = await calendar_app.get(f"/calendar/{secret}.ics")
            elsewhere = await calendar_app.get("/api/v1/catalog/terms")
        assert failed.status_code == 502 and elsewhere.status_code == 502
    finally:
        proxy.send_signal(signal.SIGQUIT)  # nginx's graceful stop: its logs written
        proxy.wait(timeout=20)

    access = (folder / "campus-mcp.access.log").read_text()
    errors = (folder / "error.log").read_text()
    lines = [line for line in access.splitlines() if "/calendar/" in line]
    assert len(lines) == 4, access
    assert all("/calendar/[secret].ics" in line for line in lines), access
    assert [line.split('" ')[1].split()[0] for line in lines] == ["200", "404", "301", "502"], access
    for name in ("campus-mcp.access.log", "access.log", "error.log"):
        said = (folder / name).read_text() if (folder / name).exists() else ""
        assert secret not in said and secret[::-1] not in said, f"the feed's secret is in nginx's {name}"
    # The error log works: the other path's failure is in it, the request line whole.
    assert "/api/v1/catalog/terms" in errors and "connect() failed" in errors, errors
