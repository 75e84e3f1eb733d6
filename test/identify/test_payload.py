"""``rbd-ros identify --payload``: the bundled arm carrying a known payload on its last link (a
box, its centre of mass off the flange), 20 s of exciting motion, efforts computed by Pinocchio
from the arm with the payload, plus the URDF's joint friction and effort noise; the recording
names the arm without it. Mass within 2 %, centre of mass within 5 mm."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from test_identify import NAMES, efforts, exciting, write

from rbd_ros.bag.errors import BagError
from rbd_ros.dynamics import load_urdf
from rbd_ros.identify.payload import INERTIA_ENTRIES, identify_payload
from rbd_ros.identify.run import Options
from rbd_ros.robots import ARM

MASS = 1.7  # kg
COM = np.array([0.02, -0.015, 0.06])  # m, in link7's frame
BOX = (0.08, 0.06, 0.12)  # m: its inertia is a solid box's
RPY = (0.3, -0.2, 0.5)  # its principal axes in link7's
NOISE = 0.3  # N m


def with_payload() -> str:
    """The arm's URDF with the payload fixed to link7."""
    root = ET.fromstring(ARM.read_text())
    a, b, c = BOX
    inertia = {"ixx": MASS * (b * b + c * c) / 12, "iyy": MASS * (a * a + c * c) / 12,
               "izz": MASS * (a * a + b * b) / 12, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}
    # (the box's own axes, turned by RPY from link7's)
    link = ET.SubElement(root, "link", name="payload")
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz=" ".join(str(float(x)) for x in COM), rpy=" ".join(map(str, RPY)))
    ET.SubElement(inertial, "mass", value=repr(MASS))
    ET.SubElement(inertial, "inertia", {k: repr(v) for k, v in inertia.items()})
    joint = ET.SubElement(root, "joint", name="payload_mount", type="fixed")
    ET.SubElement(joint, "parent", link="link7")
    ET.SubElement(joint, "child", link="payload")
    return ET.tostring(root, encoding="unicode")


def inertia_in_link7() -> np.ndarray:
    """The box's inertia about its centre in link7's axes (its frame turned by RPY)."""
    r, p, y = RPY
    Rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    Ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    Rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    R = Rz @ Ry @ Rx
    a, b, c = BOX
    box = MASS / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    out: np.ndarray = R @ box @ R.T
    return out


@pytest.fixture(scope="module")
def carried(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(5)
    t, q, v, a = exciting(20.0, rng)
    m = load_urdf(ARM)
    friction = {j.name: (j.damping, j.friction) for j in m.joints}
    fv, fc = (np.array([friction[n][k] for n in NAMES]) for k in (0, 1))
    exact = efforts(with_payload(), q, v, a, fv, fc)
    return write(tmp_path_factory.mktemp("payload") / "carried", t, q,
                 exact + rng.normal(scale=NOISE, size=exact.shape))


def test_the_payload_is_found(carried: Path, tmp_path: Path) -> None:
    payload, text = identify_payload([carried], tmp_path, Options(), "link7")
    assert abs(payload.mass - MASS) < 0.02 * MASS, text
    assert np.linalg.norm(payload.com - COM) < 0.005, text
    assert payload.mass_sigma < 0.02 * MASS and np.all(payload.com_sigma < 0.005), text
    # the inertia, hardly seen in the torques, within its stated uncertainty (4 sigma)
    truth = inertia_in_link7()
    entries = [(i, j) for _, i, j in INERTIA_ENTRIES]
    error = np.array([payload.inertia[i, j] - truth[i, j] for i, j in entries])
    assert np.all(np.abs(error) < 4 * payload.inertia_sigma), (error, text)
    # the held-out torques: the payload explains what the URDF alone misses, to the noise
    rms = np.array([[float(x) for x in line.split()[1:]] for line in text.splitlines()
                    if line.startswith("  joint")])
    assert np.all(rms[:, 1] < NOISE * 1.2) and rms[:, 0].max() > 3 * NOISE, text
    assert (tmp_path / "report.txt").read_text() == text + "\n"


def test_the_command_line_and_a_link_that_is_not_there(carried: Path, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "identify", str(carried),
                          "--payload", "link7", "--out", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "payload on link7" in out and re.search(r"mass +1\.7\d* kg", out), out
    with pytest.raises(BagError, match=r"no such link; links: .*link7"):
        identify_payload([carried], tmp_path / "no", Options(), "gripper")
    with pytest.raises(BagError, match="fixed to the world"):
        identify_payload([carried], tmp_path / "no", Options(), "world")
