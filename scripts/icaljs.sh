#!/usr/bin/env bash
# Mozilla's ical.js (npm) on the Node 22 of scripts/node.sh, in .node/ (gitignored).
#
#   scripts/icaljs.sh     (tests/families/test_calendar_feed_icaljs.py runs it; .ci/run runs it once before
#                          the two test passes, so they never npm install into .node/ at once)
#
# The calendar feed is read by calendar apps that are not Python: ical.js is the parser of
# Thunderbird and of many web calendars, and it read our zone differently from Python's icalendar
# once (issue 24, point 1). Prints nothing but npm's own errors; exit status 0 once both are there.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=$ROOT/.venv/bin/python
ICALJS_VERSION=2.2.1

source "$ROOT/scripts/node.sh"
use_node22 ical.js >&2
node_install ical.js "$ICALJS_VERSION" ical.js >&2
