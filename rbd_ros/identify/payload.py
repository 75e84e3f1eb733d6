"""``rbd-ros identify --payload LINK``: a held tool or object from a short recording: its mass,
centre of mass and inertia on one link, everything else at the URDF's values (the CAD's, or
those ``rbd-ros identify`` wrote).

The torques the rest of the robot does not explain are the payload's: linear in its ten
inertial parameters through the link's body's columns of the joint-torque regressor, so they
come from one least-squares fit. What the rest explains is either the URDF's inverse dynamics
(its joint friction included), whose own error then passes into the payload, or, better, a
baseline: a recording of the same motion without the load, aligned in time with the loaded one,
whose efforts hold the robot's real dynamics, model error and all. Their uncertainty is the
fit's covariance from the residual's variance; samples are filtered and thinned as
``identify``'s (:func:`.run.prepare`), so it assumes them independent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bag.errors import BagError
from ..bag.outputs import output_set
from ..dynamics import Model, ModelError, rnea_batch
from ..dynamics.algorithm.regressor import regressor_batch
from ..dynamics.multibody.model import F64
from ..dynamics.multibody.spatial import rigid_body_problem
from .run import BLOCK, IdentifyOptions, Samples, measured_joints, prepare, read, window

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


def fit_payload(model: Model, link: str, samples: Samples, rest: F64, rows: np.ndarray
                ) -> tuple[Payload, F64]:
    """The payload on ``link`` that explains the efforts of the joints ``rows`` in ``samples``
    less ``rest`` (what the robot without it takes), and its ten parameters about the body's
    frame."""
    body, R, p = payload_columns(model, link)
    cols = slice(10 * body, 10 * body + 10)
    G, b, n, yy = np.zeros((10, 10)), np.zeros(10), 0, 0.0
    for k in range(0, len(samples), BLOCK):
        s = samples.cut(slice(k, k + BLOCK))
        Y = regressor_batch(model, s.q, s.v, s.a)[:, rows, cols].reshape(-1, 10)
        y = (s.tau - rest[k : k + BLOCK])[:, rows].reshape(-1)
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
    if not phi[0] > 3.0 * np.sqrt(cov[0, 0]):
        raise BagError(f"--payload {link}: no payload there: its mass comes out {phi[0]:.3g} kg "
                       f"+- {np.sqrt(cov[0, 0]):.2g}, not told from none (is the load on "
                       "another link, or the baseline the loaded recording itself?)")

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


#: the baseline's positions, once aligned, at most this far from the loaded recording's (rad
#: or m RMS): beyond, it is not the same motion
SAME_MOTION = 0.02


@dataclass(frozen=True)
class Paired:
    """Loaded samples with the baseline's efforts at the same point of the same motion."""

    loaded: Samples
    rest: F64  # the baseline's efforts, at each loaded sample
    apart: float  # the positions' RMS difference, rad or m
    shift: float  # s: the baseline's time less the loaded one's
    of: int  # loaded samples in all


def paired(loaded: Samples, baseline: Samples) -> Paired:
    """``loaded`` and ``baseline`` aligned in time: the shift whose positions differ least
    (over a whole sample period, then between samples), and the loaded samples the baseline
    covers. BagError if the two are not the same motion."""
    dt = float(np.median(np.diff(loaded.ns)))
    lo, hi = np.arange(loaded.ns[0], loaded.ns[-1], dt), np.arange(baseline.ns[0],
                                                                    baseline.ns[-1], dt)
    ql, qb = (np.column_stack([np.interp(t, s.ns, s.q[:, j]) for j in range(s.q.shape[1])])
              for t, s in ((lo, loaded), (hi, baseline)))
    least = min(len(ql), len(qb)) // 2  # the overlap: at least half the shorter
    lags = np.arange(least - len(ql), len(qb) - least + 1)
    cost = np.array([np.mean((qb[max(k, 0) : k + len(ql)] - ql[max(-k, 0) : len(qb) - k]) ** 2)
                     for k in lags])
    k = int(np.argmin(cost))
    frac = 0.0
    if 0 < k < len(cost) - 1:  # the parabola's vertex through the least and its neighbours
        c0, c1, c2 = cost[k - 1 : k + 2]
        frac = 0.5 * (c0 - c2) / max(c0 - 2 * c1 + c2, 1e-300)
    shift = hi[0] - lo[0] + (lags[k] + frac) * dt  # ns
    t = loaded.ns + shift
    near = np.searchsorted(baseline.ns, t).clip(1, len(baseline) - 1)
    gap = baseline.ns[near] - baseline.ns[near - 1]
    inside = (t >= baseline.ns[0]) & (t <= baseline.ns[-1]) & (gap < 1.5 * dt)
    at = loaded.cut(np.flatnonzero(inside))
    t = t[inside]
    q, rest = (np.column_stack([np.interp(t, baseline.ns, x[:, j]) for j in range(x.shape[1])])
               for x in (baseline.q, baseline.tau))
    apart = float(np.sqrt(np.mean((q - at.q) ** 2)))
    if apart > SAME_MOTION:
        raise BagError(f"the baseline is not the same motion as the loaded recording: aligned "
                       f"as well as they can be, their positions are {apart:.3g} rad RMS apart "
                       f"(at most {SAME_MOTION:g}): record the loaded motion again without the "
                       "load")
    return Paired(at, rest, apart, shift * 1e-9, len(loaded))


def identify_payload(paths: list[Path], out_dir: Path, opts: IdentifyOptions, link: str,
                     validate: list[Path] | None = None, baseline: list[Path] | None = None
                     ) -> tuple[Payload, str]:
    """The payload on ``link`` from ``paths``, against the URDF or against ``baseline`` (the
    same motion without the load), validated on their last ``opts.holdout`` or on
    ``validate``: ``report.txt`` into ``out_dir``; returns it and its text."""
    import scipy  # noqa: F401  (the filter: missing, said before any reading)

    if baseline and validate:
        raise BagError("--validate with --baseline: give the loaded recording and its baseline; "
                       "their last --holdout validates")
    _, model, ns, q, v, e = read(paths, opts)
    ns, q, v, e = window(ns, q, v, e, opts)
    first = 10 * payload_columns(model, link)[0]  # (a wrong link is said before any work)
    measured = measured_joints(model, e, opts.ignore_efforts)
    data = prepare(ns, q, v, e, opts.cutoff, measured)
    pair = None
    if baseline:
        data, pair = _against_baseline(baseline, opts, model, measured, data)
    rest = pair.rest if pair else _batched_rnea(model, data)
    if validate:
        _, other, ns2, q2, v2, e2 = read(validate, opts)
        if other.state_joint_names != model.state_joint_names:
            raise BagError("the validation recording's joints differ from the model's")
        train, test = data, prepare(ns2, q2, v2, e2, opts.cutoff, measured)
        rest_train, rest_test = rest, _batched_rnea(model, test)
    else:
        if not 0 < opts.holdout < 1:
            raise BagError("--holdout must be between 0 and 1")
        cut = int(len(data) * (1.0 - opts.holdout))
        train, test = data.cut(slice(0, cut)), data.cut(slice(cut, None))
        rest_train, rest_test = rest[:cut], rest[cut:]
    rows = np.flatnonzero(measured)
    payload, phi = fit_payload(model, link, train, rest_train, rows)
    explained = np.concatenate([regressor_batch(model, s.q, s.v, s.a)[:, rows, first:first + 10]
                                @ phi for s in _blocks(train)])
    unexplained = (train.tau - rest_train)[:, rows] - explained
    base = rest_test[:, rows]
    carried = base + regressor_batch(model, test.q, test.v, test.a)[:, rows, first:first + 10] @ phi
    names = [model.state_joint_names[r] for r in rows]
    before = np.sqrt(np.mean((test.tau[:, rows] - base) ** 2, axis=0))
    after = np.sqrt(np.mean((test.tau[:, rows] - carried) ** 2, axis=0))
    text = "\n".join([*_summary(link, payload, train, pair, baseline),
                      *_model_error(pair, _rms(explained), _rms(unexplained), payload), "",
                      "held-out torque RMS (N m) without the payload "
                      + ("(the baseline's)" if pair else "(the URDF's)") + " and with it:",
                      *(f"  {n:<24} {b:9.4f} {a:9.4f}"
                        for n, b, a in zip(names, before, after, strict=True)),
                      "", *_parameters(link, payload)])
    with output_set(out_dir, ".rbd-identify-outputs") as tmp:
        (tmp / "report.txt").write_text(text + "\n")
        (tmp / PAYLOAD_FILE).write_text(_parameters_file(link, payload))
    return payload, text


def _against_baseline(baseline: list[Path], opts: IdentifyOptions, model: Model,
                      measured: np.ndarray, data: Samples) -> tuple[Samples, Paired]:
    _, other, ns, q, v, e = read(baseline, opts)
    if other.state_joint_names != model.state_joint_names:
        raise BagError("the baseline recording's joints differ from the loaded one's")
    if not np.isfinite(e[:, measured]).any(axis=0).all():
        raise BagError("the baseline recording lacks efforts of joints the loaded one has")
    pair = paired(data, prepare(ns, q, v, e, opts.cutoff, measured))
    if len(pair.loaded) < pair.of // 2:
        raise BagError(f"the baseline covers {len(pair.loaded)} of the loaded recording's "
                       f"{pair.of} samples: record the whole loaded motion without the load")
    return pair.loaded, pair


def _blocks(s: Samples) -> list[Samples]:
    return [s.cut(slice(k, k + BLOCK)) for k in range(0, len(s), BLOCK)]


def _batched_rnea(model: Model, s: Samples) -> F64:
    return np.concatenate([rnea_batch(model, b.q, b.v, b.a, friction=True) for b in _blocks(s)])


def _rms(x: F64) -> float:
    return float(np.sqrt(np.mean(x**2)))


def _summary(link: str, payload: Payload, train: Samples, pair: Paired | None,
             baseline: list[Path] | None) -> list[str]:
    seconds = 1e-9 * float(train.ns[-1] - train.ns[0])
    against = (f"against the baseline {', '.join(map(str, baseline))}" if pair and baseline
               else "everything else the URDF's")
    return [
        f"payload on {link}, from {seconds:.1f} s ({len(train)} samples; {against}):",
        f"  mass            {payload.mass:10.4f} kg   +- {payload.mass_sigma:.4f}",
        "  centre of mass  " + " ".join(f"{x:+.4f}" for x in payload.com)
        + " m (in " + link + "'s frame)   +- " + " ".join(f"{x:.4f}" for x in payload.com_sigma),
        "  inertia about it, link axes (kg m^2): "
        + ", ".join(f"{n} {payload.inertia[i, j]:+.5f} +- {s:.5f}" for (n, i, j), s in zip(
            INERTIA_ENTRIES, payload.inertia_sigma, strict=True)),
        "(+-: one standard deviation, from the fit's residual; the samples taken as "
        "independent)"]


def _model_error(pair: Paired | None, explained: float, unexplained: float,
                 payload: Payload) -> list[str]:
    """What the answer owes to the robot model's error, and why it is not physical if so."""
    why = payload.not_physical()
    if pair:
        lines = [f"baseline: the same motion without the load, its stamps {pair.shift:+.3f} s "
                 f"from the loaded one's, positions {pair.apart:.2g} rad RMS apart once "
                 f"aligned, {len(pair.loaded)} of "
                 f"{pair.of} loaded samples paired: the payload's torques are the loaded "
                 "efforts less the baseline's, so the robot model's own error cancels"]
    else:
        lines = [f"the URDF's error: beside the payload's torques ({explained:.3g} N m RMS) the "
                 f"URDF and the payload leave {unexplained:.3g} N m RMS unexplained; an error of "
                 f"the URDF of that size that looks like a payload's torques could be up to "
                 f"{100 * unexplained / max(explained, 1e-300):.0f} % of this answer: record "
                 "the same motion without the load and give it with --baseline"]
    if why and not pair and unexplained > 0.1 * explained:
        lines.append(f"not physical: {why}: most likely the URDF's error (above) taken for "
                     "the payload's: give a --baseline")
    elif why:
        lines.append(f"not physical: {why}: the recording does not determine it (a small "
                     "payload's inertia is hardly seen in the torques: move the link faster, "
                     "in every orientation)")
    else:
        lines.append("physical: yes")
    return lines


#: what identify --payload writes beside report.txt: the dynamics node's parameters file
PAYLOAD_FILE = "payload.yaml"


def _parameters_file(link: str, payload: Payload) -> str:
    """The payload as the dynamics node's parameters (``--params-file``), its estimate's
    standard deviations in a comment."""
    sigma = [payload.mass_sigma, *payload.com_sigma, *payload.inertia_sigma]
    inertia = ", ".join(n for n, _, _ in INERTIA_ENTRIES)
    return "\n".join([
        "# rbd-ros identify --payload: mass (kg), centre of mass (m, in the link's frame), "
        f"inertia about it ({inertia}; kg m^2)",
        "# one standard deviation of each estimate: " + ", ".join(f"{x:.3g}" for x in sigma),
        "/**/rbd_dynamics:", "  ros__parameters:",
        *_parameters(link, payload, "    ")[1:]]) + "\n"


def _parameters(link: str, payload: Payload, indent: str = "  ") -> list[str]:
    return ["for the dynamics node's parameters" + (
        " (the inertia made physical: its principal moments moved to the nearest that a "
        "rigid body can have)" if payload.not_physical() else "") + ":",
        f"{indent}payload_link: {link}",
        f"{indent}payload: [" + ", ".join(f"{x:.6g}" for x in payload.physical().values()) + "]"]
