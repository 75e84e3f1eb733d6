"""``rbd-ros identify --payload LINK``: a held tool or object from a short recording: its mass,
centre of mass and inertia on one link, everything else at the URDF's values (the CAD's, or
those ``rbd-ros identify`` wrote).

The torques the URDF does not explain (the measured efforts less its inverse dynamics, its
joint friction included) are the payload's: linear in its ten inertial parameters through the
link's body's columns of the joint-torque regressor, so they come from one least-squares fit.
Their uncertainty is the fit's covariance from the residual's variance; samples are filtered
and thinned as ``identify``'s (:func:`.run.prepare`), so it assumes them independent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bag.errors import BagError
from ..bag.outputs import output_set
from ..dynamics import Model, ModelError, rnea_batch
from ..dynamics.model import F64
from ..dynamics.regressor import regressor_batch
from ..dynamics.spatial import rigid_body_problem
from .run import BLOCK, Options, Samples, measured_joints, prepare, read

INERTIA_ENTRIES = (("xx", 0, 0), ("xy", 0, 1), ("xz", 0, 2), ("yy", 1, 1), ("yz", 1, 2),
                   ("zz", 2, 2))


@dataclass(frozen=True)
class Payload:
    """A rigid payload on ``link``, in the link's frame."""

    link: str
    mass: float  # kg
    com: F64  # m, the centre of mass
    inertia: F64  # kg m^2, 3x3 about the centre of mass, in the link's axes
    mass_sigma: float  # one standard deviation
    com_sigma: F64  # per axis
    inertia_sigma: F64  # of xx, xy, xz, yy, yz, zz

    def not_physical(self) -> str | None:
        """Why no rigid body has these parameters, or None."""
        return rigid_body_problem(self.mass, self.inertia)

    def physical(self) -> Payload:
        """This payload, its inertia's principal moments moved to the nearest a rigid body has
        (none negative, none above the sum of the others) if they are not, for a mass no
        larger than zero too (then 1 g)."""
        moments, axes = np.linalg.eigh(self.inertia)
        moments = np.maximum(moments, 0.0)
        over = moments[2] - moments[0] - moments[1]
        if over > 0:  # the least change that closes the triangle: a third of it to each
            moments += np.array([1.0, 1.0, -1.0]) * over / 3
        return dataclasses.replace(self, mass=max(self.mass, 1e-3),
                                   inertia=axes @ np.diag(moments) @ axes.T)

    def values(self) -> list[float]:
        """The dynamics node's ``payload`` parameter: mass, centre of mass, inertia entries."""
        return [self.mass, *self.com, *(self.inertia[i, j] for _, i, j in INERTIA_ENTRIES)]


def payload_columns(model: Model, link: str) -> tuple[int, F64, F64]:
    """The body ``link`` is part of, and the link's axes and origin in that body's frame."""
    try:
        frame = model.carrier(link)
    except ModelError as e:
        raise BagError(f"--payload {link}: {e}") from None
    return frame.body, frame.rotation, frame.translation


def fit_payload(model: Model, link: str, samples: Samples, rows: np.ndarray) -> tuple[Payload, F64]:
    """The payload on ``link`` that explains what the model does not in ``samples`` (efforts of
    the joints ``rows``), and its ten parameters about the body's frame."""
    body, R, p = payload_columns(model, link)
    cols = slice(10 * body, 10 * body + 10)
    G, b, n, yy = np.zeros((10, 10)), np.zeros(10), 0, 0.0
    for k in range(0, len(samples), BLOCK):
        s = samples.cut(slice(k, k + BLOCK))
        Y = regressor_batch(model, s.q, s.v, s.a)[:, rows, cols].reshape(-1, 10)
        y = (s.tau - rnea_batch(model, s.q, s.v, s.a, friction=True))[:, rows].reshape(-1)
        G += Y.T @ Y
        b += Y.T @ y
        yy += float(y @ y)
        n += len(y)
    scale = np.sqrt(np.maximum(np.diag(G), 1e-300))  # columns of unlike units
    Gs = G / np.outer(scale, scale)
    if n <= 10 or np.linalg.cond(Gs) > 1e10:
        raise BagError(f"--payload {link}: the recording does not move the link enough to tell "
                       "its payload's ten parameters apart: move every joint up to it, at "
                       "several speeds and orientations")
    phi = np.linalg.solve(Gs, b / scale) / scale
    variance = max(float(yy - 2 * phi @ b + phi @ G @ phi), 0.0) / (n - 10)
    cov = variance * np.linalg.inv(Gs) / np.outer(scale, scale)

    def in_link(x: F64) -> F64:
        """Centre of mass and the inertia about it (6), in the link's frame, of parameters."""
        m, h = x[0], x[1:4]
        c = h / m
        xx, xy, yy_, xz, yz, zz = x[4:]
        Io = np.array([[xx, xy, xz], [xy, yy_, yz], [xz, yz, zz]])
        Ic = R.T @ (Io - m * (c @ c * np.eye(3) - np.outer(c, c))) @ R  # about the centre
        return np.concatenate([R.T @ (c - p), Ic[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]])

    out = in_link(phi)
    step = 1e-7 * np.maximum(np.abs(phi), 1e-6)
    J = np.column_stack([(in_link(phi + step[k] * np.eye(10)[k]) - out) / step[k]
                         for k in range(10)])
    sigma = np.sqrt(np.diag(J @ cov @ J.T))
    I6 = out[3:]
    inertia = np.array([[I6[0], I6[1], I6[2]], [I6[1], I6[3], I6[4]], [I6[2], I6[4], I6[5]]])
    return Payload(link, float(phi[0]), out[:3], inertia, float(np.sqrt(cov[0, 0])),
                   sigma[:3], sigma[3:]), phi


def identify_payload(paths: list[Path], out_dir: Path, opts: Options, link: str,
                     validate: list[Path] | None = None) -> tuple[Payload, str]:
    """The payload on ``link`` from ``paths`` (validated on their last ``opts.holdout`` or on
    ``validate``): ``report.txt`` into ``out_dir``; returns it and its text."""
    import scipy  # noqa: F401  (the filter: missing, said before any reading)

    _, model, ns, q, v, e = read(paths, opts)
    first = 10 * payload_columns(model, link)[0]  # (a wrong link is said before any work)
    measured = measured_joints(model, e, opts.ignore_efforts)
    data = prepare(ns, q, v, e, opts.cutoff, measured)
    if validate:
        _, other, ns2, q2, v2, e2 = read(validate, opts)
        if other.state_joint_names != model.state_joint_names:
            raise BagError("the validation recording's joints differ from the model's")
        train, test = data, prepare(ns2, q2, v2, e2, opts.cutoff, measured)
    else:
        if not 0 < opts.holdout < 1:
            raise BagError("--holdout must be between 0 and 1")
        cut = int(len(data) * (1.0 - opts.holdout))
        train, test = data.cut(slice(0, cut)), data.cut(slice(cut, None))
    rows = np.flatnonzero(measured)
    payload, phi = fit_payload(model, link, train, rows)
    base = rnea_batch(model, test.q, test.v, test.a, friction=True)[:, rows]
    carried = base + regressor_batch(model, test.q, test.v, test.a)[:, rows, first:first + 10] @ phi
    names = [model.state_joint_names[r] for r in rows]
    before = np.sqrt(np.mean((test.tau[:, rows] - base) ** 2, axis=0))
    after = np.sqrt(np.mean((test.tau[:, rows] - carried) ** 2, axis=0))
    why = payload.not_physical()
    seconds = 1e-9 * float(train.ns[-1] - train.ns[0])
    text = "\n".join([
        f"payload on {link}, from {seconds:.1f} s ({len(train)} samples; everything else the "
        "URDF's):",
        f"  mass            {payload.mass:10.4f} kg   +- {payload.mass_sigma:.4f}",
        "  centre of mass  " + " ".join(f"{x:+.4f}" for x in payload.com)
        + " m (in " + link + "'s frame)   +- " + " ".join(f"{x:.4f}" for x in payload.com_sigma),
        "  inertia about it, link axes (kg m^2): "
        + ", ".join(f"{n} {payload.inertia[i, j]:+.5f} +- {s:.5f}" for (n, i, j), s in zip(
            INERTIA_ENTRIES, payload.inertia_sigma, strict=True)),
        f"  not physical: {why}: the recording does not determine it (a small payload's inertia "
        "is hardly seen in the torques: move the link faster, in every orientation)" if why
        else "  physical: yes",
        "(+-: one standard deviation, from the fit's residual; the samples taken as "
        "independent)",
        "",
        "held-out torque RMS (N m) without the payload and with it:",
        *(f"  {n:<24} {b:9.4f} {a:9.4f}" for n, b, a in zip(names, before, after, strict=True)),
        "",
        "for the dynamics node's parameters" + (
            " (the inertia made physical: its principal moments moved to the nearest that a "
            "rigid body can have)" if why else "") + ":",
        f"  payload_link: {link}",
        "  payload: [" + ", ".join(f"{x:.6g}" for x in payload.physical().values()) + "]",
    ])
    with output_set(out_dir, ".rbd-identify-outputs") as tmp:
        (tmp / "report.txt").write_text(text + "\n")
    return payload, text
