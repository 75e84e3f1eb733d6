"""Every malformed URDF gives one URDFError whose text says what to fix."""

from __future__ import annotations

import logging
import re

import pytest
from urdfs import joint, link, robot

from rbd_ros.dynamics import URDFError, load_urdf, load_urdf_string

BOX = 'ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"'
GOOD_LINKS = link("base") + link("a", 1.0, inertia=BOX) + link("b", 1.0, inertia=BOX)


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("<robot name='x'><link name='a'>", "not well-formed XML"),
    ("<model name='x'/>", r"top element is <model>, expected <robot>"),
    ("<robot name='x'/>", "declares no <link>"),
    ('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="a"/>'
     '</robot>', "this is xacro, not URDF"),
    ('<robot name="x"><link name="${prefix}base"/></robot>', "this is xacro, not URDF"),
    (robot(GOOD_LINKS, joint("j", "revolute", "base", "a")), r"2 root links \(base, b\)"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a"), joint("j2", "revolute", "b", "a"),
           joint("j3", "revolute", "base", "b")), "link 'a' is the child of two joints"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a"), joint("j2", "revolute", "a", "b"),
           joint("j3", "revolute", "b", "a")), "child of two joints"),
    (robot(GOOD_LINKS, link("c", 1.0, inertia=BOX), joint("j1", "revolute", "base", "a"),
           joint("j2", "revolute", "b", "c"), joint("j3", "revolute", "c", "b")),
     "links b, c form a loop not connected to the root link 'base'"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a"), joint("j2", "revolute", "a", "ghost")),
     "joint 'j2' names child link 'ghost', which is not declared"),
    (robot(link("base"), link("a", -2.0, inertia=BOX), joint("j", "revolute", "base", "a")),
     "link 'a' has mass -2.0"),
    (robot(link("base"), link("a", 1.0, inertia='ixx="1" ixy="0" ixz="0" iyy="nan" iyz="0" izz="1"'),
           joint("j", "revolute", "base", "a")), "non-finite"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a", extra='<mimic joint="j2"/>'),
           joint("j2", "revolute", "a", "b", extra='<mimic joint="j1"/>')),
     "mimic joints form a cycle: j1 -> j2 -> j1"),
    (robot(GOOD_LINKS, joint("j1", "planar", "base", "a"),
           joint("j2", "revolute", "a", "b", extra='<mimic joint="j1"/>')),
     "both must be revolute, continuous or prismatic"),
    (robot(GOOD_LINKS, joint("j1", "ball", "base", "a"), joint("j2", "revolute", "a", "b")),
     "joint 'j1' has unsupported type 'ball'"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a", axis="0 0 0"),
           joint("j2", "revolute", "a", "b")), "zero <axis>"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a"), joint("j1", "revolute", "a", "b")),
     "joint 'j1' is declared twice"),
    (robot(GOOD_LINKS, joint("j1", "revolute", "base", "a", extra='<dynamics damping="-1"/>'),
           joint("j2", "revolute", "a", "b")), "both must be finite and >= 0"),
])
def test_bad_urdf_is_rejected_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(URDFError, match=message):
        load_urdf_string(text)


def test_missing_file() -> None:
    with pytest.raises(URDFError, match=re.escape("cannot read URDF file '/no/such.urdf'")):
        load_urdf("/no/such.urdf")


def test_link_without_inertial_is_massless(caplog: pytest.LogCaptureFixture) -> None:
    """Frames without <inertial> are everywhere in real URDFs: said at INFO, not warned."""
    text = robot(link("base"), link("a"), link("b", 1.0, "0 0 1", BOX),
                 joint("j1", "revolute", "base", "a"), joint("j2", "revolute", "a", "b"))
    with caplog.at_level(logging.INFO, logger="rbd_ros.dynamics"):
        m = load_urdf_string(text)
    notes = [r for r in caplog.records if "massless" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO and "a" in notes[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert m.total_mass == 1.0


INDEFINITE = 'ixx="1e-7" ixy="5e-8" ixz="0" iyy="1e-8" iyz="0" izz="1e-7"'  # moments -1.5e-8, ...
FLAT = 'ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"'  # 3 > 1 + 1


def test_cad_noise_loads_as_given_with_one_warning_and_strict_refuses(
        caplog: pytest.LogCaptureFixture) -> None:
    """An indefinite 1 mg inertia (as on a vendor's antenna link), a flat inertia and a mimic
    joint whose source is missing load as Pinocchio and KDL load them, with one warning that
    names each; strict mode refuses them, naming the same."""
    text = robot(link("base"), link("a", 1.0, inertia=BOX), link("antenna", 1e-6, inertia=INDEFINITE),
                 link("b", 1.0, inertia=FLAT),
                 joint("j1", "revolute", "base", "a"), joint("fix", "fixed", "a", "antenna"),
                 joint("j2", "revolute", "a", "b", extra='<mimic joint="nope"/>'))
    with caplog.at_level(logging.WARNING, logger="rbd_ros.dynamics"):
        m = load_urdf_string(text)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    for what in ("link 'antenna' has an inertia that is not positive semi-definite",
                 "link 'b' has principal moments 1, 1, 3 kg m^2, which break the triangle",
                 "joint 'j2' mimics joint 'nope', which is not declared: it is loaded as an "
                 "independent joint"):
        assert what in warnings[0]
    assert m.joint_names == ["j1", "j2"] and not m.mimic_joint_names
    with pytest.raises(URDFError, match=r"refused in strict mode: joint 'j2'.*link 'antenna'.*link 'b'"):
        load_urdf_string(text, strict=True)


def test_parts_the_dynamics_do_not_read_cannot_stop_a_robot_from_loading() -> None:
    """A <texture> without a file (iCub, Romeo) and a transmission without a type (PR2) made
    urdf-parser-py refuse the whole robot; visuals and transmissions are not dynamics."""
    text = robot(link("base"), link("a", 1.0, inertia=BOX),
                 joint("j1", "revolute", "base", "a")).replace(
        "</robot>", '<material name="m"><texture/></material>'
                    '<transmission name="t"><joint name="j1"/></transmission></robot>').replace(
        '<link name="a">', '<link name="a"><visual><geometry><box size="1 1 1"/></geometry>'
                           '<material name="n"><texture/></material></visual>')
    assert load_urdf_string(text).joint_names == ["j1"]


def test_a_robot_without_any_mass_is_warned(caplog: pytest.LogCaptureFixture) -> None:
    """Kinematics-only descriptions (MoveIt's panda, several industrial arms) load, but every
    torque is zero: said in the warning, refused in strict mode."""
    text = robot(link("base"), link("a"), joint("j1", "revolute", "base", "a"))
    with caplog.at_level(logging.WARNING, logger="rbd_ros.dynamics"):
        load_urdf_string(text)
    assert "no link has an <inertial>: every torque is zero" in caplog.text
    with pytest.raises(URDFError, match="no link has an <inertial>"):
        load_urdf_string(text, strict=True)
