#!/usr/bin/env bash
# Set up everything rbd_ros needs in a venv (idempotent): the ROS 2 Jazzy wheels, the core's
# dependencies, rbd_ros itself and its interface package rbd_ros_interfaces.
#
#   bash scripts/setup.sh [--test] [--no-ros] [--over FILE]
#
# --test: also the test tools and the reference libraries. --no-ros: without ROS 2 (its wheels,
# the interface package, the nodes' executables): the dynamics core and the offline tools alone,
# as a library; the suite then runs their tests and skips the others, saying why. --over:
# requirements installed over the pins before the kernels are compiled (requirements-noble.txt:
# Ubuntu 24.04's numpy and numba). The venv is ./.venv, or RBD_VENV; PYTHON names another
# interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
TEST=0
ROS=1
OVER=""
while [ $# -gt 0 ]; do
    case "$1" in
        --test) TEST=1 ;;
        --no-ros) ROS=0 ;;
        --over) OVER="${2:-}"; shift ;;
        *) echo "usage: bash scripts/setup.sh [--test] [--no-ros] [--over FILE]" >&2
           exit 2 ;;
    esac
    shift
done
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
pip_install() {
    # quiet; pip's notes about unreachable extra indexes on some machines are noise. (Bytecode
    # stays compiled at install, half of pip's 70 s: where PYTHONDONTWRITEBYTECODE is set, as on
    # these machines, a --no-compile venv compiles its modules again in every process)
    "$VENV/bin/python" -m pip install -q "$@" 2> >(grep -v "is ignored: it is neither" >&2)
}
reqs=(-r requirements.txt)
if [ "$ROS" = 1 ]; then
    reqs+=(-r requirements-jazzy.txt -r requirements-build.txt)
fi
if [ "$TEST" = 1 ]; then
    reqs+=(-r requirements-test.txt)
fi
# setuptools below 80: colcon (the workspace recipe, requirements-test.txt) asks for it
pip_install --upgrade pip==25.3 setuptools==79.0.1 wheel==0.45.1
pip_install "${reqs[@]}"
pip_install --no-deps --no-build-isolation -e .
# rbd_ros's own bytecode: an editable install leaves it to each process, which cannot keep it
# where PYTHONDONTWRITEBYTECODE is set (as on these machines) and compiles every module again:
# 0.2 s of every node's and command's start
"$VENV/bin/python" -m compileall -q rbd_ros > /dev/null
prefix="$(cd "$VENV" && pwd)"
if [ "$ROS" = 1 ]; then
    # the service definitions (rbd_ros_interfaces) and the part of control_msgs the trajectory
    # controller serves (pip/control_msgs: the wheels have no control_msgs), ament_cmake
    # packages built against the wheels (about 20 s each), again only when their sources changed
    for pkg in rbd_ros_interfaces pip/control_msgs; do
        stamp="$prefix/.$(basename "$pkg").sha"
        sha="$(find "$pkg" rbd_ros_interfaces/cmake -type f | sort | xargs cat | sha256sum \
                | cut -d' ' -f1)"
        if [ "$(cat "$stamp" 2>/dev/null)" != "$sha" ]; then
            AMENT_PREFIX_PATH="$prefix" CMAKE_PREFIX_PATH="$prefix" \
                pip_install --no-deps --no-build-isolation --force-reinstall "./$pkg"
            echo "$sha" > "$stamp"
        fi
    done
    # what `ros2 run` and `ros2 launch` look for under the prefix, which an editable install
    # does not write: the ament index marker, share/rbd_ros (setup.py's data_files) and the
    # nodes' executables in lib/rbd_ros
    rm -rf "$prefix/share/rbd_ros" "$prefix/lib/rbd_ros"
    "$VENV/bin/python" setup.py -q install_data --install-dir "$prefix" > /dev/null 2>&1
    mkdir -p "$prefix/lib/rbd_ros"
    for exe in $("$VENV/bin/python" -c "from importlib.metadata import entry_points
print(*(e.name for e in entry_points(group='console_scripts') if e.value.startswith('rbd_ros.nodes')))"); do
        cp "$VENV/bin/$exe" "$prefix/lib/rbd_ros/"
    done
    # `source .venv/bin/activate` also puts the venv on the ament index, for the ros2 CLI
    grep -q AMENT_PREFIX_PATH "$VENV/bin/activate" || cat >> "$VENV/bin/activate" <<'ENV'
# rbd_ros: the venv is a ROS prefix (ros2 run / ros2 launch rbd_ros ...)
export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
ENV
fi
if [ -n "$OVER" ]; then
    pip_install -r "$OVER"
fi
# numba's compiled kernels, once (about a minute; seconds when nothing changed): no node
# compiles when it starts
"$VENV/bin/python" -m rbd_ros.app.numba_cache
if [ "$ROS" = 1 ]; then
    AMENT_PREFIX_PATH="$prefix" "$VENV/bin/python" -c "
import rbd_ros.dynamics, rbd_ros_interfaces.srv, control_msgs.action
from ament_index_python import get_package_share_directory as share
assert share('rbd_ros') == '$prefix/share/rbd_ros'" \
        || { echo "error: set-up failed" >&2; exit 1; }
else
    "$VENV/bin/python" -c "import rbd_ros.dynamics, rbd_ros.bag.analyze" \
        || { echo "error: set-up failed" >&2; exit 1; }
fi
