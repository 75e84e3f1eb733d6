#!/usr/bin/env bash
# Set up everything rbd_ros needs in ./.venv (idempotent): the ROS 2 wheels, the core's
# dependencies and rbd_ros itself. With --test, also the test tools and the reference library.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${RBD_VENV:-.venv}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
pip_install() {
    # quiet; pip's notes about unreachable extra indexes on some machines are noise
    "$VENV/bin/python" -m pip install -q "$@" 2> >(grep -v "is ignored: it is neither" >&2)
}
reqs=(-r requirements.txt)
if [ "${1:-}" = "--test" ]; then
    reqs+=(-r requirements-test.txt)
fi
pip_install --upgrade pip==25.3 setuptools==80.9.0 wheel==0.45.1
pip_install "${reqs[@]}"
pip_install --no-deps --no-build-isolation -e .
"$VENV/bin/python" -c "import rbd_ros.dynamics" || { echo "error: set-up failed" >&2; exit 1; }
