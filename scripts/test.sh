#!/usr/bin/env bash
# Set up (scripts/setup.sh --test) and run the whole test suite: pytest, which also runs ruff
# and mypy over rbd_ros/. Exits non-zero on any failure, and when no test ran.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
