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
    for name in ("load_urdf", "rnea", "aba", "crba", "rnea_batch", "Model", "Data",
                 "floating.base_reaction", "floating.forward_dynamics", "contacts.Contact",
                 "contacts.Reaction", "contacts.solve", "contacts.check_contacts",
                 "kinematics.placements", "observer.MomentumObserver",
                 "observer.MomentumObserver.update", "observer.CollisionDetector"):
        assert f'id="rbd_ros.dynamics.{name}"' in api, name
    for tutorial in ("feedforward", "services", "collisions", "floating_base", "recordings"):
        page = (out / "tutorials" / f"{tutorial}.html").read_text()
        assert "highlight-python" in page or "<img" in page, tutorial  # a program or a picture


