# Sourced by setup.sh, test.sh and .ci/run: the venv of a ROS 2 distribution, .venv for Jazzy
# (the default: the LTS), .venv-<distro> for another; RBD_VENV overrides it. And how the suite
# runs: in four processes (pytest-xdist; each in a ROS domain of its own), a test file each, so
# that a file's set-up is made once. Four on two cores: the tests wait on nodes and discovery
# as much as they compute (beside a busy process the suite took 325 s, against 342 s in three
# processes and 370 s in two).
DEFAULT_DISTRO=jazzy
PYTEST_PARALLEL=(-n 4 --dist loadfile)
venv_for() {
    if [ -n "${RBD_VENV:-}" ]; then echo "$RBD_VENV"
    elif [ "$1" = "$DEFAULT_DISTRO" ]; then echo .venv
    else echo ".venv-$1"
    fi
}
