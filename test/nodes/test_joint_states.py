"""Joint states merged by name, without ROS: partial messages, estimates, rejections."""

from __future__ import annotations

import numpy as np
import pytest
from urdfs import inertia, joint, limit, link, robot

from rbd_ros.dynamics import load_urdf
from rbd_ros.dynamics.control import Spline
from rbd_ros.robots import ARM, QUADRUPED
from rbd_ros.wire.errors import InputError
from rbd_ros.wire.joint_states import JointStateMerger, base_state

NAMES = [f"joint{k}" for k in range(1, 8)]
SEC = 1_000_000_000
#: a stamp of these years: as float seconds since 1970 it is only good to ~238 ns
NOW = 1_795_000_000 * SEC + 123_456_789


def test_partial_messages_merge_and_missing_velocities_are_differentiated() -> None:
    m = JointStateMerger(load_urdf(ARM))
    m.update(SEC, NAMES[:4], [0.1, 0.2, 0.3, 0.4], [], [])
    assert not m.ready and m.missing() == NAMES[4:]
    m.update(SEC, NAMES[4:][::-1], [0.7, 0.6, 0.5], [], [1.0, 2.0, 3.0])
    assert m.ready
    np.testing.assert_allclose(m.q, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    np.testing.assert_allclose(m.v, 0.0)  # nothing to difference yet
    m.update(SEC + SEC // 100, NAMES, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8], [], [])
    np.testing.assert_allclose(m.v, [0, 0, 0, 0, 0, 0, 10.0], atol=1e-9)
    np.testing.assert_allclose(m.a, [0, 0, 0, 0, 0, 0, 1000.0], atol=1e-6)
    np.testing.assert_allclose(m.effort[4:], [3.0, 2.0, 1.0])


def test_bad_messages_change_nothing() -> None:
    m = JointStateMerger(load_urdf(ARM))
    m.update(SEC, NAMES, np.arange(7.0).tolist(), [], [])
    before = m.q.copy()
    cases: list[tuple[list[str], list[float], list[float], str]] = [
        (NAMES, [np.nan] * 7, [], "position contains NaN or inf"),
        (NAMES, list(range(6)), [], "position has 6 entries for 7"),
        (NAMES, list(range(7)), [np.inf] * 7, "velocity contains NaN or inf"),
        # finite, but no sensor reads it (its square would overflow the dynamics)
        (NAMES, list(range(7)), [0.0] * 6 + [-1e300], "velocity contains -1e[+]300: no "
                                                       "reading or request means a value beyond 1e[+]09"),
        (["joint1", "joint2", "joint1"], [0.0, 1.0, 2.0], [],
         r"repeat within the message: \['joint1'\]"),
    ]
    for names, pos, vel, reason in cases:
        with pytest.raises(InputError, match=reason):
            m.update(2 * SEC, names, pos, vel, [])
    np.testing.assert_array_equal(m.q, before)
    up = m.update(3 * SEC, ["joint1", "gripper"], [5.0, 1.0], [], [])
    assert up.unknown == ["gripper"] and m.q[0] == 5.0


def test_floating_base_joints_follow_the_base_coordinates() -> None:
    model = load_urdf(QUADRUPED, floating_base=True)
    m = JointStateMerger(model)
    names = [j.name for j in model.joints if j.kind == "revolute"]
    m.update(0, names, np.arange(12.0).tolist(), [], [])
    assert m.ready
    np.testing.assert_allclose(m.q[7:], np.arange(12.0))
    x = base_state([1, 2, 3], [0, 0, 0, 1.0005], [0.1] * 6)  # float32 noise: normalised
    np.testing.assert_allclose(x[:7], [1, 2, 3, 0, 0, 0, 1], atol=1e-15)
    for quat in ([0, 0, 0, 0], [0, 0, 0, 1.5], [0, 0.1, 0, 0.99]):  # not a rotation: refused
        with pytest.raises(InputError, match="unit quaternion"):
            base_state([0, 0, 0], quat, [0] * 6)
    with pytest.raises(InputError, match="the base pose or twist contains NaN or inf"):
        base_state([0, float("nan"), 0], [0, 0, 0, 1], [0] * 6)


def test_mimic_joints_in_a_message_follow_their_source() -> None:
    """joint_state_broadcaster publishes a gripper's mimic joints too: they are neither used
    nor reported as unknown; the model derives them from their source."""
    from rbd_ros.dynamics import load_urdf_string

    def finger(name: str, parent: str, child: str, extra: str = "") -> str:
        return joint(name, "revolute", parent, child, extra=limit(effort=1) + extra)

    model = load_urdf_string(robot(*(link(n, 1, inertia=inertia(0.1, 0.1, 0.1))
                                     for n in ("base", "a", "b")),
                                   finger("j1", "base", "a"),
                                   finger("j2", "a", "b", '<mimic joint="j1" multiplier="2"/>'),
                                   name="gripper"))
    m = JointStateMerger(model)
    up = m.update(SEC, ["j2", "j1"], [99.0, 0.3], [], [])
    assert up.unknown == [] and up.mimic == ["j2"] and m.ready
    np.testing.assert_allclose(m.q, [0.3])


@pytest.mark.parametrize("motion", ["linear", "quadratic"])
def test_estimates_at_1khz_are_exact_at_todays_stamps(motion: str) -> None:
    """Positions only, 1 kHz, stamps of today: the backward differences are those of exact
    arithmetic (float seconds since 1970 were off by 1.7e-4 in velocity, % in acceleration)."""
    m = JointStateMerger(load_urdf(ARM))
    c, acc = np.linspace(0.5, 2.0, 7), np.linspace(-3.0, 3.0, 7)
    dt = 1e-3
    for k in range(200):
        t = k * dt
        q = 0.3 + c * t + (0.5 * acc * t * t if motion == "quadratic" else 0.0)
        m.update(NOW + k * 1_000_000, NAMES, q.tolist(), [], [])
        if k >= 2:
            # a backward difference of x(t) = c t + a t^2 / 2 is the velocity half a step back
            v_want = c + (acc * (t - dt / 2) if motion == "quadratic" else 0.0)
            a_want = acc if motion == "quadratic" else np.zeros(7)
            np.testing.assert_allclose(m.v, v_want, rtol=1e-9, atol=0)
            np.testing.assert_allclose(m.a, a_want, rtol=1e-9, atol=1e-9 * np.abs(acc).max())


def test_trajectory_sampled_at_todays_stamps_is_exact() -> None:
    """Sampling a trajectory at a stamp of today, as the nodes do (integer ns from its start),
    every 1 us of a 1 ms segment: the interpolation is exact (through float seconds it was off
    by ~5e-8 of the step)."""
    p = np.array([[0.0], [1.0]])
    t = Spline([0, 1_000_000], p, None, None, (np.zeros(1), np.zeros(1), np.zeros(1)))
    for k in range(1, 1000):
        assert t.sample(NOW + 1000 * k - NOW)[0][0] == pytest.approx(k / 1000, rel=1e-12, abs=0)
