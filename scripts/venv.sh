# Sourced by setup.sh and test.sh: the venv of a ROS 2 distribution, .venv for Jazzy (the
# default: the LTS), .venv-<distro> for another; RBD_VENV overrides it.
DEFAULT_DISTRO=jazzy
venv_for() {
    if [ -n "${RBD_VENV:-}" ]; then echo "$RBD_VENV"
    elif [ "$1" = "$DEFAULT_DISTRO" ]; then echo .venv
    else echo ".venv-$1"
    fi
}
