"""The kit's free_port: a loopback port for a test's server that no outgoing connection can take first.

CI runs two test passes side by side, each with database connections and HTTP clients whose local
ports the kernel draws from its ephemeral range. The kit used to hand out a ``bind(0)`` port, from
that same range, and a connection took one before the test's server bound it ("address already in
use" at a server's start, a red CI run).
"""

from __future__ import annotations

import socket

from campus_mcp.testing import free_port
from campus_mcp.testing.oauth import ephemeral_ports


def test_the_port_is_outside_the_range_connections_draw_from_and_can_be_bound() -> None:
    ephemeral = ephemeral_ports()
    ports = [free_port() for _ in range(50)]
    assert not [port for port in ports if port in ephemeral]
    assert all(1024 < port < 65536 for port in ports)
    # Spread out, so that two tests starting servers at once rarely meet on one port.
    assert len(set(ports)) > 40
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", ports[0]))
        server.listen()


def test_a_port_someone_listens_on_is_never_given() -> None:
    listeners = []
    try:
        for _ in range(20):
            port = free_port()
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", port))
            listener.listen()
            listeners.append(listener)
        taken = {listener.getsockname()[1] for listener in listeners}
        assert not taken & {free_port() for _ in range(200)}
    finally:
        for listener in listeners:
            listener.close()
