"""Build, once, the bundle of the official ext-apps host bridge that tests/families/test_apps_browser.py drives.

    .venv/bin/python scripts/ext_apps_bundle.py     (.ci/run, before the two test passes)

The test npm installs it into .node/ext-apps on first use and reuses the bundle after. CI runs the
SQLite and the PostgreSQL passes at the same time, so without this both would install into that
folder at once. It calls the test module's own function, so the versions and the build stay the
test's. Exit status 0 even when npm cannot install it (the test then skips, as it would have).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TEST_MODULE = Path(__file__).resolve().parent.parent / "tests" / "families" / "test_apps_browser.py"


def main() -> int:
    spec = importlib.util.spec_from_file_location("apps_browser_test", TEST_MODULE)
    assert spec is not None and spec.loader is not None, f"cannot load {TEST_MODULE}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # The test's own install, not a copy of it.
    bundle = module._ext_apps_bundle()
    if bundle is None:
        print("ext-apps: npm could not install the bridge; the apps page test will skip it")
    else:
        print(f"ext-apps: bundle ready ({len(bundle):,} characters) in .node/ext-apps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
