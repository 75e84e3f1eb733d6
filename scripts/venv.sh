# Sourced by setup.sh and test.sh: the venv of a ROS 2 distribution, .venv for Kilted (the
# default), .venv-<distro> for another; RBD_VENV overrides it.
venv_for() {
    if [ -n "${RBD_VENV:-}" ]; then echo "$RBD_VENV"
    elif [ "$1" = kilted ]; then echo .venv
    else echo ".venv-$1"
    fi
}
