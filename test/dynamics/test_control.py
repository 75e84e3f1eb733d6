"""Following a trajectory: the splines against their closed forms (each segment meets its
points' positions, velocities and accelerations; its velocity is its position's derivative),
the tolerances as control_msgs defines them, and computed torque closing the loop on
Pinocchio's forward dynamics of real arms: the error decays as the second-order system the
gains promise, and a spline is followed to rounding."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef, robot_path

from rbd_ros.dynamics import Model, ModelError, load_urdf
from rbd_ros.dynamics.control import (
    ComputedTorque,
    Goal,
    Outcome,
    Reference,
    Spline,
    Tolerances,
    gains,
)
from rbd_ros.dynamics.errors import TrajectoryError
from rbd_ros.robots import QUADRUPED

S = 10**9  # ns in a second


def _points(rng: np.random.Generator, n: int, joints: int) -> tuple[np.ndarray, ...]:
    times = np.cumsum(rng.integers(S // 5, S, n))
    return times, rng.normal(size=(n, joints)), rng.normal(size=(n, joints)), \
        rng.normal(size=(n, joints))


@pytest.mark.parametrize("order", ["linear", "cubic", "quintic"])
def test_each_segment_meets_its_points(order: str) -> None:
    """At every point the spline has the point's position, and the velocity and acceleration
    its order promises; between them its velocity and acceleration are its position's
    derivatives (central differences); from the start state to the first point likewise."""
    rng = np.random.default_rng(1)
    times, q, v, a = _points(rng, 6, 3)
    start = (rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    spline = Spline(times, q, v if order != "linear" else None,
                    a if order == "quintic" else None, start)
    for k, t in enumerate(times[:-1]):
        pk, vk, ak = spline.sample(int(t))
        np.testing.assert_allclose(pk, q[k], atol=1e-9)
        if order == "linear":  # the slope of the segment that starts here
            np.testing.assert_allclose(vk, (q[k + 1] - q[k]) / ((times[k + 1] - t) / S),
                                       rtol=1e-9)
            np.testing.assert_allclose(ak, 0.0)
        else:
            np.testing.assert_allclose(vk, v[k], atol=1e-9)
        if order == "quintic":
            np.testing.assert_allclose(ak, a[k], atol=1e-7)
    # the end of each segment, just before the next point
    for k, t in enumerate(times[1:], start=1):
        pk, vk, ak = spline.sample(int(t) - 1)
        np.testing.assert_allclose(pk, q[k], atol=1e-6)
        if order != "linear":
            np.testing.assert_allclose(vk, v[k], atol=1e-5)
        if order == "quintic":
            np.testing.assert_allclose(ak, a[k], atol=1e-3)
    # the first segment leaves the start state with its velocity (and acceleration)
    p0, v0, _ = spline.sample(0)
    np.testing.assert_allclose(p0, start[0], atol=1e-12)
    if order != "linear":
        np.testing.assert_allclose(v0, start[1], atol=1e-12)
    # derivatives inside segments
    t = np.sort(rng.integers(1000, times[-1] - 1000, 200))
    h = 1000  # 1 us
    qm, vm, _ = spline.sample_many(t - h)
    qp, vp, _ = spline.sample_many(t + h)
    _, vc, ac = spline.sample_many(t)
    knot = np.isin(np.searchsorted(times, t - h), np.searchsorted(times, t + h), invert=True)
    inside = ~knot
    np.testing.assert_allclose(((qp - qm) / (2 * h * 1e-9))[inside], vc[inside], atol=1e-4)
    np.testing.assert_allclose(((vp - vm) / (2 * h * 1e-9))[inside], ac[inside], atol=1e-2)


def test_before_and_after_it_holds() -> None:
    spline = Spline([S, 2 * S], np.array([[1.0], [2.0]]), None, None,
                    (np.array([0.5]), np.array([3.0]), np.array([1.0])))
    assert spline.sample(-1) == (np.array([0.5]), np.array([0.0]), np.array([0.0]))
    q, v, a = spline.sample(2 * S + 5)
    assert (q, v, a) == (np.array([2.0]), np.array([0.0]), np.array([0.0]))
    # a point at time 0 starts there, whatever the start state
    at_zero = Spline([0, S], np.array([[1.0], [2.0]]), None, None,
                     (np.array([9.0]), np.zeros(1), np.zeros(1)))
    assert at_zero.sample(0)[0] == pytest.approx([1.0])


@pytest.mark.parametrize(("times", "why"), [([], "at least one point"),
                                            ([S, S], "strictly increasing"),
                                            ([-1, S], ">= 0")])
def test_refused(times: list[int], why: str) -> None:
    with pytest.raises(TrajectoryError, match=why):
        Spline(times, np.zeros((len(times), 2)), None, None, (np.zeros(2),) * 3)


def test_mixed_points_choose_each_segments_order() -> None:
    """A point without velocities (a NaN row) makes both segments it ends linear."""
    q = np.array([[0.0], [1.0], [2.0], [3.0]])
    v = np.array([[0.0], [np.nan], [1.0], [0.0]])
    spline = Spline([S, 2 * S, 3 * S, 4 * S], q, v, None, (np.zeros(1),) * 3)
    for mid in (1.5, 2.5):
        assert spline.sample(int(mid * S))[0] == pytest.approx([mid - 1])  # linear: halfway
    cubic = spline.sample(int(3.5 * S))  # Hermite from (2, 1) to (3, 0)
    assert cubic[0] != pytest.approx([2.5])


def test_tolerances_read_as_control_msgs_reads_them() -> None:
    default = Tolerances(np.array([0.1, 0.1, np.inf]), np.full(3, np.inf), np.full(3, np.inf))
    t = default.given([(0, 0.0, 0.5, 0.0), (1, -1.0, 0.0, 0.0), (2, 0.2, 0.0, 0.0)])
    np.testing.assert_array_equal(t.position, [0.1, np.inf, 0.2])  # 0 kept, -1 none, 0.2
    np.testing.assert_array_equal(t.velocity, [0.5, np.inf, np.inf])
    names = ["a", "b", "c"]
    assert t.exceeded(names, [np.array([0.05, 9.0, -0.1]), np.zeros(3), np.zeros(3)]) == ""
    why = t.exceeded(names, [np.array([0.05, 9.0, -0.3]), np.zeros(3), np.zeros(3)])
    assert why == "c: position error -0.3 beyond the tolerance 0.2"
    assert "a: velocity error nan" in t.exceeded(
        names, [np.zeros(3), np.array([np.nan, 0, 0]), np.zeros(3)])


def test_a_goal_is_judged_on_the_path_then_at_its_end() -> None:
    spline = Spline([S], np.array([[1.0]]), None, None, (np.zeros(1),) * 3)
    tight = Tolerances(np.array([0.1]), np.array([0.01]), np.array([np.inf]))
    goal = Goal(spline, np.array([0]), ["j"], 5 * S, tight, tight, S // 2)
    small, big = np.array([0.05]), np.array([0.5])
    zero = np.zeros(1)
    assert goal.judge(4 * S, [big, zero, zero])[0] == Outcome.RUNNING  # not started
    assert goal.judge(5 * S + 1, [small, zero, zero])[0] == Outcome.RUNNING
    outcome, why = goal.judge(5 * S + S // 2, [big, zero, zero])
    assert outcome == Outcome.PATH_TOLERANCE_VIOLATED
    assert why == "j: position error 0.5 beyond the tolerance 0.1 at 0.500 s of the trajectory"
    assert goal.judge(6 * S, [big, zero, zero])[0] == Outcome.RUNNING  # leeway
    assert goal.judge(6 * S + S // 4, [small, zero, zero])[0] == Outcome.SUCCEEDED
    outcome, why = goal.judge(6 * S + S, [small, np.array([0.02]), zero])
    assert outcome == Outcome.GOAL_TOLERANCE_VIOLATED
    assert why.startswith("j: velocity error 0.02 beyond the tolerance 0.01 1.000 s after")
    forever = Goal(spline, np.array([0]), ["j"], 0, tight, tight, 0)  # no goal time: waits
    assert forever.judge(100 * S, [big, zero, zero])[0] == Outcome.RUNNING


def test_a_reference_holds_the_joints_a_motion_leaves_out() -> None:
    ref = Reference(np.array([1.0, 2.0, 3.0]))
    spline = Spline([S], np.array([[0.0, 10.0]]), None, None,
                    (np.array([1.0, 3.0]), np.zeros(2), np.zeros(2)))
    ref.follow(spline, np.array([0, 2]), 7 * S, hold=np.array([1.0, 2.5, 3.0]))
    q, v, _ = ref.sample(7 * S + S // 2)
    np.testing.assert_allclose(q, [0.5, 2.5, 6.5])
    np.testing.assert_allclose(v, [-1.0, 0.0, 7.0])
    ref.hold_at(np.array([4.0, 5.0, 6.0]))
    assert ref.sample(100 * S)[0].tolist() == [4.0, 5.0, 6.0]


@pytest.fixture(scope="module", params=["ur5", "panda"])
def arm(request: pytest.FixtureRequest) -> tuple[Model, PinRef]:
    model = load_urdf(robot_path(request.param))
    return model, PinRef(model, robot_path(request.param), False)


def _closed_loop(model: Model, ref: PinRef, law: ComputedTorque, q0: np.ndarray,
                 v0: np.ndarray, desired: Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]], seconds: float, dt: float = 1e-3
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RK4 of Pinocchio's forward dynamics under the law (evaluated at every stage: the
    continuous-time loop), (times, q, v). Pinocchio's model has mimic joints as joints of
    their own: the reduced dynamics G^T M G qdd = tau - G^T h (testkit/pinref.py)."""
    G = ref.G

    def f(t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tau = law.efforts(q, v, desired(t), 0.0)
        pq = ref.q(q)
        M = G.T @ pin.crba(ref.pm, ref.pd, pq) @ G
        h = G.T @ pin.nonLinearEffects(ref.pm, ref.pd, pq, G @ v)
        return v, np.linalg.solve(M, tau - h)

    ts = np.arange(0.0, seconds + dt / 2, dt)
    Q, V = [q0], [v0]
    q, v = q0.copy(), v0.copy()
    for t in ts[:-1]:
        k1 = f(t, q, v)
        k2 = f(t + dt / 2, q + dt / 2 * k1[0], v + dt / 2 * k1[1])
        k3 = f(t + dt / 2, q + dt / 2 * k2[0], v + dt / 2 * k2[1])
        k4 = f(t + dt, q + dt * k3[0], v + dt * k3[1])
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        Q.append(q)
        V.append(v)
    return ts, np.array(Q), np.array(V)


def test_the_error_decays_as_the_gains_promise(arm: tuple[Model, PinRef]) -> None:
    """Held at a pose from 0.1 rad away, at rest, omega = 20 rad/s, zeta = 1: every joint's
    error is (e0 (1 + omega t)) exp(-omega t), the critically damped second-order system's, on
    Pinocchio's dynamics of the arm."""
    model, ref = arm
    idx = np.arange(model.nv)
    kp, kd = gains(20.0, 1.0)
    law = ComputedTorque(model, idx, kp, kd, 0.0, 0.0, friction=False)
    rng = np.random.default_rng(3)
    qd = rng.uniform(-1, 1, model.nv)
    e0 = rng.choice([-0.1, 0.1], model.nv)
    zero = np.zeros(model.nv)
    ts, Q, _ = _closed_loop(model, ref, law, qd - e0, zero.copy(),
                            lambda t: (qd, zero, zero), 0.5)
    expected = e0[None, :] * ((1 + 20.0 * ts) * np.exp(-20.0 * ts))[:, None]
    np.testing.assert_allclose(qd - Q, expected, atol=1e-8)


def test_a_spline_is_followed_to_rounding(arm: tuple[Model, PinRef]) -> None:
    """Started on a quintic spline through two random points a second or two apart, the arm
    follows it with no error but the integrator's; the efforts are Pinocchio's
    M(q) qdd_d + h(q, qd)."""
    model, ref = arm
    rng = np.random.default_rng(4)
    n = model.nv
    times, q, v, a = _points(rng, 2, n)
    times = np.array([S, S + S * 3 // 2])
    q, v, a = 0.5 * q, 0.3 * v, 0.3 * a
    start = (rng.uniform(-1, 1, n), np.zeros(n), np.zeros(n))
    spline = Spline(times, q, v, a, start)
    kp, kd = gains(np.full(n, 30.0), 0.8)
    law = ComputedTorque(model, np.arange(n), kp, kd, 0.0, 0.0, friction=False)
    ts, Q, _ = _closed_loop(model, ref, law, start[0], start[1],
                            lambda t: spline.sample(round(t * S)), times[-1] / S)
    desired = spline.sample_many(np.round(ts * S).astype(np.int64))[0]
    assert np.abs(Q - desired).max() < 1e-6
    qs, vs, as_ = (x[0] for x in spline.sample_many(np.array([times[0] // 2])))
    tau = law.efforts(qs, vs, (qs, vs, as_), 0.0)
    pq, G = ref.q(qs), ref.G
    expected = G.T @ (pin.crba(ref.pm, ref.pd, pq) @ G @ as_
                      + pin.nonLinearEffects(ref.pm, ref.pd, pq, G @ vs))
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)


def test_the_integral_is_bounded_and_stops_in_saturation() -> None:
    model = load_urdf(robot_path("ur5"))
    n = model.nv
    law = ComputedTorque(model, np.arange(n), 0.0, 0.0, np.full(n, 10.0), np.full(n, 2.0),
                         friction=False)
    q, zero = np.zeros(n), np.zeros(n)
    for _ in range(1000):
        law.efforts(q, zero, (q + 0.5, zero, zero), 0.01)
    np.testing.assert_allclose(law.ki * law.integral, 2.0)  # at its limit, not 50
    law.reset()
    law.saturated[:] = 1  # saturated upward: a positive error does not grow it
    law.efforts(q, zero, (q + 0.5, zero, zero), 0.01)
    assert not law.integral.any()
    law.efforts(q, zero, (q - 0.5, zero, zero), 0.01)  # the other way it does
    np.testing.assert_allclose(law.integral, -0.005)


def test_a_continuous_joint_is_driven_the_shorter_way() -> None:
    model = load_urdf(robot_path("kinova"))
    wraps = [j.idx_v for j in model.joints if j.kind == "continuous"]
    assert wraps
    n = model.nv
    law = ComputedTorque(model, np.arange(n), 1.0, 0.0, 0.0, 0.0, friction=False)
    q, zero = np.zeros(n), np.zeros(n)
    desired = q.copy()
    desired[wraps[0]] = 2 * np.pi - 0.1  # 0.1 rad back, not 6.18 forward
    law.efforts(q, zero, (desired, zero, zero), 0.0)
    assert law.accelerations[wraps[0]] == pytest.approx(-0.1)


def test_a_floating_base_is_refused() -> None:
    with pytest.raises(ModelError, match="fixed-base arms"):
        ComputedTorque(load_urdf(QUADRUPED, floating_base=True), np.arange(3), 1.0, 1.0, 0.0,
                       0.0, False)
