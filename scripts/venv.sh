# Sourced by setup.sh, test.sh and .ci/run: the venv (.venv, or RBD_VENV), and how the suite
# runs: in four processes (pytest-xdist; each in a ROS domain of its own), a test file each, so
# that a file's set-up is made once. Four on two cores: the tests wait on nodes and discovery
# as much as they compute (beside a busy process the suite took 325 s, against 342 s in three
# processes and 370 s in two).
VENV="${RBD_VENV:-.venv}"
PYTEST_PARALLEL=(-n 4 --dist loadfile)
