#!/bin/sh
# The thread-count variables written once: the table of
# lib/options/thread_vars.c, the two lists for readers (user guide, man
# page) checked against it, links everywhere else (tests/e2e/thread_vars.py).
cd "$(dirname "$0")/../.." || exit 2
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is missing"; exit 0; }
exec python3 tests/e2e/thread_vars.py
