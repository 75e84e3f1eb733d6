"""URDF text for the small robots tests build: a link, a joint, a robot, and random trees
(a hypothesis strategy)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


def inertia(ixx: float, iyy: float, izz: float) -> str:
    """A diagonal ``<inertia>``'s attributes."""
    return f'ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"'


def link(name: str, mass: float | None = None, com: str = "0 0 0",
         inertia: str = inertia(0, 0, 0), rpy: str = "0 0 0") -> str:
    """A link; without ``mass``, one with no inertial."""
    if mass is None:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="{rpy}"/>'
            f'<mass value="{mass}"/><inertia {inertia}/></inertial></link>')


def joint(name: str, kind: str, parent: str, child: str, xyz: str = "0 0 0",
          axis: str = "0 1 0", rpy: str = "0 0 0", extra: str = "") -> str:
    """A joint; ``extra``: its ``<limit>``, ``<mimic>`` or ``<dynamics>``."""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{extra}</joint>')


def limit(lower: float = -3, upper: float = 3, effort: float = 10, velocity: float = 1) -> str:
    return f'<limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>'


def robot(*parts: str, name: str = "t") -> str:
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


DRAKE = "http://drake.mit.edu"


def with_rotors(urdf: str, rotors: dict[str, tuple[float, float | None]]) -> str:
    """``urdf`` with a transmission per joint holding its motor's rotor in Drake's tags: its
    rotor inertia and gear ratio (None: no ``gear_ratio`` tag), the namespace declared."""
    if "xmlns:drake" not in urdf:
        urdf = urdf.replace("<robot ", f'<robot xmlns:drake="{DRAKE}" ', 1)
    tags = "".join(
        f'<transmission name="{j}_rotor"><joint name="{j}"/><actuator name="{j}_motor">'
        f'<drake:rotor_inertia value="{inertia!r}"/>'
        + ("" if ratio is None else f'<drake:gear_ratio value="{ratio!r}"/>')
        + "</actuator></transmission>" for j, (inertia, ratio) in rotors.items())
    head, _, tail = urdf.rpartition("</robot>")
    return head + tags + "</robot>" + tail


finite = st.floats(-1.0, 1.0, allow_nan=False)
unit = st.floats(0.2, 1.0)


@st.composite
def trees(draw: st.DrawFn) -> str:
    """A URDF string: 2-8 moving links in a random tree, some fixed links, maybe a mimic joint
    anywhere (ABA's constraint correction) and maybe a gripper whose fingers mimic one joint
    (a one-coordinate group for ABA, when it is the only mimic)."""
    n = draw(st.integers(2, 8))
    links = [link("l0", 1, inertia=inertia(0.1, 0.1, 0.1))]
    joints = []
    kinds = []

    def xyz() -> str:
        return f"{draw(finite)} {draw(finite)} {draw(finite)}"

    for k in range(1, n + 1):
        parent = draw(st.integers(0, k - 1))
        kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
        kinds.append((kind, k))
        m = draw(st.floats(0.1, 5.0))
        a, b = draw(unit), draw(unit)
        c = draw(st.floats(abs(a - b) + 0.05, a + b))  # triangle inequality holds
        rpy = xyz()
        links.append(link(f"l{k}", m, com=xyz(), rpy=rpy, inertia=inertia(a, b, c)))
        axis = [draw(finite) for _ in range(3)]
        if np.linalg.norm(axis) < 0.1:
            axis = [0.0, 0.0, 1.0]
        joints.append(joint(f"j{k}", kind, f"l{parent}", f"l{k}", xyz=xyz(), rpy=xyz(),
                            axis=" ".join(map(str, axis)), extra=limit(-2, 2, 10, 5)))
    moving = [k for kind, k in kinds if kind != "fixed"]
    if len(moving) >= 2 and draw(st.booleans()):  # one joint mimics an earlier one
        k = draw(st.sampled_from(moving[1:]))
        src = draw(st.sampled_from([j for j in moving if j < k]))
        mult = draw(st.sampled_from([-1.5, -0.5, 0.7, 1.0, 2.0]))
        joints[k - 1] = joints[k - 1].replace(
            "</joint>", f'<mimic joint="j{src}" multiplier="{mult}" offset="{draw(finite)}"/>'
                        "</joint>")
    if draw(st.booleans()):  # a gripper on a random link: a finger, a mimic finger and its tip
        parent = draw(st.integers(0, n))
        kind = draw(st.sampled_from(["revolute", "prismatic"]))
        tips = [(f"g{i}", f"l{parent}" if i < 2 else "lg1") for i in range(3)]
        for i, (name, up) in enumerate(tips):
            links.append(link(f"l{name}", draw(st.floats(0.05, 1)),
                              inertia=inertia(0.01, 0.02, 0.02)))
            mimic = "" if i == 0 else f'<mimic joint="g0" multiplier="{1 - 2 * (i == 1)}"/>'
            joints.append(joint(name, kind, up, f"l{name}",
                                xyz=f"{draw(finite)} {draw(finite)} 0.1",
                                rpy=f"0 0 {draw(finite)}", extra=limit(-1, 1, 10, 5) + mimic))
    return robot(*links, *joints, name="random")


def with_floating_root(text: str, joint_name: str = "root_joint") -> str:
    """The bundled quadruped's URDF ``text`` with its free flyer declared, as some exports write
    it: a massless "world" link and a floating joint from it into the base."""
    declared = text.replace('<robot name="quadruped">', '<robot name="quadruped"><link '
                            f'name="world"/><joint name="{joint_name}" type="floating"><parent '
                            'link="world"/><child link="base"/></joint>')
    assert declared != text, "not the bundled quadruped's URDF"
    return declared
