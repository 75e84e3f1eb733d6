"""``rbd-ros identify`` end to end: a recording of the bundled arm on an exciting trajectory,
its efforts computed by Pinocchio from the arm as built (inertias 0.6-1.4 times the URDF's,
friction the URDF lacks) plus sensor noise, written by rosbags."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import numpy as np
import pytest
from builtarm import MODEL, NAMES, NOISE, built_arm, efforts, exciting, write
from recordings import write_joint_states
from rosbags.rosbag2 import Writer
from rosbags.typesys import Stores, get_typestore
from urdfs import with_rotors

from rbd_ros.bag.errors import BagError
from rbd_ros.dynamics import load_urdf_string
from rbd_ros.identify.fit import base_parameters
from rbd_ros.identify.run import IdentifyOptions, identify
from rbd_ros.robots import ARM

TS = get_typestore(Stores.ROS2_HUMBLE)
class Arm(TypedDict):
    bag: Path  # its recording
    built: str  # its URDF as built
    fv: np.ndarray  # viscous friction per joint
    fc: np.ndarray  # Coulomb friction per joint


@pytest.fixture(scope="module")
def arm(tmp_path_factory: pytest.TempPathFactory) -> Arm:
    rng = np.random.default_rng(11)
    built = built_arm(rng)
    fv, fc = rng.uniform(0.1, 2.0, len(NAMES)), rng.uniform(0.2, 3.0, len(NAMES))
    t, q, v, a = exciting(40.0, rng)
    exact = efforts(built, q, v, a, fv, fc)
    measured = exact + rng.normal(scale=NOISE, size=exact.shape)
    bag = write(tmp_path_factory.mktemp("identify") / "exciting", t, q, measured)
    return {"bag": bag, "built": built, "fv": fv, "fc": fc}


def test_identified_arm_predicts_held_out_torques_to_within_the_noise(
        arm: Arm, tmp_path: Path) -> None:
    report = identify([arm["bag"]], tmp_path, IdentifyOptions())
    rms = report.rms
    assert np.all(rms["identified"] < NOISE), report.text
    assert np.all(rms["identified"] < rms["urdf"] / 3), report.text  # the CAD values are off
    assert "warning" not in report.text  # an exciting trajectory, stamps on time
    assert "at the bound" not in report.text  # masses 0.6-1.4 times the URDF's: found within
    assert np.all(rms["least squares"] < NOISE), report.text
    # the written URDF: physical bodies (strict), Pinocchio loads it, and on states it never
    # saw its torques (with its friction) are the built arm's to within the noise
    xml = (tmp_path / "identified.urdf").read_text()
    written = load_urdf_string(xml, strict=True)
    fric = {j.name: (j.damping, j.friction) for j in written.joints}
    fv, fc = (np.array([fric[n][k] for n in NAMES]) for k in (0, 1))
    _, q, v, a = exciting(20.0, np.random.default_rng(99))
    k = slice(None, None, 50)
    ours = efforts(xml, q[k], v[k], a[k], fv, fc)
    truth = efforts(arm["built"], q[k], v[k], a[k], arm["fv"], arm["fc"])
    assert np.sqrt(np.mean((ours - truth) ** 2)) < NOISE
    assert (tmp_path / "torques.png").stat().st_size > 10_000
    assert "held-out torque RMS" in (tmp_path / "report.txt").read_text()


@pytest.mark.parametrize("recorded", [True, False], ids=["velocities", "positions only"])
def test_a_real_drivers_jittery_stamps_and_pauses_do_not_spoil_the_fit(
        arm: Arm, tmp_path: Path, recorded: bool) -> None:
    """A driver at a nominal 1 kHz stamps each state when it sends it, 0-0.6 ms after it was
    sampled (stamps 0.4-1.6 ms apart), and pauses three times for 8 ms; efforts carry 1 N m
    of noise, recorded velocities 0.01 rad/s. Differences over those stamps would make the
    accelerations explode: on a regular time base the held-out torques are still predicted
    far better than by the URDF (masses 0.6-1.4x), and the report says what it used."""
    rng = np.random.default_rng(41)
    t, q, v, a = exciting(40.0, rng, rate=1000.0)
    e = efforts(arm["built"], q, v, a, arm["fv"], arm["fc"]) + rng.normal(size=q.shape)
    kept = np.ones(len(t), dtype=bool)
    for start in (9000, 21000, 33000):
        kept[start : start + 7] = False
    sent = t + rng.uniform(0.0, 6e-4, len(t))
    ns = [1_700_000_000_000_000_000 + round(x * 1e9) for x in sent[kept]]
    measured_v = v + rng.normal(scale=0.01, size=v.shape)
    bag = write_joint_states(tmp_path / "driver", ns, q[kept],
                             measured_v[kept] if recorded else None, e[kept], description_at=1)
    report = identify([bag], tmp_path / "o", IdentifyOptions())
    rms = report.rms
    assert np.all(rms["identified"] < NOISE), report.text
    assert np.all(rms["identified"] < rms["urdf"] / 3), report.text
    assert np.all(rms["least squares"] < NOISE), report.text
    how = "as recorded" if recorded else "differenced from the positions (none recorded)"
    assert f"signals: velocities {how}, accelerations differenced from them; stamps 0.4" \
        in report.text
    assert "3 pauses over 5 ms split the recording" in report.text
    assert re.search(r"warning: the stamps jitter by 1\.\d periods", report.text), report.text


def test_identify_command_writes_its_outputs_and_refuses_what_it_cannot_use(
        arm: Arm, tmp_path: Path) -> None:
    run = [sys.executable, "-m", "rbd_ros.app.cli", "identify"]
    out = subprocess.run([*run, str(arm["bag"]), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "identified" in out.stdout
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == \
        [".rbd-identify-outputs", "identified.urdf", "report.txt", "torques.png"]
    assert (tmp_path / "o" / ".rbd-identify-outputs").read_text().split() == \
        ["identified.urdf", "report.txt", "torques.png"]
    # no efforts recorded
    t, q, _, _ = exciting(5.0, np.random.default_rng(1))
    bare = write(tmp_path / "no_effort", t, q, None)
    out = subprocess.run([*run, str(bare), "--out", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert "identify needs measured efforts" in out.stderr
    assert not (tmp_path / "x" / "identified.urdf").exists()
    # a cut-off the sampling rate cannot carry
    out = subprocess.run([*run, str(arm["bag"]), "--cutoff", "300", "--out",
                          str(tmp_path / "y")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert "--cutoff 300 Hz must be below 40 % of the recording's 500.0 Hz" in out.stderr
    # a time window: 10 s of the 40, a quarter of them held out
    out = subprocess.run([*run, str(arm["bag"]), "--start", "5", "--end", "15", "--out",
                          str(tmp_path / "w")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    spans = re.search(r"samples: \d+ identifying \(([\d.]+) s\), \d+ validating \(([\d.]+) s\)",
                      out.stdout)
    assert spans, out.stdout
    assert 7.0 < float(spans[1]) <= 7.5 and 2.0 < float(spans[2]) <= 2.5, spans[0]
    for window, said in ((["--start", "12", "--end", "3"], "the start must be at least 0 and "
                          "before the end"), (["--start", "50"], "no joint states there (the "
                          "recording spans 40 s)")):
        out = subprocess.run([*run, str(arm["bag"]), *window, "--out", str(tmp_path / "z")],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 2 and said in out.stderr, out.stderr


def test_a_joint_that_never_moves_is_said_and_its_parameters_keep_the_urdfs(
        tmp_path: Path) -> None:
    """Joint 7 held still: what only it would reveal is not guessed; the rest is identified."""
    rng = np.random.default_rng(5)
    built = built_arm(rng)
    t, q, v, a = exciting(30.0, rng)
    q[:, 6], v[:, 6], a[:, 6] = 0.3, 0.0, 0.0
    fv, fc = np.full(7, 0.5), np.full(7, 1.0)
    e = efforts(built, q, v, a, fv, fc) + rng.normal(scale=NOISE, size=q.shape)
    report = identify([write(tmp_path / "still", t, q, e)], tmp_path / "o", IdentifyOptions())
    assert "warning: the recording excites" in report.text
    assert "warning: joints that barely moved (range below 0.1): joint7 (0.000); what only their " \
        "motion shows is not identified (record an exciting trajectory: rbd-ros excite)" \
        in report.text
    assert "identifying samples for" not in report.text  # 30 s: long enough
    # 6 s: too short, said with what to do
    t, q, v, a = exciting(6.0, rng)
    e = efforts(built, q, v, a, fv, fc) + rng.normal(scale=NOISE, size=q.shape)
    short = identify([write(tmp_path / "short", t, q, e)], tmp_path / "s", IdentifyOptions())
    assert re.search(r"warning: \d+ identifying samples for 57 base parameters \(fewer than "
                     r"10 each\): record longer \(record an exciting trajectory: rbd-ros "
                     r"excite\)", short.text), short.text
    assert np.all(report.rms["identified"][:6] < NOISE), report.text
    xml = (tmp_path / "o" / "identified.urdf").read_text()
    written = load_urdf_string(xml, strict=True)
    assert written.joint("joint7").damping == pytest.approx(MODEL.joint("joint7").damping,
                                                            abs=1e-3)


def test_a_joint_the_recording_lacks_is_held_and_options_are_never_guessed(
        tmp_path: Path) -> None:
    """A recording of joints 1-6 only (the last one is a gripper's, not published): identify
    says so and how to hold it, holds it with --hold as analyze does, and identifies the rest.
    A shortened option is refused, not read as another (--hold as --holdout)."""
    rng = np.random.default_rng(7)
    built = built_arm(rng)
    t, q, v, a = exciting(30.0, rng)
    q[:, 6], v[:, 6], a[:, 6] = 0.3, 0.0, 0.0
    e = efforts(built, q, v, a, np.full(7, 0.5), np.full(7, 1.0))
    e += rng.normal(scale=NOISE, size=q.shape)
    ns = [1_700_000_000_000_000_000 + round(x * 1e9) for x in t]
    bag = write_joint_states(tmp_path / "six", ns, q[:, :6], effort=e[:, :6], names=NAMES[:6],
                             description_at=1)
    run = [sys.executable, "-m", "rbd_ros.app.cli", "identify", str(bag), "--out",
           str(tmp_path / "o")]
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert "['joint7'] are not recorded" in out.stderr and "--hold NAME=POSITION" in out.stderr
    out = subprocess.run([*run, "--holdo", "0.5"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "unrecognized arguments: --holdo" in out.stderr
    out = subprocess.run([*run, "--hold", "joint7=0.3"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.split(
        "held-out torque RMS")[1].splitlines()[2:9]}
    assert rows["joint7"] == ["(efforts", "not", "used)"]
    assert all(float(rows[f"joint{k}"][2]) < NOISE for k in range(1, 7)), out.stdout


def test_drive_scales_and_offsets_are_found(arm: Arm, tmp_path: Path) -> None:
    """Efforts recorded as motor currents with a bias: e = tau / k + o, each joint's k and o
    its own. With ``drive`` the held-out efforts are predicted to within the noise and the
    scales (relative to the first joint's) and offsets are found; without, they are not. The
    last joint's torque is mostly its own friction, which scales with it: its scale is said
    to be undetermined, not guessed."""
    rng = np.random.default_rng(21)
    t, q, v, a = exciting(40.0, rng)
    torque = efforts(arm["built"], q, v, a, arm["fv"], arm["fc"])
    k = rng.uniform(0.5, 2.0, len(NAMES))
    o = rng.uniform(-2.0, 2.0, len(NAMES))
    e = torque / k + o
    e += rng.normal(scale=NOISE / k.max(), size=e.shape)  # noise below NOISE in torque
    bag = write(tmp_path / "currents", t, q, e)
    plain = identify([bag], tmp_path / "plain", IdentifyOptions())
    report = identify([bag], tmp_path / "drive", IdentifyOptions(drive=True))
    assert np.all(report.rms["identified"] < NOISE / k.max() * 1.5), report.text
    assert np.all(plain.rms["identified"] > 2 * report.rms["identified"]), plain.text
    table = report.text.split("scale k")[1].splitlines()[1:1 + len(NAMES)]
    got = np.array([[float(x) for x in line.split()[1:3]] for line in table])
    found = ["not determined" not in line for line in table]
    assert found == [True] * 6 + [False], report.text
    assert "warning: the scales of joint7 are not determined" in report.text
    np.testing.assert_allclose(got[:6, 0], (k / k[0])[:6], rtol=0.03)
    np.testing.assert_allclose(got[:6, 1], o[:6], atol=0.05 * np.abs(o).max())


def write_groups(path: Path, t: np.ndarray, q: np.ndarray, e: np.ndarray, alone: int) -> Path:
    """As a driver that publishes one joint apart: the others with their efforts, then joint
    ``alone`` with its position only, in a message of its own at the same stamp."""
    JS, Header = TS.types["sensor_msgs/msg/JointState"], TS.types["std_msgs/msg/Header"]
    Time = TS.types["builtin_interfaces/msg/Time"]
    rest = [j for j in range(len(NAMES)) if j != alone]
    with Writer(path, version=8) as w:
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        for k, tk in enumerate(t):
            ns = 1_700_000_000_000_000_000 + round(tk * 1e9)
            header = Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="")
            for msg in (JS(header=header, name=[NAMES[j] for j in rest], position=q[k, rest],
                           velocity=np.empty(0), effort=e[k, rest]),
                        JS(header=header, name=[NAMES[alone]], position=q[k, [alone]],
                           velocity=np.empty(0), effort=np.empty(0))):
                w.write(js, ns, TS.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    return path


def test_joints_without_torques_are_left_out_and_the_rest_identified(
        arm: Arm, tmp_path: Path) -> None:
    """A real arm often measures some joints' torques only (a wrist without sensors, a
    gripper, a joint whose effort is in a unit nobody knows). Joint 3's efforts garbled and
    ignored by name, joint 7's never recorded (published apart, position only): the other
    joints' held-out torques are still predicted to within the noise, the two are said, and
    the written URDF is still physical."""
    rng = np.random.default_rng(31)
    t, q, v, a = exciting(40.0, rng)
    e = efforts(arm["built"], q, v, a, arm["fv"], arm["fc"])
    e += rng.normal(scale=NOISE, size=e.shape)
    e[:, 2] = 1000.0 + 50.0 * rng.normal(size=len(t))  # not a torque
    bag = write_groups(tmp_path / "groups", t, q, e, alone=6)
    report = identify([bag], tmp_path / "o", IdentifyOptions(urdf=ARM, ignore_efforts=("joint3",)))
    rms = report.rms["identified"]
    kept = [0, 1, 3, 4, 5]
    assert np.all(rms[kept] < NOISE), report.text
    assert np.all(rms[kept] < report.rms["urdf"][kept] / 3), report.text
    assert np.isnan(rms[[2, 6]]).all()
    assert "efforts not used (not recorded, or --ignore-efforts): joint3, joint7" in report.text
    assert report.text.count("(efforts not used)") == 2
    load_urdf_string((tmp_path / "o" / "identified.urdf").read_text(), strict=True)
    # garbage that is not said to be garbage is taken for joint 3's torque, and spoils the
    # plain least squares; the joints' weights and the pull towards the URDF keep the others
    spoiled = identify([bag], tmp_path / "p", IdentifyOptions(urdf=ARM))
    assert spoiled.rms["identified"][2] > 100 * NOISE, spoiled.text
    assert np.nanmax(spoiled.rms["least squares"][kept]) > 2 * NOISE, spoiled.text
    assert np.all(spoiled.rms["identified"][kept] < 2 * NOISE), spoiled.text
    with pytest.raises(BagError, match=r"--ignore-efforts joint9: not joints of the model"):
        identify([bag], tmp_path / "q", IdentifyOptions(urdf=ARM, ignore_efforts=("joint9",)))


def test_identify_fits_the_armatures_of_the_joints_whose_urdf_has_rotors(
        arm: Arm, tmp_path: Path) -> None:
    """The arm as built with motors of 0.05-0.3 kg m^2 at the joints; the URDF says they are
    there, each at half its armature: the armatures are identified, the held-out torques come
    within the noise, and identified.urdf carries them as rotor inertias through the same gear
    ratio. Without the rotors in the URDF the links' inertias carry only part of them."""
    rng = np.random.default_rng(5)
    truth = dict(zip(NAMES, rng.uniform(0.05, 0.3, len(NAMES)).tolist(), strict=True))
    t, q, v, a = exciting(40.0, rng)
    e = efforts(arm["built"], q, v, a, arm["fv"], arm["fc"]) + np.array(list(truth.values())) * a
    e += rng.normal(scale=NOISE, size=e.shape)
    bag = write(tmp_path / "rotors", t, q, e)
    urdf = tmp_path / "half.urdf"
    urdf.write_text(with_rotors(ARM.read_text(), {j: (x / 2 / 50.0**2, 50.0)
                                                  for j, x in truth.items()}))
    report = identify([bag], tmp_path / "o", IdentifyOptions(urdf=urdf))
    assert np.all(report.rms["identified"] < NOISE), report.text
    assert np.mean(report.rms["urdf"]) > 3 * NOISE, report.text
    assert "(armature: rotor inertia x gear ratio^2" in report.text
    out = (tmp_path / "o" / "identified.urdf").read_text()
    assert '<drake:gear_ratio value="50.0"' in out  # the prefix Drake reads, as given
    found = load_urdf_string(out, strict=True)
    # an armature whose column the base parameters keep alone is identified; the others merge
    # with a link's inertia about the same axis (here joints 1 and 2: their split stays near
    # the URDF's, the torques are right)
    base = base_parameters(found)
    first = 10 * found.nb + 2 * len(NAMES)
    alone = [j for j in range(len(NAMES)) if first + j in base.independent and np.all(np.abs(
        base.beta[list(base.independent).index(first + j)]) < 1e-9)]
    assert alone == [2, 3, 4, 5, 6]
    for j in alone:
        assert found.joint(NAMES[j]).armature == pytest.approx(truth[NAMES[j]], rel=0.1), \
            report.text
    plain = identify([bag], tmp_path / "p", IdentifyOptions(urdf=ARM))
    # (1.7 times the error: the links' own inertias about the joint axes carry part of it)
    assert np.mean(plain.rms["identified"]) > 1.3 * np.mean(report.rms["identified"]), plain.text


def test_a_mimic_joint_with_a_rotor_is_refused_with_what_to_do() -> None:
    """A mimic joint's armature has no parameter of its own: refused, naming it."""
    from rbd_ros.identify.run import _no_mimic_rotors

    inertial = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ' \
        'ixz="0" iyz="0"/></inertial>'
    urdf = ('<robot name="g"><link name="base"/>'
            + "".join(f'<link name="l{k}">{inertial}</link><joint name="j{k}" type="revolute">'
                      f'<parent link="base"/><child link="l{k}"/><axis xyz="0 0 1"/>'
                      '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
                      + ('<mimic joint="j1"/>' if k == 2 else "") + "</joint>" for k in (1, 2))
            + "</robot>")
    _no_mimic_rotors(load_urdf_string(with_rotors(urdf, {"j1": (0.1, None)})))  # fitted
    with pytest.raises(BagError, match=r"the URDF gives mimic joints j2 a rotor_inertia .*"
                                       r"Give the rotor to the joint they mimic"):
        _no_mimic_rotors(load_urdf_string(with_rotors(urdf, {"j2": (0.1, None)})))
