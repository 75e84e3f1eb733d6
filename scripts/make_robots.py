"""Write the bundled robots' URDFs (rbd_ros/robots/arm7.urdf, rbd_ros/robots/quadruped.urdf).

Links are solid cylinders and boxes of aluminium-like density, so masses and inertias are
physically consistent; run again after changing a dimension."""

from __future__ import annotations

from pathlib import Path


def cylinder(m: float, r: float, h: float) -> tuple[float, float, float]:
    """Principal inertia of a solid cylinder along z about its centre."""
    ixx = m * (3 * r * r + h * h) / 12
    return ixx, ixx, m * r * r / 2


def box(m: float, x: float, y: float, z: float) -> tuple[float, float, float]:
    return m * (y * y + z * z) / 12, m * (x * x + z * z) / 12, m * (x * x + y * y) / 12


def inertial(m: float, com: tuple[float, float, float], I: tuple[float, float, float]) -> str:
    return (
        f'    <inertial>\n      <origin xyz="{com[0]:g} {com[1]:g} {com[2]:g}" rpy="0 0 0"/>\n'
        f'      <mass value="{m:g}"/>\n'
        f'      <inertia ixx="{I[0]:.6g}" ixy="0" ixz="0" iyy="{I[1]:.6g}" iyz="0" izz="{I[2]:.6g}"/>\n'
        "    </inertial>\n"
    )


def visual_cylinder(r: float, h: float) -> str:
    return (
        f'    <visual>\n      <origin xyz="0 0 {h / 2:g}"/>\n'
        f'      <geometry><cylinder radius="{r:g}" length="{h:g}"/></geometry>\n    </visual>\n'
    )


def arm7() -> str:
    # (mass kg, radius m, length m, axis, effort N m, velocity rad/s, damping, friction)
    links = [
        (4.0, 0.065, 0.34, "0 0 1", 87, 2.2, 0.5, 0.2),
        (4.0, 0.065, 0.30, "0 1 0", 87, 2.2, 0.5, 0.2),
        (3.0, 0.055, 0.32, "0 0 1", 87, 2.2, 0.4, 0.15),
        (3.0, 0.055, 0.28, "0 1 0", 87, 2.2, 0.4, 0.15),
        (2.0, 0.045, 0.26, "0 0 1", 12, 2.6, 0.2, 0.1),
        (1.5, 0.045, 0.12, "0 1 0", 12, 2.6, 0.2, 0.1),
        (0.6, 0.040, 0.08, "0 0 1", 12, 2.6, 0.1, 0.05),
    ]
    out = ['<?xml version="1.0"?>', "<!-- rbd_ros bundled 7-joint arm: solid aluminium-like links -->",
           '<robot name="arm7">', '  <link name="world"/>',
           '  <joint name="world_to_base" type="fixed">\n    <parent link="world"/>\n'
           '    <child link="base_link"/>\n    <origin xyz="0 0 0" rpy="0 0 0"/>\n  </joint>']
    out.append('  <link name="base_link">\n' + inertial(5.0, (0, 0, 0.05), cylinder(5.0, 0.1, 0.1))
               + visual_cylinder(0.1, 0.1) + "  </link>")
    prev, z = "base_link", 0.1
    for k, (m, r, h, axis, eff, vel, damp, fric) in enumerate(links, start=1):
        name = f"link{k}"
        out.append(
            f'  <joint name="joint{k}" type="revolute">\n    <parent link="{prev}"/>\n'
            f'    <child link="{name}"/>\n    <origin xyz="0 0 {z:g}" rpy="0 0 0"/>\n'
            f'    <axis xyz="{axis}"/>\n'
            f'    <limit lower="-2.9" upper="2.9" effort="{eff}" velocity="{vel}"/>\n'
            f'    <dynamics damping="{damp}" friction="{fric}"/>\n  </joint>'
        )
        out.append(f'  <link name="{name}">\n' + inertial(m, (0, 0, h / 2), cylinder(m, r, h))
                   + visual_cylinder(r, h) + "  </link>")
        prev, z = name, h
    # a tool on a fixed joint: its mass merges into link7, its frame stays nameable
    out.append(
        '  <joint name="flange" type="fixed">\n    <parent link="link7"/>\n'
        '    <child link="tool"/>\n    <origin xyz="0 0 0.08" rpy="0 0 0"/>\n  </joint>'
    )
    out.append('  <link name="tool">\n' + inertial(0.4, (0, 0, 0.04), box(0.4, 0.08, 0.08, 0.08))
               + "  </link>")
    out.append("</robot>\n")
    return "\n".join(out)


def quadruped() -> str:
    out = ['<?xml version="1.0"?>',
           "<!-- rbd_ros bundled quadruped: 12 joints, box body, cylinder legs, point-like feet -->",
           '<robot name="quadruped">']
    out.append('  <link name="base">\n' + inertial(12.0, (0, 0, 0), box(12.0, 0.6, 0.3, 0.15))
               + "  </link>")
    upper, lower = 0.25, 0.25
    for leg, (sx, sy) in {"LF": (1, 1), "RF": (1, -1), "LH": (-1, 1), "RH": (-1, -1)}.items():
        hip, thigh, shank, foot = f"{leg}_hip", f"{leg}_thigh", f"{leg}_shank", f"{leg}_foot"
        out.append(
            f'  <joint name="{leg}_HAA" type="revolute">\n    <parent link="base"/>\n'
            f'    <child link="{hip}"/>\n    <origin xyz="{0.25 * sx:g} {0.1 * sy:g} 0" rpy="0 0 0"/>\n'
            '    <axis xyz="1 0 0"/>\n    <limit lower="-0.8" upper="0.8" effort="40" velocity="10"/>\n  </joint>'
        )
        out.append(f'  <link name="{hip}">\n' + inertial(0.8, (0, 0.05 * sy, 0), cylinder(0.8, 0.05, 0.1))
                   + "  </link>")
        out.append(
            f'  <joint name="{leg}_HFE" type="revolute">\n    <parent link="{hip}"/>\n'
            f'    <child link="{thigh}"/>\n    <origin xyz="0 {0.1 * sy:g} 0" rpy="0 0 0"/>\n'
            '    <axis xyz="0 1 0"/>\n    <limit lower="-3.1" upper="3.1" effort="40" velocity="10"/>\n  </joint>'
        )
        out.append(f'  <link name="{thigh}">\n'
                   + inertial(1.0, (0, 0, -upper / 2), cylinder(1.0, 0.03, upper)) + "  </link>")
        out.append(
            f'  <joint name="{leg}_KFE" type="revolute">\n    <parent link="{thigh}"/>\n'
            f'    <child link="{shank}"/>\n    <origin xyz="0 0 {-upper:g}" rpy="0 0 0"/>\n'
            '    <axis xyz="0 1 0"/>\n    <limit lower="-3.1" upper="3.1" effort="40" velocity="10"/>\n  </joint>'
        )
        out.append(f'  <link name="{shank}">\n'
                   + inertial(0.4, (0, 0, -lower / 2), cylinder(0.4, 0.02, lower)) + "  </link>")
        out.append(
            f'  <joint name="{leg}_foot_fixed" type="fixed">\n    <parent link="{shank}"/>\n'
            f'    <child link="{foot}"/>\n    <origin xyz="0 0 {-lower:g}" rpy="0 0 0"/>\n  </joint>'
        )
        out.append(f'  <link name="{foot}">\n' + inertial(0.05, (0, 0, 0), box(0.05, 0.04, 0.04, 0.04))
                   + "  </link>")
    out.append("</robot>\n")
    return "\n".join(out)


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[1] / "rbd_ros" / "robots"
    (here / "arm7.urdf").write_text(arm7())
    (here / "quadruped.urdf").write_text(quadruped())
    print("wrote", here / "arm7.urdf", here / "quadruped.urdf")
