"""A trajectory against the robot's limits: the efforts along the motion a controller follows
are Pinocchio's inverse dynamics plus the URDF's joint friction (read here from the URDF's own
text), sampled every millisecond and at every point; the first sample over a limit is the
first where Pinocchio's effort, or the motion's speed, passes the URDF's limit."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from pinref import PinRef

from rbd_ros.dynamics import ModelError, load_urdf, load_urdf_string
from rbd_ros.dynamics.control import Spline
from rbd_ros.dynamics.control.limits import check_limits
from rbd_ros.robots import ARM, QUADRUPED

S = 10**9
TEXT = ARM.read_text()


def _urdf(name: str) -> dict[str, float]:
    """Each joint's URDF attribute ``name`` of <limit> or <dynamics>, by joint."""
    out: dict[str, float] = {}
    for j in ET.fromstring(TEXT).iter("joint"):
        for tag in ("limit", "dynamics"):
            node = j.find(tag)
            if node is not None and name in node.attrib:
                out[j.get("name", "")] = float(node.attrib[name])
    return out


def _spline(rng: np.random.Generator, joints: int, seconds: float = 2.0) -> Spline:
    times = np.round(np.array([0.25, 0.5, 0.75, 1.0]) * seconds * S).astype(np.int64)
    q = rng.uniform(-1.0, 1.0, (4, joints))
    v = rng.uniform(-0.5, 0.5, (4, joints))
    v[-1] = 0.0
    a = np.zeros((4, joints))
    zero = np.zeros(joints)
    return Spline(times, q, v, a, (rng.uniform(-1, 1, joints), zero, zero))


def test_the_efforts_are_pinocchios_with_the_urdfs_friction() -> None:
    """Four of the bundled arm's seven joints follow a quintic spline, the others held at rest:
    at every sample (each millisecond and each point), the efforts are Pinocchio's RNEA plus
    damping times speed plus Coulomb friction through tanh(speed / 0.02), from the URDF."""
    model = load_urdf_string(TEXT)
    ref = PinRef(model, TEXT, False)
    rng = np.random.default_rng(5)
    joints = np.array([0, 1, 3, 5])
    rest = rng.uniform(-1, 1, model.nv)
    spline = _spline(rng, joints.size)
    check = check_limits(model, spline, joints, rest)
    # every ms from 0 to 2 s (the points fall on them) and just before the end
    assert check.times_ns.size == 2000 + 1 + 1
    q = np.tile(rest, (check.times_ns.size, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    q[:, joints], v[:, joints], a[:, joints] = spline.sample_many(check.times_ns)
    damping, coulomb = _urdf("damping"), _urdf("friction")
    names = model.state_joint_names
    d = np.array([damping.get(n, 0.0) for n in names])
    c = np.array([coulomb.get(n, 0.0) for n in names])
    assert d.any() and c.any()
    expected = np.array([ref.rnea(q[k], v[k], a[k]) for k in range(len(q))])
    expected += d * v + c * np.tanh(v / 0.02)
    np.testing.assert_allclose(check.efforts, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(check.velocities[:, [2, 4, 6]], 0.0)  # held


def test_the_first_sample_over_a_limit_is_named() -> None:
    """The same motion made faster until some effort passes its URDF limit: the check names
    the first sample where Pinocchio's effort (with the friction) does, and none before it is
    over; at 90 % of the limits it is earlier or the same; within the limits, nothing."""
    model = load_urdf_string(TEXT)
    joints = np.arange(model.nv)
    rest = np.zeros(model.nv)
    limit = np.array([_urdf("effort")[n] for n in model.state_joint_names])
    slow = check_limits(model, _spline(np.random.default_rng(6), model.nv, 8.0), joints, rest)
    fast = None
    for seconds in (1.0, 0.5, 0.3, 0.2, 0.1):
        fast = check_limits(model, _spline(np.random.default_rng(6), model.nv, seconds), joints,
                            rest)
        if fast.first_over():
            break
    assert fast is not None and fast.first_over(), "no motion over the limits"
    over = np.abs(fast.efforts) > limit
    k = int(np.flatnonzero(over.any(axis=1))[0])
    j = int(np.flatnonzero(over[k])[0])
    said = fast.first_over()
    assert said.startswith(f"{model.state_joint_names[j]} at {fast.times_ns[k] / S:.3f} s: "
                           "effort"), said
    assert f"its URDF limit {limit[j]:.5g} N m" in said
    used, _ = fast.used()
    assert used.max() > 1.0
    at90 = fast.first_over(0.9)
    assert "over 90% of its URDF limit" in at90
    assert float(at90.split(" at ")[1].split(" s:")[0]) <= fast.times_ns[k] / S
    assert (np.abs(slow.efforts) < limit).all() and slow.first_over() == ""


def test_a_speed_over_the_velocity_limit_is_named() -> None:
    """A linear segment (positions only) that moves joint4 2.5 rad in one second (its limit:
    2.2 rad/s) is over from its first sample; the table shows each joint's peak and use."""
    model = load_urdf_string(TEXT)
    n = model.nv
    target = np.zeros(n)
    target[3] = 2.5
    spline = Spline(np.array([S]), target[None, :], None, None, (np.zeros(n),) * 3)
    check = check_limits(model, spline, np.arange(n), np.zeros(n))
    assert check.first_over().startswith("joint4 at 0.000 s: velocity 2.5 rad/s over its URDF "
                                         "limit 2.2 rad/s (113.6%)"), check.first_over()
    table = check.table()
    assert len(table) == n + 1 and table[4].split()[0] == "joint4"
    assert "114%" in table[4]


def test_a_floating_base_is_refused() -> None:
    model = load_urdf(QUADRUPED, floating_base=True)
    spline = Spline(np.array([S]), np.zeros((1, 1)), None, None, (np.zeros(1),) * 3)
    with pytest.raises(ModelError, match="fixed-base"):
        check_limits(model, spline, np.array([6]), np.zeros(model.nv))
