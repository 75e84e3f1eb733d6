"""Contacts against an independent reference: Pinocchio's frame Jacobians at the contact points
and a QP built from them, on a quadruped with round feet (ANYmal C) and a humanoid with flat
soles (Talos), standing, tilted, on a 15 degree slope and with a hand on a wall.

The reference builds everything itself: contact frames from Pinocchio's placements, the
friction cone's inscribed faces and the sole's contact wrench cone (Caron et al. 2015) in its
own code, the equality from Jacobians (RNEA = [0; tau] + sum J^T w) rather than from wrenches
moved by spatial algebra. Forces are checked against the exact cone |f_t| <= mu f_n."""

from __future__ import annotations

import math
from typing import Any, TypedDict

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef, robot_path

from rbd_ros.dynamics import Data, load_urdf
from rbd_ros.dynamics.contact.contacts import Contact, Reaction, _Cone, solve


def quadprog() -> Any:
    """quadprog, the reference QP solver (it has no rosdep key: a test that needs it skips
    without it)."""
    return pytest.importorskip("quadprog", reason="the reference QP solver: pip install "
                                                  "quadprog (no rosdep key)")


class Sole(TypedDict):
    half_length: float
    half_width: float


MU = 0.7
SOLE = Sole(half_length=0.1, half_width=0.05)
RADIUS = 0.03  # ANYmal C's foot sphere


def rot(axis: str, angle: float) -> np.ndarray:
    return np.asarray(pin.utils.rotate(axis, angle))


class Scene:
    """A robot with contacts, posed by a base placement and joint positions."""

    def __init__(self, name: str) -> None:
        self.m = load_urdf(robot_path(name), floating_base=True)
        self.d = Data(self.m)
        self.ref = PinRef(self.m, robot_path(name), True)

    def q(self, R: np.ndarray, p: np.ndarray, joints: dict[str, float] | None = None
          ) -> np.ndarray:
        q = self.m.neutral()
        q[:3] = p
        q[3:7] = pin.Quaternion(R).coeffs()  # x, y, z, w
        for name, x in (joints or {}).items():
            q[self.m.joint(name).idx_q] = x
        return q

    # ---------------------------------------------------------------- the reference
    def frames(self, q: np.ndarray, contacts: list[Contact]) -> list[tuple[np.ndarray, ...]]:
        """Per contact: (axes t1 t2 n, point, Jacobian of that point [lin; ang] world axes)."""
        pm, pd, ref = self.ref.pm, self.ref.pd, self.ref
        qp = ref.q(q)
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        out: list[tuple[np.ndarray, ...]] = []
        for c in contacts:
            fid = pm.getFrameId(c.link)
            oMl = pd.oMf[fid]
            oMc = oMl * pin.SE3(pin.rpy.rpyToMatrix(np.array(c.rpy)), np.array(c.offset))
            R, p = oMc.rotation, oMc.translation
            if not c.is_sole:
                n = np.array(c.normal) / np.linalg.norm(c.normal)
                t1 = R[:, 0] - n * (R[:, 0] @ n)
                if np.linalg.norm(t1) <= 0.1:
                    t1 = R[:, 1] - n * (R[:, 1] @ n)
                t1 /= np.linalg.norm(t1)
                R, p = np.column_stack([t1, np.cross(n, t1), n]), p - c.radius * n
            J = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED) @ ref.G
            r = p - oMl.translation
            J_lin = J[:3] - pin.skew(r) @ J[3:]
            out.append((R, p, np.vstack([J_lin, J[3:]])))
        return out

    def cone(self, c: Contact) -> np.ndarray:
        """Rows, rows @ x >= 0, of the contact's cone in its own frame."""
        rows: list[list[float]] = []
        if not c.is_sole:
            k = 8
            for i in range(k):
                t = math.pi / k * (2 * i + 1)
                rows.append([-math.cos(t), -math.sin(t), MU * math.cos(math.pi / k)])
            rows.append([0, 0, 1])
            return np.array(rows)
        # Caron, Pham, Nakamura 2015, eq. (11)-(13), corners in the inscribed pyramid
        X, Y, m = c.half_length, c.half_width, MU / math.sqrt(2)
        for s in (1, -1):
            rows += [[s, 0, m, 0, 0, 0], [0, s, m, 0, 0, 0],
                     [0, 0, Y, s, 0, 0], [0, 0, X, 0, s, 0]]
            for t in (1, -1):
                rows.append([-Y * s, -X * t, m * (X + Y), m * s, m * t, 1])
                rows.append([-Y * s, -X * t, m * (X + Y), -m * s, -m * t, -1])
        rows.append([0, 0, 1, 0, 0, 0])
        return np.array(rows, dtype=float)

    def reference(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, contacts: list[Contact]
                  ) -> tuple[np.ndarray | None, list[np.ndarray] | None, np.ndarray | None]:
        """(contact-frame wrenches or None if infeasible, per contact world wrench at the
        point, joint torques)."""
        tau_full = self.ref.rnea(q, v, a)
        frames = self.frames(q, contacts)
        blocks, cols, rows, weights = [], [], [], []
        for c, (R, _p, J) in zip(contacts, frames, strict=True):
            k = 6 if c.is_sole else 3
            E = np.zeros((6, k))  # local -> world wrench at the point
            E[:3, :3] = R
            if k == 6:
                E[3:, 3:] = R
            blocks.append(J.T @ E)
            rows.append(self.cone(c))
            weights += [1.0] * 3 + [10.0] * (k - 3)
            cols.append(k)
        n = sum(cols)
        A = np.hstack(blocks)  # generalized force of the contact wrenches
        C = np.zeros((sum(len(cr) for cr in rows), n))
        r = o = 0
        for cr, k in zip(rows, cols, strict=True):
            C[r : r + len(cr), o : o + k] = cr
            r, o = r + len(cr), o + k
        try:
            x = quadprog().solve_qp(np.diag(weights), np.zeros(n), np.vstack([A[:6], C]).T,
                                  np.r_[tau_full[:6], np.zeros(len(C))], 6)[0]
        except ValueError:
            return None, None, None
        world, o = [], 0
        for (R, _p, _J), k in zip(frames, cols, strict=True):
            w = np.r_[R @ x[o : o + 3], R @ x[o + 3 : o + 6] if k == 6 else np.zeros(3)]
            world.append(w)
            o += k
        tau = tau_full - A @ x
        return x, world, tau

    # ---------------------------------------------------------------- the check
    def check(self, q: np.ndarray, contacts: list[Contact], v: np.ndarray | None = None,
              a: np.ndarray | None = None) -> Reaction:
        m = self.m
        v = np.zeros(m.nv) if v is None else v
        a = np.zeros(m.nv) if a is None else a
        r = solve(m, self.d, q, v, a, contacts, MU)
        x, world, tau = self.reference(q, v, a, contacts)
        assert r.feasible == (x is not None), r.reason
        if x is None:
            return r
        assert world is not None and tau is not None  # feasible: all three
        tau_pin = self.ref.rnea(q, v, a)
        scale = np.abs(tau_pin).max()
        np.testing.assert_allclose(r.base_wrench, tau_pin[:6], atol=1e-9 * scale)
        frames = self.frames(q, contacts)
        pm, pd = self.ref.pm, self.ref.pd
        ours = []
        for c, (_R, p, _J) in zip(contacts, frames, strict=True):
            oMl = pd.oMf[pm.getFrameId(c.link)]
            wl = r.wrenches[c.link]  # link frame, about its origin -> world, at the point
            f = oMl.rotation @ wl[:3]
            t = oMl.rotation @ wl[3:] - np.cross(p - oMl.translation, f)
            ours.append(np.r_[f, t])
            np.testing.assert_allclose(r.points[c.link], p, atol=1e-12)
        # identities: RNEA = [0; tau] + sum J^T w, for our wrenches and our torques
        gen = sum(J.T @ w for (_R, _p, J), w in zip(frames, ours, strict=True))
        np.testing.assert_allclose(np.r_[np.zeros(6), r.tau] + gen, tau_pin, atol=1e-9 * scale)
        # the split equals the independent QP's
        for w, wr in zip(ours, world, strict=True):
            np.testing.assert_allclose(w, wr, atol=1e-6 * scale)
        np.testing.assert_allclose(r.tau, tau[6:], atol=1e-6 * scale)
        # every force in its exact cone; every centre of pressure on its sole
        for c, (R, p, _J), w in zip(contacts, frames, ours, strict=True):
            f, t = R.T @ w[:3], R.T @ w[3:]
            assert f[2] >= -1e-9 * scale
            assert np.hypot(f[0], f[1]) <= MU * f[2] + 1e-9 * scale
            if c.is_sole and f[2] > 1e-6:
                cop = R.T @ (r.cop[c.link] - p)
                assert abs(cop[0]) <= c.half_length + 1e-9 and abs(cop[1]) <= c.half_width + 1e-9
                np.testing.assert_allclose(cop, [-t[1] / f[2], t[0] / f[2], 0], atol=1e-9)
                # the yaw torque an exact cone allows at most: mu f_n times the farthest corner
                assert abs(t[2]) <= MU * f[2] * math.hypot(c.half_length, c.half_width) + 1e-9
        return r


@pytest.fixture(scope="module")
def anymal() -> Scene:
    return Scene("anymal_c")


@pytest.fixture(scope="module")
def talos() -> Scene:
    return Scene("talos")


def feet(normal: np.ndarray | tuple[float, float, float] = (0.0, 0.0, 1.0)) -> list[Contact]:
    return [Contact(f"{leg}_FOOT", radius=RADIUS, normal=tuple(normal))
            for leg in ("LF", "RF", "LH", "RH")]


SOLES = [Contact("left_sole_link", **SOLE), Contact("right_sole_link", **SOLE)]
STANCE = {"LF_HFE": 0.4, "LF_KFE": -0.8, "RF_HFE": 0.4, "RF_KFE": -0.8,
          "LH_HFE": -0.4, "LH_KFE": 0.8, "RH_HFE": -0.4, "RH_KFE": 0.8}


@pytest.mark.parametrize("tilt", [0.0, 10.0, 15.0])
def test_quadruped_round_feet(anymal: Scene, tilt: float) -> None:
    """Standing (0), the ground tilted 10 degrees under the robot and a 15 degree slope (the
    robot turned with it): normals follow the ground."""
    R = rot("y", math.radians(tilt)) @ rot("z", 0.3)
    normal = rot("y", math.radians(tilt))[:, 2]
    q = anymal.q(R, np.array([0.1, -0.2, 0.5]), STANCE)
    rng = np.random.default_rng(int(tilt))
    v = rng.normal(scale=0.2, size=anymal.m.nv)
    a = np.zeros(anymal.m.nv)
    a[0] = 4.0  # forwards, 0.4 g: the feet push sideways on the ground
    r = anymal.check(q, feet(normal), v=v, a=a)
    assert r.feasible, r.reason
    # the contact point is the sphere's, not its centre: the leg torques differ by ~r f_t
    at_centre = solve(anymal.m, anymal.d, q, v, a,
                      [Contact(c.link, normal=c.normal) for c in feet(normal)], MU)
    assert np.abs(at_centre.tau - r.tau).max() > 0.5


@pytest.mark.parametrize("case", ["standing", "tilted", "slope", "wall"])
def test_humanoid_flat_soles(talos: Scene, case: str) -> None:
    m = talos.m
    a = np.zeros(m.nv)
    contacts = list(SOLES)
    R, joints = np.eye(3), {}
    if case == "tilted":  # both soles rolled 10 degrees (the ankles), the body upright
        joints = {"leg_left_6_joint": math.radians(10), "leg_right_6_joint": math.radians(10)}
    if case == "slope":  # on a 15 degree slope (the ankles pitched), accelerating up it
        R = rot("z", 0.7)
        joints = {"leg_left_5_joint": math.radians(15), "leg_right_5_joint": math.radians(15)}
        a[0] = 0.5
    if case == "wall":  # the right hand pushes on a wall on the robot's right
        contacts.append(Contact("gripper_right_base_link", normal=(0.0, 1.0, 0.0)))
        a[1] = 5.5  # sideways, more than the feet's friction and soles allow alone
        assert not solve(m, talos.d, talos.q(R, np.array([0, 0, 1.0])), np.zeros(m.nv), a,
                         SOLES, MU).feasible
    q = talos.q(R, np.array([0.0, 0.0, 1.0]), joints)
    if joints:  # the soles really are tilted
        pin.framesForwardKinematics(talos.ref.pm, talos.ref.pd, talos.ref.q(q))
        z = talos.ref.pd.oMf[talos.ref.pm.getFrameId("left_sole_link")].rotation[:, 2]
        assert abs(math.degrees(math.acos(z[2])) - (10 if case == "tilted" else 15)) < 1e-6
    r = talos.check(q, contacts, a=a)
    assert r.feasible, r.reason
    if case == "wall":
        assert r.wrenches["gripper_right_base_link"] @ r.wrenches["gripper_right_base_link"] > 1


def test_a_sole_placed_on_the_ankle_equals_the_sole_link(talos: Scene) -> None:
    """A URDF without a sole link: the same sole, given as an offset and rpy on the ankle."""
    pm, pd = talos.ref.pm, talos.ref.pd
    q = talos.q(rot("z", 0.4), np.array([0.3, 0.1, 1.0]))
    pin.framesForwardKinematics(pm, pd, talos.ref.q(q))
    ankles = []
    for side in ("left", "right"):
        aMs = pd.oMf[pm.getFrameId(f"leg_{side}_6_link")].actInv(
            pd.oMf[pm.getFrameId(f"{side}_sole_link")])
        ankles.append(Contact(f"leg_{side}_6_link", offset=tuple(aMs.translation),
                              rpy=tuple(pin.rpy.matrixToRpy(aMs.rotation)), **SOLE))
    assert np.linalg.norm(ankles[0].offset) > 0.05  # the ankle is well above the sole
    rng = np.random.default_rng(5)
    v = rng.normal(scale=0.3, size=talos.m.nv)
    a = rng.normal(scale=0.3, size=talos.m.nv)
    by_sole = talos.check(q, SOLES, v=v, a=a)
    by_ankle = talos.check(q, ankles, v=v, a=a)
    assert by_sole.feasible, by_sole.reason
    np.testing.assert_allclose(by_ankle.tau, by_sole.tau, atol=1e-6)
    for s, an in zip(SOLES, ankles, strict=True):
        np.testing.assert_allclose(by_ankle.cop[an.link], by_sole.cop[s.link], atol=1e-9)


@pytest.mark.parametrize("robot", ["anymal", "talos"])
def test_feasibility_does_not_depend_on_heading(robot: str, request: pytest.FixtureRequest) -> None:
    """Rotate the whole scene about the vertical: the same answer (wrenches in link frames),
    the same verdict, for accelerations around the limit in every direction."""
    s: Scene = request.getfixturevalue(robot)
    contacts = feet() if robot == "anymal" else SOLES
    joints = STANCE if robot == "anymal" else {}
    verdicts = set()
    for heading in np.linspace(0, 2 * math.pi, 12, endpoint=False):
        for g in (0.05, 0.3, 0.6, 0.9):
            a = np.zeros(s.m.nv)  # base frame: horizontal, as the base is upright
            a[:2] = 9.81 * g * np.array([math.cos(heading), math.sin(heading)])
            results = []
            for yaw in (0.0, 1.1, -2.5):
                # the turned robot makes the turned motion: the same base-frame acceleration
                q = s.q(rot("z", yaw), np.array([0.0, 0.0, 1.0]), joints)
                results.append(solve(s.m, s.d, q, np.zeros(s.m.nv), a, contacts, MU))
            verdicts.add(results[0].feasible)
            for r in results[1:]:
                assert r.feasible == results[0].feasible, (heading, g)
                assert r.reason == results[0].reason
                for c in contacts:
                    if r.feasible:
                        np.testing.assert_allclose(r.wrenches[c.link],
                                                   results[0].wrenches[c.link], atol=1e-7)
    assert verdicts == {True, False}  # the sweep crossed the limit


def test_caron_cone_equals_forces_at_the_corners() -> None:
    """The sole's face form (Caron's closed form) against its definition: a wrench is in the
    cone iff forces at the four corners, each in the inscribed pyramid, add up to it."""
    c = Contact("sole", half_length=0.11, half_width=0.06)
    cone = _Cone(c, MU)
    m = MU / math.sqrt(2)
    corners = [(sx * c.half_length, sy * c.half_width) for sx in (1, -1) for sy in (1, -1)]
    # span: w = sum_i (f_i, p_i x f_i) with |f_ix|, |f_iy| <= m f_iz
    S = np.zeros((6, 12))
    for i, (x, y) in enumerate(corners):
        S[:3, 3 * i : 3 * i + 3] = np.eye(3)
        S[3:, 3 * i : 3 * i + 3] = pin.skew(np.array([x, y, 0.0]))
    P = []
    for i in range(4):
        for row in ([1, 0, m], [-1, 0, m], [0, 1, m], [0, -1, m], [0, 0, 1]):
            full = np.zeros(12)
            full[3 * i : 3 * i + 3] = row
            P.append(full)
    C = np.vstack([S, np.array(P)]).T
    rng = np.random.default_rng(0)
    agree = inside = tried = 0
    for _ in range(600):
        w = np.r_[rng.normal(size=2) * 0.4, 1.0, rng.normal(size=3) * [0.04, 0.08, 0.05]]
        face = np.min(cone.rows @ w - cone.lower)
        try:
            quadprog().solve_qp(np.eye(12), np.zeros(12), C, np.r_[w, np.zeros(20)], 6)
            span = True
        except ValueError:
            span = False
        if abs(face) < 1e-9:
            continue  # on the boundary
        tried += 1
        agree += span == (face > 0)
        inside += span
    assert agree == tried > 590
    assert 50 < inside < tried - 50  # the samples straddle the boundary
