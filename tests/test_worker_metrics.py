"""``campus-mcp worker`` serves its own ``/metrics`` with ``CAMPUS_MCP_WORKER_METRICS_PORT`` (issue 35,
point 7's worker): in compose the worker's job counts were written into a folder nothing served, so
they never reached Prometheus.

A real worker subprocess runs the ``race`` plugin's job (tests/support/scale_out.py) every second;
its port answers the job's runs in the Prometheus text format, behind serve's guard (another
``Host`` is refused, the token admits any), and ``/healthz``. A port that is taken stops the worker
at once with the setting to change; SIGTERM stops it and closes the port. The runs are counted in
``CAMPUS_MCP_METRICS_DIR``, which a ``serve`` on the same machine reads: before, ``worker``
imported prometheus-client before it set the folder up, so no count of it reached any ``/metrics``.
"""

from __future__ import annotations

import re
import signal
import socket
from pathlib import Path

import httpx
import pytest
from campus_mcp.oauth.testkit import free_port

from tests.support.scale_out import SHARED_KEY, campus_mcp, plugin_site, run_command, running, wait_for

TOKEN = "worker-metrics-test-token-" + "t" * 24


def worker_env(tmp_path: Path, port: int) -> dict[str, str]:
    return {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}",
        "CAMPUS_MCP_DEMO": "false",
        "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
        "CAMPUS_MCP_PLUGINS": "race",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        # As in compose: a folder of the worker's own, which no serve reads.
        "CAMPUS_MCP_METRICS_DIR": str(tmp_path / "worker-metrics"),
        "CAMPUS_MCP_WORKER_METRICS_PORT": str(port),
        "CAMPUS_MCP_METRICS_TOKEN": TOKEN,
        "CAMPUS_RACE_TICK_SECONDS": "1",
        "PYTHONPATH": str(plugin_site(tmp_path / "site")),
    }


def ok_runs(page: str) -> float:
    found = re.search(r'^campus_mcp_job_runs_total\{job="race\.tick",outcome="ok"\} (\S+)$', page, re.M)
    return float(found[1]) if found else 0.0


async def test_a_worker_serves_its_job_counts_on_its_own_metrics_port(tmp_path: Path) -> None:
    port = free_port()
    env = worker_env(tmp_path, port)
    migrated = run_command("db", "upgrade", env=env)
    assert migrated.returncode == 0, migrated.stderr
    log = tmp_path / "worker.log"
    worker = campus_mcp("worker", env=env, log=log)
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=10) as scraper:
        with running(worker):

            async def two_runs_counted() -> bool:
                return ok_runs((await scraper.get(f"{base}/metrics")).text) >= 2

            await wait_for(two_runs_counted, within=60, what="two runs of race.tick on the worker's /metrics", log=log)
            page = await scraper.get(f"{base}/metrics")
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
            assert "campus_mcp_job_run_duration_seconds_count" in page.text
            # Counted in the folder, too: what a serve beside it on one machine reads (systemd). Before, the
            # worker imported prometheus-client ahead of the folder and counted in its memory alone.
            assert list((tmp_path / "worker-metrics").glob("counter_*.db")), "no counts in the metrics folder"
            assert (await scraper.get(f"{base}/healthz")).json() == {"status": "ok"}
            # serve's guard: a page that rebinds its name to this machine is refused; the token admits.
            rebound = await scraper.get(f"{base}/metrics", headers={"Host": "attacker.example"})
            assert rebound.status_code == 421
            tokened = await scraper.get(
                f"{base}/metrics", headers={"Host": "worker:9100", "Authorization": f"Bearer {TOKEN}"}
            )
            assert tokened.status_code == 200 and ok_runs(tokened.text) >= 2
            # A second worker on the same port says which setting to change, at once.
            taken = run_command("worker", env=env, timeout=60)
            assert taken.returncode != 0
            assert f"cannot serve its metrics on 127.0.0.1:{port}" in taken.stderr, taken.stderr
            assert "CAMPUS_MCP_WORKER_METRICS_PORT" in taken.stderr
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(timeout=30) == 0, log.read_text()[-2000:]
    assert f"Its metrics: http://127.0.0.1:{port}/metrics." in log.read_text()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass  # closed with the worker
