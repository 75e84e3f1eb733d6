"""The bundled arm as built (masses and inertias off the URDF's), moved on an exciting
trajectory and recorded with Pinocchio's torques, its friction and noise: what identify's tests
and benches read."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
from recordings import write_joint_states

from rbd_ros.dynamics import load_urdf
from rbd_ros.dynamics.algorithm.rnea import SLIDING_SPEED
from rbd_ros.robots import ARM

RATE = 500.0
NOISE = 0.5  # N m, white, on each measured effort
MODEL = load_urdf(ARM)
NAMES = MODEL.state_joint_names


def built_arm(rng: np.random.Generator) -> str:
    """The arm as built: each link's mass and inertia scaled by 0.6-1.4 (centre of mass kept:
    still a physical body)."""
    root = ET.fromstring(ARM.read_text())
    for inertial in root.iter("inertial"):
        s = rng.uniform(0.6, 1.4)
        mass, inertia = inertial.find("mass"), inertial.find("inertia")
        assert mass is not None and inertia is not None
        mass.set("value", repr(s * float(mass.get("value", "0"))))
        for k, v in inertia.attrib.items():
            inertia.set(k, repr(s * float(v)))
    return ET.tostring(root, encoding="unicode")


def exciting(seconds: float, rng: np.random.Generator, rate: float = RATE
             ) -> tuple[np.ndarray, ...]:
    """Five-harmonic Fourier series on every joint (base period 10 s), within its limits."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    w = 2 * np.pi * 0.1 * np.arange(1, 6)
    A, B = rng.normal(size=(2, len(NAMES), 5)) / np.arange(1, 6)
    q = np.einsum("jk,tk->tj", A, np.sin(np.outer(t, w))) + \
        np.einsum("jk,tk->tj", B, np.cos(np.outer(t, w)))
    v = np.einsum("jk,tk->tj", A * w, np.cos(np.outer(t, w))) - \
        np.einsum("jk,tk->tj", B * w, np.sin(np.outer(t, w)))
    a = -np.einsum("jk,tk->tj", A * w**2, np.sin(np.outer(t, w))) - \
        np.einsum("jk,tk->tj", B * w**2, np.cos(np.outer(t, w)))
    scale = 2.0 / np.abs(q).max(axis=0)  # within +-2 rad (limits +-2.9)
    return t, q * scale, v * scale, a * scale


def efforts(urdf: str, q: np.ndarray, v: np.ndarray, a: np.ndarray, fv: np.ndarray,
            fc: np.ndarray) -> np.ndarray:
    """Pinocchio's RNEA of the built arm, by joint name, plus its friction."""
    pm = pin.buildModelFromXML(urdf)
    pd = pm.createData()
    order = [pm.getJointId(n) - 1 for n in NAMES]  # revolute: one coordinate each
    back = np.argsort(order)
    tau = np.array([pin.rnea(pm, pd, qi[back], vi[back], ai[back])[order]
                    for qi, vi, ai in zip(q, v, a, strict=True)])
    out: np.ndarray = tau + fv * v + fc * np.sign(v)
    return out


def sliding_rms(miss: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per joint, the RMS of ``miss`` (states, joints) over the states where that joint slides
    (faster than 5 SLIDING_SPEED): there the arm's Coulomb friction, sign(v), and the models',
    tanh(v / SLIDING_SPEED), agree."""
    sliding = np.abs(v) > 5 * SLIDING_SPEED
    out: np.ndarray = np.sqrt(np.sum(np.where(sliding, miss, 0.0) ** 2, axis=0)
                              / sliding.sum(axis=0))
    return out


def write(path: Path, t: np.ndarray, q: np.ndarray, e: np.ndarray | None) -> Path:
    return write_joint_states(path, [1_700_000_000_000_000_000 + round(tk * 1e9) for tk in t],
                              q, effort=e, description_at=1)
