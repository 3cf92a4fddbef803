"""Wait until a URL answers 200, or fail after a time limit: ``wait-for.py URL [SECONDS] [--pid PID]``.

Used by the scripts that start a server in the background. With ``--pid``, stop waiting as soon
as that process has exited (its log says why), instead of running out the clock.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.error
import urllib.request


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A child that exited but was not reaped yet is a zombie: count it as gone.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("seconds", nargs="?", type=float, default=60.0)
    parser.add_argument("--pid", type=int, default=None, help="give up when this process exits")
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        if args.pid is not None and not alive(args.pid):
            print(f"wait-for: the server (pid {args.pid}) exited before {args.url} answered", file=sys.stderr)
            return 1
        try:
            with urllib.request.urlopen(args.url, timeout=2) as response:  # noqa: S310 - loopback URL from our scripts
                if response.status == 200:
                    return 0
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    print(f"wait-for: {args.url} did not answer 200 within {args.seconds:.0f}s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
