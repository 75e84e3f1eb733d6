#!/usr/bin/env bash
# Set up (scripts/setup.sh --test) and run the whole test suite: pytest, which also runs ruff
# and mypy. Exits non-zero on any failure, and when no test ran.
#
#   bash scripts/test.sh [pytest arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
bash scripts/setup.sh --test || exit 1
"$VENV/bin/python" -m pytest "${PYTEST_PARALLEL[@]}" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
