"""Every real URDF of example-robot-data loads (CAD noise and all), says what is odd about it
in one warning, and gives Pinocchio's dynamics: the corpus beside the seven robots that
test_against_pinocchio checks in depth."""

from __future__ import annotations

import logging

import numpy as np
import pinocchio as pin
import pytest
from pinref import REAL, ROBOTS, PinRef, random_state, rel_err

from rbd_ros.dynamics import Data, URDFError, crba, load_urdf, rnea

IN_DEPTH = {path for path, _ in REAL.values()}
#: not a robot: an empty <robot> that Pinocchio refuses too ("No name given for the robot")
EMPTY = "ur_description/urdf/ur3.urdf"
CORPUS = sorted(str(p.relative_to(ROBOTS)) for p in ROBOTS.rglob("*.urdf")
                if str(p.relative_to(ROBOTS)) not in IN_DEPTH | {EMPTY})


def test_the_corpus_is_large() -> None:
    assert len(CORPUS) >= 55, CORPUS


def test_a_robot_without_links_is_refused_as_pinocchio_refuses_it() -> None:
    with pytest.raises(URDFError, match="declares no <link>"):
        load_urdf(ROBOTS / EMPTY)


@pytest.mark.parametrize("path", CORPUS)
def test_real_urdf_loads_and_matches_pinocchio(path: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="rbd_ros.dynamics"):
        m = load_urdf(ROBOTS / path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) <= 1, warnings  # once, naming every odd link
    if warnings:
        assert warnings[0].startswith(f"URDF '{m.name}' loaded as Pinocchio and KDL load it, but")
    ref = PinRef(m, str(ROBOTS / path), False)
    assert m.total_mass == pytest.approx(pin.computeTotalMass(ref.pm), rel=1e-12)
    if m.nv == 0:  # a single rigid body (a quadrotor's base): nothing moves
        return
    d = Data(m)
    rng = np.random.default_rng(len(path))
    for _ in range(3):
        q, v, a, _tau = random_state(m, rng)
        assert rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a)) < 1e-9
        assert rel_err(crba(m, d, q), ref.crba(q)) < 1e-9


def test_tiago_antenna_noise_leaves_the_dynamics_exact() -> None:
    """The mobile manipulator that was refused outright: its 1 mg antenna inertia is slightly
    indefinite; loaded as given, everything equals Pinocchio's, and strict mode refuses it."""
    path = ROBOTS / "tiago_description/robots/tiago.urdf"
    m = load_urdf(path)
    ref = PinRef(m, str(path), False)
    d = Data(m)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, v, a, _tau = random_state(m, rng)
        assert rel_err(rnea(m, d, q, v, a), ref.rnea(q, v, a)) < 1e-12
    with pytest.raises(URDFError, match="base_antenna_left_link' has an inertia that is not "
                                        "positive semi-definite"):
        load_urdf(path, strict=True)
