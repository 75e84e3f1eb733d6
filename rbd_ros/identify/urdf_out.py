"""The URDF with identified parameters: every body's mass, centre of mass and inertia on the
link that names it, each actuated joint's friction, and the rotor inertia of each joint whose
transmission has one (its gear ratio kept); the rest of the document untouched."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from ..dynamics import Model
from ..dynamics.multibody.model import F64
from ..dynamics.multibody.urdf import rotor_tags
from .fit import actuated, rotors

#: Drake's namespace keeps its prefix in the URDF written (Drake reads the tags by it)
ET.register_namespace("drake", "http://drake.mit.edu")


def _num(x: float) -> str:
    return repr(float(x))  # every digit: the file gives back the identified numbers exactly


def _inertial(link: ET.Element, mass: float, com: F64, Ic: F64) -> None:
    for old in link.findall("inertial"):
        link.remove(old)
    el = ET.SubElement(link, "inertial")
    ET.SubElement(el, "origin", xyz=" ".join(_num(x) for x in com), rpy="0 0 0")
    ET.SubElement(el, "mass", value=_num(mass))
    ET.SubElement(el, "inertia", ixx=_num(Ic[0, 0]), ixy=_num(Ic[0, 1]), ixz=_num(Ic[0, 2]),
                  iyy=_num(Ic[1, 1]), iyz=_num(Ic[1, 2]), izz=_num(Ic[2, 2]))


def identified_urdf(urdf: str, model: Model, phi: F64) -> str:
    """``urdf`` (the document ``model`` was loaded from) with the parameters ``phi``. A body
    that merges links joined by fixed joints carries its whole inertia on its own link; the
    links merged into it lose theirs (the dynamics are the same)."""
    root = ET.fromstring(urdf)
    links = {el.get("name"): el for el in root.findall("link")}
    for name in model.frames:
        if name not in model.body_names and name in links:
            for old in links[name].findall("inertial"):
                links[name].remove(old)
    for i, name in enumerate(model.body_names):
        p = phi[10 * i : 10 * i + 10]
        m = float(p[0])
        Io = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
        c = p[1:4] / m
        Ic = Io - m * (c @ c * np.eye(3) - np.outer(c, c))  # about the centre of mass
        f = model.frames[name]  # the link's pose in the body's frame
        R, t = f.rotation, f.translation
        _inertial(links[name], m, R.T @ (c - t), R.T @ Ic @ R)
    joints = {el.get("name"): el for el in root.findall("joint")}
    rows = actuated(model)
    fv, fc = phi[10 * model.nb :][: rows.size], phi[10 * model.nb :][rows.size :]
    for j in model.joints:  # a mimic joint's friction is identified as its source's
        mimic = j.mimic is not None
        if (mimic or j.idx_v in rows) and j.nv == 1:
            k = int(np.searchsorted(rows, j.idx_v))
            dyn = joints[j.name].find("dynamics")
            if dyn is None:
                dyn = ET.SubElement(joints[j.name], "dynamics")
            dyn.set("damping", "0" if mimic else _num(fv[k]))
            dyn.set("friction", "0" if mimic else _num(fc[k]))
    _rotor_inertias(root, model, phi)
    return ET.tostring(root, encoding="unicode")


def _rotor_inertias(root: ET.Element, model: Model, phi: F64) -> None:
    """Each identified armature into its transmission's ``rotor_inertia``, as armature / gear
    ratio^2 (the tags as :mod:`rbd_ros.dynamics.multibody.urdf` reads them)."""
    rot = rotors(model)
    names = [model.state_joint_names[k] for k in rot]
    armature = dict(zip(names, phi[phi.size - rot.size :], strict=True))
    for tr in root.findall("transmission"):
        joint = tr.find("joint")
        tags = rotor_tags(tr)
        name = None if joint is None else joint.get("name")
        if name in armature and "rotor_inertia" in tags:
            ratio = float(tags["gear_ratio"].get("value", "1")) if "gear_ratio" in tags else 1.0
            tags["rotor_inertia"].set("value", _num(armature[name] / ratio**2))
