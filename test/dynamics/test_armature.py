"""Rotor inertias (a joint's armature: Drake's ``rotor_inertia`` times ``gear_ratio`` squared,
read from the URDF's transmissions) against Pinocchio's ``model.armature`` on real robots, the
momentum observer on a motion Pinocchio simulated with them, and each way the tags can be
wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef, random_state, rel_err, robot_path
from urdfs import joint, limit, link, robot, with_rotors

from rbd_ros.dynamics import (
    Data,
    ModelError,
    URDFError,
    aba,
    crba,
    load_urdf_string,
    rnea,
)
from rbd_ros.dynamics.algorithm.momentum import momentum
from rbd_ros.dynamics.estimation.observer import MomentumObserver
from rbd_ros.robots import ARM


@pytest.mark.parametrize(("name", "ff"), [("ur5", False), ("panda", False), ("baxter", False),
                                           ("solo12", True)])
def test_rnea_aba_crba_and_momentum_match_pinocchios_armature(name: str, ff: bool) -> None:
    text = Path(robot_path(name)).read_text()
    plain = load_urdf_string(text, floating_base=ff)
    rng = np.random.default_rng(7)
    # every joint with a coordinate, mimic joints too (a gripper's fingers each have a motor
    # in this test), rotor inertias of 1e-5 to 1e-3 kg m^2 through gear ratios of 1 to 100
    moving = [j.name for j in plain.joints if j.kind in ("revolute", "continuous", "prismatic")]
    rotors: dict[str, tuple[float, float | None]] = {
        n: (float(rng.uniform(1e-5, 1e-3)), float(rng.uniform(1, 100))) for n in moving}
    rotors[moving[0]] = (2e-4, None)  # no gear_ratio: 1
    m = load_urdf_string(with_rotors(text, rotors), floating_base=ff)
    d = Data(m)
    ref = PinRef(m, text, ff)
    arm = np.zeros(ref.pm.nv)
    for jid in range(1, ref.pm.njoints):
        jn = ref.pm.names[jid]
        if jn in rotors:
            inertia, ratio = rotors[jn]
            arm[ref.pm.joints[jid].idx_v] = inertia * (ratio or 1.0) ** 2
            assert m.joint(jn).armature == pytest.approx(arm[ref.pm.joints[jid].idx_v])
    assert np.any(arm > 0.5), "some armature as large as a link's inertia"
    ref.pm.armature = arm
    ref.pd = ref.pm.createData()
    for _ in range(30):
        q, v, a, tau = random_state(m, rng)
        assert rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a)) < 1e-9
        assert rel_err(crba(m, d, q), ref.crba(q)) < 1e-9
        assert rel_err(aba(m, d, q, v, tau), ref.aba(q, v, tau)) < 1e-8
        # p = M v with the armature in M (the momentum observer's p)
        assert rel_err(momentum(m, d, q, v)[0], ref.crba(q) @ v) < 1e-9
    # and the armature changes each of them: the model without it is off
    q, v, a, tau = random_state(m, rng)
    assert rel_err(rnea(plain, Data(plain), q, v, a), ref.rnea(q, v, a)) > 1e-3
    assert rel_err(aba(plain, Data(plain), q, v, tau), ref.aba(q, v, tau)) > 1e-3



@pytest.mark.parametrize("name", ["ur5", "panda"])
def test_armature_set_in_python_matches_pinocchios_and_the_urdfs(name: str) -> None:
    """``Model.with_armature`` on a URDF without rotor tags: Pinocchio's ``model.armature``,
    and the same model as one whose URDF declares them; the joints not named keep theirs."""
    text = Path(robot_path(name)).read_text()
    plain = load_urdf_string(text)
    moving = [j.name for j in plain.joints if j.kind in ("revolute", "continuous", "prismatic")]
    values = {n: 0.1 * (k + 1) for k, n in enumerate(moving[:-1])}  # the last one keeps 0
    m = plain.with_armature(values)
    tagged = load_urdf_string(with_rotors(text, {n: (x, None) for n, x in values.items()}))
    assert [j.armature for j in m.joints] == [j.armature for j in tagged.joints]
    assert m.joint(moving[-1]).armature == 0.0 and plain.joint(moving[0]).armature == 0.0
    # rbd-ros info's summary lists them
    assert f"kg m^2): {moving[0]} 0.1, {moving[1]} 0.2," in m.summary()
    assert "armatures" not in plain.summary()
    ref = PinRef(m, text, False)
    arm = np.zeros(ref.pm.nv)
    for jid in range(1, ref.pm.njoints):
        arm[ref.pm.joints[jid].idx_v] = values.get(ref.pm.names[jid], 0.0)
    ref.pm.armature = arm
    ref.pd = ref.pm.createData()
    d, rng = Data(m), np.random.default_rng(3)
    for _ in range(10):
        q, v, a, tau = random_state(m, rng)
        assert rel_err(crba(m, d, q), ref.crba(q)) < 1e-9
        assert rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a)) < 1e-9
        assert rel_err(aba(m, d, q, v, tau), ref.aba(q, v, tau)) < 1e-8
    q, v, a, tau = random_state(m, rng)
    assert rel_err(aba(plain, Data(plain), q, v, tau), ref.aba(q, v, tau)) > 1e-3


@pytest.mark.parametrize(("values", "says"), [
    ({"nope": 0.1}, "armature for 'nope': model 't' has no such joint; joints: ['j1']"),
    ({"fix": 0.1}, "armature for 'fix': model 't' has no such joint"),
    ({"j1": -0.1}, "armature for 'j1' is -0.1: it must be a finite number >= 0"),
    ({"j1": float("nan")}, "armature for 'j1' is nan: it must be a finite number >= 0"),
    ({"j1": "heavy"}, "armature for 'j1' is 'heavy': it must be a finite number >= 0"),
])
def test_a_wrong_armature_is_refused_with_what_to_fix(values: dict[str, float],
                                                       says: str) -> None:
    m = load_urdf_string(_arm())
    with pytest.raises(ModelError) as err:
        m.with_armature(values)
    assert says in str(err.value)
    assert m.joint("j1").armature == 0.0  # the model is unchanged


def test_a_free_flyer_has_no_armature() -> None:
    m = load_urdf_string(Path(robot_path("solo12")).read_text(), floating_base=True)
    free = next(j.name for j in m.joints if j.kind == "floating")
    with pytest.raises(ModelError, match=f"armature for '{free}': it is a floating joint; "
                                         "only revolute, continuous and prismatic"):
        m.with_armature({free: 1.0})

def test_the_observer_holds_zero_on_a_motion_with_rotor_inertias() -> None:
    """The bundled arm swung by torques, simulated by Pinocchio with an armature of 0.2-0.5
    kg m^2 per joint (as an industrial arm's): with the rotors in the URDF the residual stays
    within 2 % of the rotors' torque, without them it is that torque (armature times
    acceleration)."""
    text = ARM.read_text()
    names = [j.name for j in load_urdf_string(text).joints]
    rotors: dict[str, tuple[float, float | None]] = {
        n: (1e-4 * (10 - k), 70.0) for k, n in enumerate(names)}  # 0.2-0.49 kg m^2
    with_arm, plain = load_urdf_string(with_rotors(text, rotors)), load_urdf_string(text)
    pm = pin.buildModelFromXML(text)
    pm.gravity.linear = with_arm.gravity.copy()
    assert list(pm.names[1:]) == names
    pm.armature = np.array([with_arm.joint(n).armature for n in names])
    pd = pm.createData()
    dt, n = 1e-3, 2000
    t = np.arange(n) * dt
    hold = np.zeros(pm.nv)

    def torque(k: int, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        phase = np.arange(pm.nv)
        target = 0.5 * np.sin(2 * np.pi * 0.8 * t[k] + phase)
        out: np.ndarray = pin.computeGeneralizedGravity(pm, pd, q) + 200 * (target - q) - 20 * v
        return out

    q, v = hold.copy(), np.zeros(pm.nv)
    Q, V, T, A = (np.zeros((n, pm.nv)) for _ in range(4))
    for k in range(n):  # semi-implicit Euler at 1 kHz: the states are exactly consistent
        tau = torque(k, q, v)
        a = pin.aba(pm, pd, q, v, tau)
        Q[k], V[k], T[k], A[k] = q, v, tau, a
        v = v + dt * a
        q = q + dt * v
    worst = {}
    for label, model in (("with", with_arm), ("without", plain)):
        obs = MomentumObserver(model, 50.0)
        r = np.array([obs.update(t[k], Q[k], V[k], T[k]) for k in range(n)])
        worst[label] = np.abs(r[n // 2:]).max(axis=0)
    rotor_torque = np.abs(pm.armature * A[n // 2:]).max(axis=0)
    assert np.all(worst["with"] < 0.02 * rotor_torque), (worst["with"], rotor_torque)
    assert np.all(worst["without"] > 0.5 * rotor_torque), (worst["without"], rotor_torque)


def _arm(*transmission: str) -> str:
    return robot(link("base"), link("l1", 1.0), joint("j1", "revolute", "base", "l1", extra=limit()),
                 link("l2", 1.0), joint("fix", "fixed", "l1", "l2"), *transmission)


def _tr(body: str, name: str = "t") -> str:
    return f'<transmission name="{name}">{body}</transmission>'


def test_gear_ratio_defaults_to_one_and_any_namespace_is_read() -> None:
    m = load_urdf_string(_arm(_tr('<joint name="j1"/><actuator name="m"><x:rotor_inertia '
                                  'xmlns:x="urn:any" value="0.25"/></actuator>')))
    assert m.joint("j1").armature == 0.25
    assert load_urdf_string(_arm()).joint("j1").armature == 0.0
    # a transmission without a rotor inertia (ros_control's) changes nothing
    m = load_urdf_string(_arm(_tr('<joint name="j1"/><actuator name="m"><mechanicalReduction>'
                                  '50</mechanicalReduction></actuator>')))
    assert m.joint("j1").armature == 0.0


@pytest.mark.parametrize(("body", "says"), [
    ('<joint name="nope"/><actuator name="m"><rotor_inertia value="1"/></actuator>',
     "joint 'nope' a rotor_inertia, but the URDF declares no such joint"),
    ('<joint name="fix"/><actuator name="m"><rotor_inertia value="1"/></actuator>',
     "it is fixed: only revolute, continuous and prismatic joints have one"),
    ('<joint name="j1"/><actuator name="m"><rotor_inertia value="-1"/></actuator>',
     "the inertia must be finite and >= 0"),
    ('<joint name="j1"/><actuator name="m"><rotor_inertia value="1"/><gear_ratio value="0"/>'
     '</actuator>', "the ratio finite and not 0"),
    ('<joint name="j1"/><actuator name="m"><rotor_inertia value="heavy"/></actuator>',
     "<rotor_inertia> needs a number in its value attribute, got 'heavy'"),
    ('<joint name="j1"/><actuator name="m"><rotor_inertia/></actuator>',
     "<rotor_inertia> needs a number in its value attribute, got None"),
    ('<joint name="j1"/><joint name="fix"/><actuator name="m"><rotor_inertia value="1"/>'
     '</actuator>', "2 joints and 1 actuators: a rotor inertia is read from a simple "
                    "transmission"),
])
def test_wrong_rotor_tags_are_refused_with_what_to_fix(body: str, says: str) -> None:
    with pytest.raises(URDFError) as err:
        load_urdf_string(_arm(_tr(body)))
    assert says in str(err.value)
    assert "transmission 't'" in str(err.value) or "joint '" in str(err.value)


def test_an_undeclared_drake_prefix_is_refused_with_the_declaration_to_add() -> None:
    body = '<joint name="j1"/><actuator name="m"><drake:rotor_inertia value="1"/></actuator>'
    with pytest.raises(URDFError, match=r"unbound prefix.*declared on <robot>: "
                                        r'xmlns:drake="http://drake.mit.edu"'):
        load_urdf_string(_arm(_tr(body)))


def test_one_joint_in_two_transmissions_is_refused() -> None:
    body = '<joint name="j1"/><actuator name="m"><rotor_inertia value="1"/></actuator>'
    with pytest.raises(URDFError, match="joint 'j1' has a rotor_inertia in two transmissions"):
        load_urdf_string(_arm(_tr(body, "a"), _tr(body, "b")))


@pytest.mark.parametrize(("tags", "where"), [
    (('<rotor_inertia value="1"/>', ""), '<joint name="j1">'),
    (("", _tr('<joint name="j1"/><rotor_inertia value="1"/><actuator name="m"/>')),
     '<transmission name="t">'),
])
def test_a_rotor_inertia_out_of_place_is_said_and_strict_refuses_it(
        tags: tuple[str, str], where: str, caplog: pytest.LogCaptureFixture) -> None:
    in_joint, transmission = tags
    text = _arm(transmission).replace("<limit ", in_joint + "<limit ", 1)
    assert text.count("rotor_inertia") == 1
    says = f"the <rotor_inertia> in {where} is not read: a rotor inertia is read in a " \
           "<transmission>'s <actuator>"
    with caplog.at_level("WARNING", logger="rbd_ros.dynamics"):
        assert load_urdf_string(text).joint("j1").armature == 0.0
    assert says in caplog.text
    with pytest.raises(URDFError, match="refused in strict mode") as err:
        load_urdf_string(text, strict=True)
    assert says in str(err.value)
