"""``rbd-ros identify --payload``: the bundled arm carrying a known payload on its last link (a
box, its centre of mass off the flange), 20 s of exciting motion, efforts computed by Pinocchio
from the arm with the payload, plus the URDF's joint friction and effort noise; the recording
names the arm without it. Mass within 2 %, centre of mass within 5 mm. A real arm's recording,
its model 10-40 % off, with and without a baseline. And the model carrying a payload (what the
dynamics node's ``payload`` parameter gives) against Pinocchio on the URDF with the payload as a
link of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from builtarm import NAMES, built_arm, efforts, exciting, write
from payloads import COM, MASS, inertia_in_link7, payload_values, with_payload
from recordings import write_joint_states
from ruamel.yaml import YAML

from rbd_ros.bag.errors import BagError
from rbd_ros.dynamics import Data, ModelError, load_urdf, rnea
from rbd_ros.identify.payload import INERTIA_ENTRIES, PAYLOAD_FILE, identify_payload
from rbd_ros.identify.run import IdentifyOptions
from rbd_ros.robots import ARM

NOISE = 0.3  # N m


@pytest.fixture(scope="module")
def carried(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(5)
    t, q, v, a = exciting(20.0, rng)
    m = load_urdf(ARM)
    friction = {j.name: (j.damping, j.friction) for j in m.joints}
    fv, fc = (np.array([friction[n][k] for n in NAMES]) for k in (0, 1))
    exact = efforts(with_payload(), q, v, a, fv, fc)
    return write(tmp_path_factory.mktemp("payload") / "carried", t, q,
                 exact + rng.normal(scale=NOISE, size=exact.shape))


def test_the_payload_is_found(carried: Path, tmp_path: Path) -> None:
    payload, text = identify_payload([carried], tmp_path, IdentifyOptions(), "link7")
    assert abs(payload.mass - MASS) < 0.02 * MASS, text
    assert np.linalg.norm(payload.com - COM) < 0.005, text
    assert payload.mass_sigma < 0.02 * MASS and np.all(payload.com_sigma < 0.005), text
    # the inertia, hardly seen in the torques, within its stated uncertainty (4 sigma)
    truth = inertia_in_link7()
    entries = [(i, j) for _, i, j in INERTIA_ENTRIES]
    error = np.array([payload.inertia[i, j] - truth[i, j] for i, j in entries])
    assert np.all(np.abs(error) < 4 * payload.inertia_sigma), (error, text)
    # the held-out torques: the payload explains what the URDF alone misses, to the noise
    rms = np.array([[float(x) for x in line.split()[1:]] for line in text.splitlines()
                    if line.startswith("  joint")])
    assert np.all(rms[:, 1] < NOISE * 1.2) and rms[:, 0].max() > 3 * NOISE, text
    assert (tmp_path / "report.txt").read_text() == text + "\n"
    # the parameters it gives for the node: a payload the node takes
    link = re.search(r"^  payload_link: (\w+)$", text, re.M)
    values = re.search(r"^  payload: \[(.*)\]$", text, re.M)
    assert link and values, text
    load_urdf(ARM).with_payload(link.group(1), [float(x) for x in values.group(1).split(",")])
    # and as the node's parameters file beside the report, the same numbers
    file = YAML(typ="safe").load((tmp_path / PAYLOAD_FILE).read_text())
    assert file["/**/rbd_dynamics"]["ros__parameters"] == {
        "payload_link": link.group(1), "payload": [float(x) for x in values.group(1).split(",")]}


def test_the_command_line_and_a_link_that_is_not_there(carried: Path, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "identify", str(carried),
                          "--payload", "link7", "--out", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "payload on link7" in out and re.search(r"mass +1\.7\d* kg", out), out
    with pytest.raises(BagError, match=r"no link 'gripper'; links: .*link7"):
        identify_payload([carried], tmp_path / "no", IdentifyOptions(), "gripper")
    with pytest.raises(BagError, match="fixed to the world"):
        identify_payload([carried], tmp_path / "no", IdentifyOptions(), "world")


def driven(path: Path, t: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
           rng: np.random.Generator, per_amp: np.ndarray) -> Path:
    """As a real driver records it: each state stamped 0-0.6 ms after it was sampled, its
    velocities with noise, its efforts motor currents (torque / ``per_amp``) with 1 N m of
    noise at the joint."""
    ns = [1_700_000_000_000_000_000 + round(x * 1e9) for x in t + rng.uniform(0, 6e-4, t.size)]
    currents = (tau + rng.normal(size=tau.shape)) / per_amp
    return write_joint_states(path, ns, q, v + rng.normal(scale=0.01, size=v.shape), currents,
                              description_at=1)


def test_a_baseline_cancels_the_robot_models_error(tmp_path: Path) -> None:
    """The arm as built (masses and inertias 0.6-1.4 times the URDF's, friction it lacks)
    runs one motion twice, without the load and with it, recorded as a driver does (jittery
    stamps, motor currents, 1 N m of noise; the baseline starts 0.3 s earlier). Against the
    URDF the payload takes the model's error, and the report says how much it could be;
    against the baseline it is within 3 % and 1 cm. A baseline of another motion is refused."""
    rng = np.random.default_rng(17)
    built = built_arm(rng)
    fv, fc = rng.uniform(0.1, 2.0, len(NAMES)), rng.uniform(0.2, 3.0, len(NAMES))
    per_amp = rng.uniform(5.0, 15.0, len(NAMES))
    t, q, v, a = exciting(20.0, rng, rate=1000.0)
    loaded = driven(tmp_path / "loaded", t, q, v, efforts(with_payload(built), q, v, a, fv, fc),
                    rng, per_amp)
    baseline = driven(tmp_path / "baseline", t - 0.3, q, v, efforts(built, q, v, a, fv, fc),
                      rng, per_amp)
    opts = IdentifyOptions(effort_scale=dict(zip(NAMES, per_amp, strict=True)))
    alone, text = identify_payload([loaded], tmp_path / "urdf", opts, "link7")
    error = abs(alone.mass / MASS - 1)
    said = re.search(r"could be up to (\d+) % of this answer", text)
    assert error > 0.05 and said and int(said[1]) > 100 * error, text
    payload, text = identify_payload([loaded], tmp_path / "base", opts, "link7",
                                     baseline=[baseline])
    assert abs(payload.mass / MASS - 1) < 0.03, text
    assert np.linalg.norm(payload.com - COM) < 0.01, text
    assert "the robot model's own error cancels" in text and "its stamps -0.300 s from" in text, text
    other = driven(tmp_path / "other", t, q[::-1], -v[::-1], efforts(built, q, v, a, fv, fc),
                   rng, per_amp)
    with pytest.raises(BagError, match="the baseline is not the same motion"):
        identify_payload([loaded], tmp_path / "no", opts, "link7", baseline=[other])
    with pytest.raises(BagError, match="no payload there: its mass comes out"):
        identify_payload([baseline], tmp_path / "no", opts, "link7", baseline=[baseline])


def test_a_model_carrying_the_payload_is_pinocchios_arm_with_it() -> None:
    carrying = load_urdf(ARM).with_payload("link7", payload_values())
    pm = pin.buildModelFromXML(with_payload())
    pd = pm.createData()
    assert [pm.names[i] for i in range(1, pm.njoints)] == NAMES  # same coordinates
    rng = np.random.default_rng(2)
    for q, v, a in rng.normal(size=(20, 3, 7)):
        np.testing.assert_allclose(rnea(carrying, Data(carrying), q, v, a),
                                   pin.rnea(pm, pd, q, v, a), atol=1e-10)
    arm, good = load_urdf(ARM), payload_values()
    for link, values, said in (
            ("link7", good[:9], "10 numbers"),
            ("link7", [-1.0, *good[1:]], "its mass is -1 kg"),
            ("link7", [*good[:4], 1.0, 0.0, 0.0, 1.0, 0.0, 3.0], "triangle inequality"),
            ("link7", [*good[:4], -1.0, 0.0, 0.0, 1.0, 0.0, 1.0], "negative principal moment"),
            ("gripper", good, "no link 'gripper'"),
            ("world", good, "fixed to the world")):
        with pytest.raises(ModelError, match=said):
            arm.with_payload(link, values)
