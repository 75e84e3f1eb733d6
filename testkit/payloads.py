"""A known payload on the bundled arm's last link, for the tests: the URDF of the arm carrying
it (a box fixed to link7, its axes turned, its centre off the flange) and its parameters as
``Model.with_payload`` and the node's ``payload`` parameter take them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from rbd_ros.robots import ARM

MASS = 1.7  # kg
COM = np.array([0.02, -0.015, 0.06])  # m, in link7's frame
BOX = (0.08, 0.06, 0.12)  # m: its inertia is a solid box's
RPY = (0.3, -0.2, 0.5)  # its principal axes in link7's


def with_payload(urdf: str | None = None) -> str:
    """The arm's URDF (``urdf``: as built, by default the bundled one) with the payload fixed
    to link7."""
    root = ET.fromstring(urdf or ARM.read_text())
    a, b, c = BOX
    inertia = {"ixx": MASS * (b * b + c * c) / 12, "iyy": MASS * (a * a + c * c) / 12,
               "izz": MASS * (a * a + b * b) / 12, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}
    link = ET.SubElement(root, "link", name="payload")
    inertial = ET.SubElement(link, "inertial")  # the box's own axes, turned by RPY
    ET.SubElement(inertial, "origin", xyz=" ".join(str(float(x)) for x in COM),
                  rpy=" ".join(map(str, RPY)))
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


def payload_values() -> list[float]:
    """mass, centre of mass, inertia about it (xx xy xz yy yz zz), in link7's frame."""
    inertia = inertia_in_link7()
    return [MASS, *COM.tolist(), *(float(inertia[i, j]) for i, j in
                                   ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))]
