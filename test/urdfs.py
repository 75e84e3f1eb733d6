"""URDF text for the small robots tests build: a link, a joint, a robot."""

from __future__ import annotations


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
