# Sourced by setup.sh, test.sh and .ci/run: the venv of a ROS 2 distribution, .venv for Jazzy
# (the default: the LTS), .venv-<distro> for another; RBD_VENV overrides it. And how the suite
# runs: in two processes (pytest-xdist; each in a ROS domain of its own), a test file each, so
# that a file's set-up is made once.
DEFAULT_DISTRO=jazzy
PYTEST_PARALLEL=(-n 2 --dist loadfile)
venv_for() {
    if [ -n "${RBD_VENV:-}" ]; then echo "$RBD_VENV"
    elif [ "$1" = "$DEFAULT_DISTRO" ]; then echo .venv
    else echo ".venv-$1"
    fi
}
