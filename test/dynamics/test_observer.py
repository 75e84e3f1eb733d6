"""The momentum observer on a simulated arm (RK4 on ABA at 1 kHz) holding a posture under PD
control, with a wrench applied to one link from t = 1 s: the residual is zero before it and
equals the external joint torque (RNEA at the true acceleration minus the applied torques)
within 1 % from 7/K seconds after it (K the default gain; the residual's two lags leave 1 % of
a step at 6.6/K) -- with the measured velocities, and with velocities fitted to the positions,
as a node has them from joint states that carry none (the residual then half the fit's window
late)."""

from __future__ import annotations

import numpy as np
import pytest
from armsim import DT, HOLD, fifth_link_wrench, simulate

from rbd_ros.dynamics import Data, load_urdf, load_urdf_string, rnea
from rbd_ros.dynamics.estimation.observer import (
    DEFAULT_GAIN,
    EXTERNAL_GAIN,
    FIT_AT,
    WINDOW_S,
    CollisionDetector,
    MomentumObserver,
    collision_level,
    likely_links,
)
from rbd_ros.robots import ARM

K = DEFAULT_GAIN  # 1/s


@pytest.mark.parametrize("velocities", ["measured", "differenced"])
def test_residual_converges_to_the_external_joint_torques(velocities: str) -> None:
    m = load_urdf(ARM)
    observer = MomentumObserver(m, K)
    before, after, size, externals = [], [], 0.0, []
    # without velocities, the residual is that of FIT_AT in the positions' window (the states
    # within WINDOW_S back), ``late`` s before the newest
    late = (1 - FIT_AT) * (WINDOW_S // DT) * DT / 2 if velocities == "differenced" else 0.0
    for t, q, v, tau, external in simulate(fifth_link_wrench()):
        externals.append(external)
        if velocities == "differenced":  # the observer is not to use them
            v = np.full(7, np.nan)
        r = observer.update(t, q, v, tau, differenced=velocities == "differenced")
        if t < 1.0:
            before.append(np.abs(r).max())
        elif t >= 1.0 + 7.0 / K + late:
            back = late / DT  # the external torque at the residual's time, between two states
            i = len(externals) - 1 - int(back)
            external = (1 - back % 1) * externals[i] + back % 1 * externals[i - 1]
            size = max(size, np.abs(external).max())
            after.append(np.abs(r - external).max() / np.abs(external).max())
    # while the arm swings freely, the residual stays within 1.5 % of the torque to detect
    # (the trapezoid rule's error at 1 kHz), 2 % from positions (a cubic's slope away from its
    # window's centre carries the motion's fourth derivative: 1.65 % in the first 50 ms of this
    # swing from a standstill, 0.02 % after 0.2 s), and at rest it is exact
    swing = 0.015 if velocities == "measured" else 0.02
    assert max(before) < swing * size and before[-1] < 1e-4
    assert max(after) < 0.01
    assert after[-1] < 1e-4  # at rest, exact


def test_friction_is_not_external() -> None:
    """The arm with its URDF's joint friction, which the measured efforts then include: the
    observer with ``friction`` removes it, one without shows it as external. Viscous friction
    is removed exactly; Coulomb friction's sign at rest is undefined (the simulated joints
    chatter around zero velocity within each step), so a joint at rest may show up to its
    Coulomb friction."""
    import re

    coulomb = load_urdf_string(ARM.read_text())
    viscous = load_urdf_string(re.sub(r'friction="[0-9.]+"', 'friction="0"', ARM.read_text()))
    top = max(j.friction for j in coulomb.joints)
    for m, bar in ((viscous, 0.01), (coulomb, None)):
        with_friction, without = MomentumObserver(m, K, friction=True), MomentumObserver(m, K)
        errors, shown = [], []
        for t, q, v, tau, external in simulate(fifth_link_wrench(), 2.0, m):
            r = with_friction.update(t, q, v, tau)
            r_plain = without.update(t, q, v, tau)
            if t >= 1.0 + 7.0 / K:
                errors.append((np.abs(r - external).max(), np.abs(external).max()))
            if 0.1 < t < 0.3:  # swinging before the wrench: friction is all the plain one sees
                shown.append(np.abs(r_plain).max())
        if bar is not None:
            assert max(e / size for e, size in errors) < bar
        else:
            assert max(e for e, _ in errors) < top
        assert max(shown) > 0.05



def test_a_joint_at_rest_with_noisy_velocities_does_not_chatter_with_coulomb_friction() -> None:
    """The arm standing still (it sticks: no friction torque), its velocities white noise of 2
    mrad/s about zero as a driver measures them: the observer with ``friction`` removes the
    Coulomb friction through ``tanh(v / SLIDING_SPEED)``, so what it adds to the residual stays
    under 5 % of each joint's Coulomb friction; through the sign of the velocity it flips whole
    from state to state, about a fifth of it through the two lags."""
    m = load_urdf(ARM)
    d, q = Data(m), HOLD.copy()
    tau = rnea(m, d, q, np.zeros(m.nv), np.zeros(m.nv))  # gravity: the arm holds still
    rng = np.random.default_rng(0)
    with_friction, without = MomentumObserver(m, K, friction=True), MomentumObserver(m, K)
    added = []
    for k in range(1000):
        v = 2e-3 * rng.standard_normal(m.nv)
        r = with_friction.update(k * DT, q, v, tau)
        r_plain = without.update(k * DT, q, v, tau)
        if k * DT >= 7.0 / K:
            added.append(r - r_plain)
    coulomb = np.array([j.friction for j in m.joints])
    assert np.all(coulomb > 0)
    spread = np.sqrt(np.mean(np.square(added), axis=0))
    assert np.all(spread < 0.05 * coulomb), spread / coulomb

def test_the_contact_link_is_the_deepest_flagged_joints() -> None:
    m = load_urdf(ARM)
    r = rnea(m, Data(m), HOLD, np.zeros(7), np.zeros(7), fifth_link_wrench()) - \
        rnea(m, Data(m), HOLD, np.zeros(7), np.zeros(7))  # -J^T f: the joints it shows in
    flagged = np.abs(r) > 0.05
    assert flagged[:5].all() and not flagged[5:].any()
    assert likely_links(m, flagged) == [m.body_names[4]]
    assert likely_links(m, np.zeros(7, dtype=bool)) == []


def test_the_link_is_looked_for_below_the_threshold_once_a_joint_is_flagged() -> None:
    """The fifth link pushed: its torque on joint 5 is under joint 5's threshold, so only the
    shoulder's joints are flagged; the link is named from the joints over the release level
    (the hysteresis' own), which joint 5 is. Nothing flagged: no joint looked at."""
    m = load_urdf(ARM)
    z = np.zeros(7)
    r = rnea(m, Data(m), HOLD, z, z) - rnea(m, Data(m), HOLD, z, z, fifth_link_wrench())
    thresholds = np.abs(r) / 0.8  # every loaded joint at 0.8 of its threshold ...
    thresholds[:2] = np.abs(r[:2]) / 1.2  # ... but the first two, over it
    thresholds[5:] = 1.0
    detector = CollisionDetector(thresholds, 0.5)
    detector.update(r)
    assert detector.flags.tolist() == [True, True] + [False] * 5
    assert likely_links(m, detector.flags) == [m.body_names[1]]
    assert detector.loaded[:5].all() and not detector.loaded[5:].any()
    assert likely_links(m, detector.loaded) == [m.body_names[4]]
    detector.update(np.zeros(7))  # released
    assert not detector.flags.any() and not detector.loaded.any()
    detector.update(r, settled=np.zeros(7, dtype=bool))  # the observer not settled: no flag
    assert not detector.flags.any() and not detector.loaded.any()


def test_flags_from_an_observers_last_state_by_column() -> None:
    """``update_from`` reads the thresholds' joints from an observer's last state by column,
    in their own order; a column of -1 (a held joint: no effort, no residual) is never
    flagged, however large the residual there."""
    last = np.zeros((1, 3, 7))
    last[0, 0] = [0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 9.0]
    last[0, 2] = 1.0  # settled
    detector = CollisionDetector(np.array([1.0, 1.0, 1.0]), 0.5)
    assert detector.update_from(last, np.array([6, 1, -1]))
    assert detector.flags.tolist() == [True, True, False]
    assert detector.loaded.tolist() == [True, True, False]
    last[0, 1, 6] = 1.0  # moving: the threshold grows with speed, as collision_level says
    moving = CollisionDetector(np.array([1.0]), 0.5, 20.0)
    assert not moving.update_from(last, np.array([6]))
    assert moving.level.tolist() == pytest.approx(
        collision_level(np.array([1.0]), np.array([20.0]), np.array([0.0]), np.array([1.0])))


def test_gain_must_be_positive() -> None:
    for gain, external in ((0.0, None), (K, -1.0), (K, np.array([K] * 6 + [0.0]))):
        with pytest.raises(ValueError, match="gains must be positive"):
            MomentumObserver(load_urdf(ARM), gain, external_gain=external)


@pytest.mark.parametrize("differenced", [False, True])
def test_external_torques_are_the_same_observer_at_the_second_gain(differenced: bool) -> None:
    """The dynamics node's two residuals from one observer (flags at ``gain``,
    ``~/external_torques`` at ``external_gain``) equal two observers run apart, each at its
    own gain, state for state: the second bank shares the model's terms, nothing else."""
    m = load_urdf(ARM)
    both = MomentumObserver(m, K, external_gain=EXTERNAL_GAIN)
    fast, slow = MomentumObserver(m, K), MomentumObserver(m, EXTERNAL_GAIN)
    noise, apart = np.random.default_rng(3), 0.0
    for t, q, v, tau, _ in simulate(fifth_link_wrench()):
        v = v + 2e-3 * noise.standard_normal(7)  # the residuals differ most with the noise
        for observer in (both, fast, slow):
            observer.update(t, q, v, tau, differenced)
        assert np.array_equal(both.residual, fast.residual)
        assert np.array_equal(both.external_torques, slow.residual)
        assert np.array_equal(both.settled, fast.settled)
        apart = max(apart, np.abs(both.residual - both.external_torques).max())
    assert apart > 0.01  # not one signal twice
    assert np.array_equal(fast.external_torques, fast.residual)  # without a second gain


def test_a_new_external_gain_restarts_the_external_torques_alone() -> None:
    """``set_external_gain`` mid-run (the dynamics node's external_torques_gain set live): the
    residual the flags are on goes on as if nothing happened, and the external torques start
    again at the new gain, as an observer at that gain started there (its p(0) from the same
    states, so equal once the first's start has decayed)."""
    m, change = load_urdf(ARM), 1.2  # s: while the push is on
    both, fast = MomentumObserver(m, K, external_gain=EXTERNAL_GAIN), MomentumObserver(m, K)
    fresh = MomentumObserver(m, 150.0)
    for t, q, v, tau, external in simulate(fifth_link_wrench()):
        if abs(t - change) < 1e-9:
            both.set_external_gain(150.0)
        both.update(t, q, v, tau)
        fast.update(t, q, v, tau)
        if t >= change - 1e-3:  # from the state before: the bank's first step spans it
            fresh.update(t, q, v, tau)
        assert np.array_equal(both.residual, fast.residual)
        assert np.array_equal(both.settled, fast.settled)
        if change <= t < change + 1.0 / 150.0 - 1e-3:
            assert not both.external_torques.any()  # its p(0) being set
        if t >= change + 10.0 / 150.0:
            np.testing.assert_allclose(both.external_torques, fresh.residual, rtol=0,
                                       atol=1e-3 * np.abs(external).max())
    with pytest.raises(ValueError, match="gains must be positive"):
        both.set_external_gain(0.0)
