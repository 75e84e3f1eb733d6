"""The documentation builds without a warning (broken references, missing API entries fail it),
and its reference is the code's: every parameter a node declares and every option of the
command line appear in the built pages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_without_warnings_and_list_every_parameter_and_option(
        tmp_path: Path) -> None:
    out = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(ROOT / "doc"), str(out)], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    nodes = (out / "nodes.html").read_text()
    for name in ("robot_description", "observer_gain", "collision_release", "joint_states_qos",
                 "contact_links", "friction_coefficient", "input_timeout", "held_joints"):
        assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{name}</span>" \
            in nodes, name
    assert "[0.01, 10000]" in nodes  # observer_gain's range, from its descriptor
    cli = (out / "reference" / "cli.html").read_text()
    for option in ("--wait-for", "--scheduler-timeout", "--ignore-efforts", "--floating-base"):
        assert option in cli, option
    api = (out / "api.html").read_text()
    for name in ("load_urdf", "rnea", "aba", "crba"):
        assert f'id="rbd_ros.dynamics.{name}"' in api, name


def test_the_service_tutorials_client_runs_against_the_node(tmp_path: Path) -> None:
    """doc/examples/dynamics_client.py, as the tutorial says to run it, against the dynamics
    node on the bundled arm: its answers are the core's, and the short request is refused."""
    import re

    import numpy as np
    from rosutil import NodeProcess, params_file

    from rbd_ros.dynamics import Data, gravity, load_urdf, rnea
    from rbd_ros.robots import ARM

    params = params_file(tmp_path / "p.yaml", "/rbd_dynamics",
                         {"robot_description": ARM.read_text()})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params))
    try:
        r = subprocess.run([sys.executable, str(ROOT / "doc" / "examples" / "dynamics_client.py")],
                           capture_output=True, text=True, timeout=180)
    finally:
        log = node.stop()
    assert r.returncode == 0, r.stdout + r.stderr + log

    def printed(label: str) -> np.ndarray:
        m = re.search(label + r" \(N m\): (.*)", r.stdout)
        assert m is not None, r.stdout
        return np.array([float(x) for x in m.group(1).split()])

    m = load_urdf(ARM)
    d = Data(m)
    q = np.array([0.0, 0.4, 0.0, -1.2, 0.0, 1.6, 0.8])
    np.testing.assert_allclose(printed("gravity torques"), gravity(m, d, q), atol=1e-3)
    a = np.zeros(7)
    a[3] = 1.0
    np.testing.assert_allclose(printed("inverse dynamics"), rnea(m, d, q, np.zeros(7), a),
                               atol=1e-3)
    assert re.search(r"^refused: .*joint", r.stdout, re.M), r.stdout
