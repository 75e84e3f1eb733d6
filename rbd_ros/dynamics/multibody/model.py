"""The immutable kinematic-tree ``Model`` and its preallocated ``Data``.

A model is a tree of rigid *bodies*. Links joined by fixed joints are merged into one body (their
frames are kept, so they can still be named); every other joint moves one body relative to its
parent. Coordinates come in two sets:

* *full* coordinates: one per moving joint, mimic joints included; the kernels work in these;
* *reduced* (independent) coordinates: mimic joints removed. Every public function takes and
  returns reduced coordinates, so ``q``, ``v`` and ``tau`` map 1:1 to the independent joints of
  ``/joint_states``. A mimic joint follows ``q_m = multiplier * q_src + offset`` exactly.

Sizes: ``nq`` / ``nv`` (reduced), ``nq_full`` / ``nv_full``. A free-flyer root takes the first 7
positions ``[x y z qx qy qz qw]`` and the first 6 velocities ``[vx vy vz wx wy wz]``, both the
linear and the angular velocity expressed in the base frame (Pinocchio's convention).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..errors import ModelError
from . import _entry
from .layout import (
    INERTIA_SIZE,
    M6_BODY,
    MAPS_HEADER,
    MAPS_NB,
    MAPS_NMIMIC,
    MAPS_NMIMIC_BODIES,
    MAPS_NQF,
    MAPS_NV,
    MAPS_NVF,
    MF_ARMATURE,
    MF_I,
    MF_MASS,
    MF_S,
    MF_WIDTH,
    MI_WIDTH,
    W_A,
    W_F,
    W_V,
    W_WIDTH,
    W_X,
)

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


@dataclass(frozen=True)
class Joint:
    """One joint with coordinates, as a user names it (fixed joints have none): ``model.joint(
    name)``. Its URDF limits (``lower``, ``upper``, ``velocity``, ``effort``; inf where none),
    ``<dynamics damping friction>``, ``<mimic>`` as (source, multiplier, offset), and
    ``armature``, its motor's rotor inertia times the gear ratio squared (Pinocchio's
    ``model.armature`` of its coordinate; set with :meth:`Model.with_armature`)."""

    name: str
    kind: str  # revolute, continuous, prismatic, planar, floating
    idx_q: int  # first reduced position index, or -1 for a mimic joint
    idx_v: int  # first reduced velocity index, or -1 for a mimic joint
    nq: int
    nv: int
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: tuple[str, float, float] | None = None  # (source joint, multiplier, offset)
    armature: float = 0.0  # the motor's rotor inertia times its gear ratio squared


@dataclass(frozen=True)
class Frame:
    """A named URDF link: the body it belongs to and its pose in that body's frame."""

    name: str
    body: int
    rotation: F64  # link axes in body coordinates (3x3)
    translation: F64  # link origin in body coordinates


@dataclass(frozen=True, eq=False)
class Model:
    """Immutable kinematic tree. Build it with :func:`rbd_ros.dynamics.multibody.urdf.load_urdf`."""

    name: str
    nq: int
    nv: int
    nq_full: int
    nv_full: int
    mi: I64  # (nb, 4): parent, joint type, first full q index, first full v index
    mf: F64  # (nb, MF_WIDTH), see MF_* offsets
    qsrc: I64  # (nq_full,) reduced index each full position follows
    qlin: F64  # (nq_full, 2) multiplier and offset
    vsrc: I64  # (nv_full,) reduced index each full velocity follows
    vmul: F64  # (nv_full,) multiplier
    vfull: I64  # (nv,) full index of each reduced velocity
    mimic_rows: I64  # full velocity indices of mimic joints
    mimic_bodies: I64  # bodies from the root to any mimic joint or its source, sorted
    mimic_group: I64  # (nb,) ABA's one-coordinate groups, see urdf.mimic_groups
    gravity: F64  # (3,)
    joints: tuple[Joint, ...]
    body_names: tuple[str, ...]  # the link each body stands for
    body_joints: tuple[str, ...]  # the joint that moves each body
    frames: dict[str, Frame] = field(repr=False)
    has_free_flyer: bool = False

    maps: I64 = field(init=False, repr=False)  # the integer maps the kernels read, packed
    lin: F64 = field(init=False, repr=False)  # gravity and the mimic maps' multipliers, packed

    def __post_init__(self) -> None:
        header = [self.nq_full, self.nv_full, self.nv, len(self.mimic_rows),
                  len(self.mimic_bodies), self.mi.shape[0], self.nq]  # see layout.MAPS_*
        # where each full coordinate's row sits in CRBA's full H: the independent ones at their
        # reduced index, the mimic ones after them (see crba_core)
        vpos = self.vsrc.copy()
        vpos[self.mimic_rows] = self.nv + np.arange(len(self.mimic_rows))
        maps = np.concatenate([np.array(header), self.qsrc, self.vsrc, self.vfull,
                               self.mimic_rows, self.mimic_bodies, np.arange(self.mi.shape[0]),
                               self.mimic_group, vpos])
        lin = np.concatenate([self.gravity, self.qlin[:, 0], self.qlin[:, 1], self.vmul])
        object.__setattr__(self, "maps", maps.astype(np.int64))
        object.__setattr__(self, "lin", lin.astype(np.float64))
        for a in (self.mi, self.mf, self.qsrc, self.qlin, self.vsrc, self.vmul, self.vfull,
                  self.mimic_rows, self.mimic_bodies, self.mimic_group, self.gravity, self.maps,
                  self.lin):
            a.setflags(write=False)

    # ------------------------------------------------------------------ derived views
    @property
    def nb(self) -> int:
        return int(self.mi.shape[0])

    @property
    def parents(self) -> I64:
        """Each body's parent body (-1: the world); a parent comes before its children."""
        return self.mi[:, 0]

    @property
    def joint_types(self) -> I64:
        """The kind of each body's joint: spatial.JOINT_REVOLUTE, JOINT_PRISMATIC or
        JOINT_FREE."""
        return self.mi[:, 1]

    @property
    def S(self) -> F64:
        """(nb, 6): the motion subspace ``[omega; v]`` of each body's one-coordinate joint, in
        the body's frame (a free joint's is the identity, not stored)."""
        return self.mf[:, MF_S : MF_S + 6]

    @property
    def inertias(self) -> F64:
        """(nb, 6, 6): each body's spatial inertia in its own frame (Featherstone order)."""
        return self.mf[:, MF_I : MF_I + INERTIA_SIZE].reshape(self.nb, 6, 6)

    @property
    def joint_names(self) -> list[str]:
        """Names of the independent joints in the order of ``v`` (a free flyer counts once)."""
        return [j.name for j in self.joints if j.idx_v >= 0]

    @property
    def state_joint_names(self) -> list[str]:
        """The independent 1-DOF joints, in the order of ``v``: what /joint_states carries."""
        return [j.name for j in self.joints if j.idx_v >= 0 and j.nv == 1]

    @property
    def mimic_joint_names(self) -> list[str]:
        return [j.name for j in self.joints if j.mimic is not None]

    def joint(self, name: str) -> Joint:
        """The :class:`Joint` named ``name``; ModelError listing the joints if the model has
        none of that name."""
        for j in self.joints:
            if j.name == name:
                return j
        raise ModelError(f"model '{self.name}' has no joint '{name}'; joints: {self.joint_names}")

    @property
    def total_mass(self) -> float:
        return float(self.mf[:, MF_MASS].sum())

    def body_inertia(self, body: int) -> F64:
        """6x6 spatial inertia of ``body`` in its own frame (Featherstone order)."""
        return np.array(self.mf[body, MF_I : MF_I + INERTIA_SIZE].reshape(6, 6))

    def with_gravity(self, gravity: F64 | list[float]) -> Model:
        return dataclasses.replace(self, gravity=check_gravity(gravity))

    def with_payload(self, link: str, payload: Sequence[float]) -> Model:
        """This model carrying a rigid payload fixed to ``link``: ``payload`` is its mass (kg),
        centre of mass x, y, z (m, in the link's frame) and inertia about it ixx, ixy, ixz,
        iyy, iyz, izz (kg m^2, link axes), as ``rbd-ros identify --payload`` gives them.
        ModelError saying why when the link has no body to carry it or no rigid body has
        these parameters."""
        from .spatial import spatial_inertia

        mass, com, inertia = payload_parts(payload)
        frame = self.carrier(link)
        R, p = frame.rotation, frame.translation  # the link in its body's frame
        mf = self.mf.copy()
        mf[frame.body, MF_I : MF_I + INERTIA_SIZE] += spatial_inertia(
            mass, R @ com + p, R @ inertia @ R.T).reshape(-1)
        return dataclasses.replace(self, mf=mf)

    def with_armature(self, armature: Mapping[str, float]) -> Model:
        """This model with each named joint's armature (the motor's rotor inertia times its
        gear ratio squared: kg m^2, kg for a prismatic joint; Pinocchio's ``model.armature``)
        set to the value given, in place of the URDF's; the other joints keep theirs.
        ModelError saying which when a name is not a revolute, continuous or prismatic joint of
        the model, or a value is not finite and >= 0."""
        mf, by_name = self.mf.copy(), {j.name: j for j in self.joints}
        for name, value in armature.items():
            j = by_name.get(name)
            if j is None or j.nv != 1 or j.kind not in ("revolute", "continuous", "prismatic"):
                raise ModelError(
                    f"armature for '{name}': " + (
                        f"model '{self.name}' has no such joint; joints: {self.joint_names}"
                        if j is None else f"it is a {j.kind} joint; only revolute, continuous "
                        "and prismatic joints have one"))
            try:
                x = float(value)
            except (TypeError, ValueError):
                x = math.nan
            if not (math.isfinite(x) and x >= 0.0):
                raise ModelError(f"armature for '{name}' is {value!r}: it must be a finite "
                                 "number >= 0 (kg m^2; kg for a prismatic joint)")
            mf[self.body_joints.index(name), MF_ARMATURE] = x
            by_name[name] = dataclasses.replace(j, armature=x)
        return dataclasses.replace(self, mf=mf, joints=tuple(by_name.values()))

    def frame(self, link: str) -> Frame:
        """The frame of ``link``; ModelError naming the links if the model has none of that
        name."""
        frame = self.frames.get(link)
        if frame is None:
            raise ModelError(f"model '{self.name}' has no link '{link}'; links: "
                             f"{sorted(self.frames)}")
        return frame

    def carrier(self, link: str) -> Frame:
        """The frame of ``link``, which must move to carry a payload: ModelError if the model
        has no such link or it is fixed to the world."""
        frame = self.frame(link)
        if frame.body < 0:
            raise ModelError(f"link '{link}' is fixed to the world: a payload there moves "
                             "nothing")
        return frame

    def neutral(self) -> F64:
        """Zero joint positions (identity orientation for a free flyer and every floating joint),
        mimic joints excluded."""
        q = np.zeros(self.nq)
        for j in self.joints:
            if j.kind == "floating" and j.idx_q >= 0:
                q[j.idx_q + 6] = 1.0
        return q

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for j in self.joints:
            kinds[j.kind] = kinds.get(j.kind, 0) + 1
        lines = [
            f"model '{self.name}': {len(self.frames)} links, {self.nb} bodies, nq={self.nq}, "
            f"nv={self.nv} (full nq={self.nq_full}, nv={self.nv_full}), "
            f"mass {self.total_mass:.3f} kg, gravity {self.gravity.tolist()}",
            "joints: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())),
        ]
        if self.mimic_joint_names:
            lines.append("mimic joints: " + ", ".join(self.mimic_joint_names))
        rotors = [f"{j.name} {j.armature:.4g}" for j in self.joints if j.armature]
        if rotors:
            lines.append("armatures (rotor inertia x gear ratio^2, kg m^2): " + ", ".join(rotors))
        return "\n".join(lines)

    def check_vector(self, x: object, n: int, what: str) -> F64:
        """``x`` as a contiguous float64 vector of length ``n``, or ModelError saying why not."""
        if type(x) is np.ndarray and x.dtype is _F64 and x.shape == (n,) and x.strides == (8,):
            return x  # the common case, checked in a few hundred nanoseconds
        a = np.asarray(x, dtype=np.float64)
        if a.ndim != 1 or a.shape[0] != n:
            raise ModelError(
                f"{what} must have {n} entries for model '{self.name}', got shape {a.shape}"
            )
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        return a

    def check_state(self, q: object, v: object, x: object, x_name: str) -> tuple[F64, F64, F64]:
        """``q`` (nq), ``v`` and ``x`` (nv each) as :meth:`check_vector` returns them."""
        return (self.check_vector(q, self.nq, "q"), self.check_vector(v, self.nv, "v"),
                self.check_vector(x, self.nv, x_name))

    def check_batch(self, x: object, n: int, what: str, batch: int | None = None) -> F64:
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != n or (batch is not None and a.shape[0] != batch):
            want = f"({batch if batch is not None else 'B'}, {n})"
            raise ModelError(
                f"{what} must have shape {want} for model '{self.name}', got {a.shape}"
            )
        return a

    def batch_out(self, out: F64 | None, shape: tuple[int, ...]) -> F64:
        """A batch's output array: ``out`` if given (reused, no allocation), else a new one."""
        if out is None:
            return np.empty(shape)
        if not (isinstance(out, np.ndarray) and out.dtype == np.float64
                and out.shape == shape and out.flags.c_contiguous):
            raise ModelError(f"out must be a C-contiguous float64 array of shape {shape}, got "
                             f"{getattr(out, 'shape', type(out).__name__)}")
        return out

    def check_fext(self, f_ext: object | None) -> F64:
        """External wrenches per body, shape (nb, 6), each ``[force; torque]`` in the body frame."""
        if f_ext is None:
            return NO_FEXT
        a = np.ascontiguousarray(f_ext, dtype=np.float64)
        if a.shape != (self.nb, 6):
            raise ModelError(
                f"f_ext must have shape ({self.nb}, 6) (one [force; torque] per body of model "
                f"'{self.name}'), got {a.shape}"
            )
        return a

    def link_wrenches(self, wrenches: dict[str, F64]) -> F64:
        """External forces per body (the ``f_ext`` of the algorithms) from wrenches
        ``[force; torque]`` acting at a link's origin, expressed in that link's frame.

        A wrench on a link fixed to the world moves nothing and is dropped."""
        f = np.zeros((self.nb, 6))
        for link, w in wrenches.items():
            frame = self.frame(link)
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (6,) or not np.all(np.isfinite(w)):
                raise ModelError(f"the wrench on link '{link}' must be 6 finite numbers")
            if frame.body < 0:
                continue
            force = frame.rotation @ w[:3]
            f[frame.body, :3] += force
            f[frame.body, 3:] += frame.rotation @ w[3:] + np.cross(frame.translation, force)
        return f

    def require_free_flyer(self) -> None:
        if not self.has_free_flyer:
            raise ModelError(f"model '{self.name}' has no free-flyer root: load it with "
                             "floating_base=True to use floating-base dynamics")


NO_FEXT = np.zeros((0, 6))  # no external wrench: Model.check_fext(None)
_F64 = np.dtype(np.float64)


def payload_parts(payload: Sequence[float]) -> tuple[float, F64, F64]:
    """A payload's 10 numbers (:meth:`Model.with_payload`) as its mass, centre of mass and
    3x3 inertia about it; ModelError saying why when they are not a rigid body's."""
    from .spatial import rigid_body_problem

    values = np.asarray(payload, dtype=np.float64)
    if values.shape != (10,):
        raise ModelError("a payload is 10 numbers (mass, centre of mass x y z, inertia ixx ixy "
                         f"ixz iyy iyz izz), got {values.size}")
    xx, xy, xz, yy, yz, zz = values[4:]
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    why = rigid_body_problem(float(values[0]), inertia)
    if not np.all(np.isfinite(values[1:4])):
        why = "its centre of mass must be finite"
    if why:
        raise ModelError(f"the payload is not a rigid body: {why}")
    return float(values[0]), values[1:4], inertia


def check_gravity(gravity: object) -> F64:
    """Gravity as 3 finite numbers (m/s^2), or ModelError saying what it got."""
    g = np.asarray(gravity, dtype=np.float64).reshape(-1)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ModelError(f"gravity must be 3 finite numbers, got {g.tolist()}")
    return g


class Direct:
    """A compiled kernel called through its entry point, without numba's per-call dispatch
    (which types every argument again: ~30 ns an argument, a fifth of a small robot's call).

    ``call`` resolves the entry point for its first arguments' types (loading it from the
    cache or compiling it, as the dispatcher would), then is that entry point. Every later call
    must pass the same types, as the per-call wrappers do: arrays they checked or allocated,
    the model's and the data's arrays, and a bool."""

    __slots__ = ("call", "kernel")

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.call: Callable[..., Any] = self._first

    def _first(self, *args: Any) -> Any:
        from numba import typeof

        types = tuple(typeof(a) for a in args)  # type: ignore[no-untyped-call]
        self.call = self.kernel.compile(types)
        return self.call(*args)


@njit(cache=True, inline="always")
def map_views(maps, lin):
    """Views into a model's packed ``maps`` and ``lin``: qsrc, vsrc, vfull, mimic_rows,
    mimic_bodies, all_bodies, gravity, qmul, qoff, vmul (1-D slices only: cheap in numba)."""
    nqf, nvf, nv, nb = maps[MAPS_NQF], maps[MAPS_NVF], maps[MAPS_NV], maps[MAPS_NB]
    m, L = maps[MAPS_NMIMIC], maps[MAPS_NMIMIC_BODIES]
    o = MAPS_HEADER
    qsrc = maps[o : o + nqf]
    o += nqf
    vsrc = maps[o : o + nvf]
    o += nvf
    vfull = maps[o : o + nv]
    o += nv
    mimic_rows = maps[o : o + m]
    o += m
    mimic_bodies = maps[o : o + L]
    o += L
    all_bodies = maps[o : o + nb]
    grav = lin[0:3]
    qmul = lin[3 : 3 + nqf]
    qoff = lin[3 + nqf : 3 + 2 * nqf]
    vmul = lin[3 + 2 * nqf : 3 + 2 * nqf + nvf]
    return qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul


@njit(cache=True, inline="always")
def _after_bodies(maps):
    """Where ``mimic_group`` starts in ``maps``: after the maps :func:`map_views` reads."""
    return (MAPS_HEADER + maps[MAPS_NQF] + maps[MAPS_NVF] + maps[MAPS_NV] + maps[MAPS_NMIMIC]
            + maps[MAPS_NMIMIC_BODIES] + maps[MAPS_NB])


@njit(cache=True)
def group_view(maps):
    """The model's ``mimic_group`` codes, packed after ``all_bodies`` in ``maps``."""
    o = _after_bodies(maps)
    return maps[o : o + maps[MAPS_NB]]


@njit(cache=True, inline="always")
def vpos_view(maps):
    """Where each full coordinate's row sits in CRBA's full H (after ``mimic_group``)."""
    o = _after_bodies(maps) + maps[MAPS_NB]
    return maps[o : o + maps[MAPS_NVF]]


@njit(cache=True, inline="always")
def work_vectors(maps, wv):
    """Views into a ``Data.wv``: full q, v, a, tau (qf, vf, af, tf), then x, y, rhs."""
    nqf, nvf, m = maps[MAPS_NQF], maps[MAPS_NVF], maps[MAPS_NMIMIC]
    nf = max(nqf, nvf, 1)
    return (wv[0:nf], wv[nf : 2 * nf], wv[2 * nf : 3 * nf], wv[3 * nf : 4 * nf],
            wv[4 * nf : 4 * nf + nvf], wv[4 * nf + nvf : 4 * nf + 2 * nvf],
            wv[4 * nf + 2 * nvf : 4 * nf + 2 * nvf + m])


@njit(cache=True)
def mimic_scratch(maps, wv):
    """The (nv_full, nv_full) matrix after :func:`work_vectors` in a ``Data.wv`` of a model
    with mimic joints."""
    nqf, nvf, m = maps[MAPS_NQF], maps[MAPS_NVF], maps[MAPS_NMIMIC]
    o = 4 * max(nqf, nvf, 1) + 2 * nvf + m
    return wv[o : o + nvf * nvf].reshape((nvf, nvf))


def _shape(model: Model) -> tuple[int, ...]:
    """What the sizes of a :class:`Data`'s arrays depend on."""
    return model.nb, model.nq_full, model.nv_full, len(model.mimic_rows)


class Data:
    """Preallocated work arrays for one model; one ``Data`` per thread.

    After a call of :func:`~rbd_ros.dynamics.rnea`, ``Xup``, ``v``, ``a`` and ``f`` hold each
    body's transform from its parent, spatial velocity, acceleration and force (Featherstone
    order, body frame). Each algorithm keeps its other terms in slots of its own (see
    :mod:`.layout`)."""

    def __init__(self, model: Model) -> None:
        nb = model.nb
        self.W = np.zeros((nb, W_WIDTH))
        self.M6 = np.zeros((nb + 1, *M6_BODY))  # per body IA, U^T, D^-1; the last: scratch
        nvf, m = model.nv_full, len(model.mimic_rows)  # mimic joints: CRBA's full H (mimic_scratch)
        self.wv = np.zeros(4 * max(model.nq_full, nvf, 1) + 2 * nvf + m + (nvf * nvf if m else 0))
        self._bind(model)

    def _bind(self, model: Model) -> None:
        """Serve ``model``: the handle of its arrays and these for the per-call rnea, aba and
        crba (see :mod:`.entry`)."""
        nb = model.nb
        for name, array, shape in (("mi", model.mi, (nb, MI_WIDTH)),
                                   ("mf", model.mf, (nb, MF_WIDTH)), ("W", self.W, (nb, W_WIDTH)),
                                   ("M6", self.M6, (nb + 1, *M6_BODY))):
            if array.shape != shape:
                raise ModelError(f"{name} has shape {array.shape}, the layout says {shape}")
        self.model, self.entry = model, _entry.handle(model, model.mi, model.mf, model.maps,
                                                      model.lin, self.W, self.M6, self.wv,
                                                      model.nq, model.nv)

    def __getstate__(self) -> dict[str, Any]:
        """A copy or a pickle (another process) without the handle, whose pointers are this
        object's arrays': :meth:`__setstate__` makes the copy's own."""
        return {k: v for k, v in self.__dict__.items() if k != "entry"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind(self.model)

    def again(self, function: Any, model: Model, *args: Any) -> Any:
        """``function`` (``_entry.rnea``, ``aba`` or ``crba``) called again after it returned
        None, with ``args`` after the handle and the model: the inputs checked as :class:`Model`
        checks them (converted, or the error that says what is wrong raised). None again: the
        kernel's status, in ``self.entry.status``."""
        if self.model is not model:  # another model of the same shape (with_gravity) is fine
            if _shape(self.model) != _shape(model):
                raise ModelError(f"this Data was made for model '{self.model.name}', which is "
                                 f"not the shape of '{model.name}': make one with Data(model) "
                                 "for each model")
            self._bind(model)
        if function is _entry.crba:
            args = (model.check_vector(args[0], model.nq, "q"),)
        else:
            q, v, x, fext, friction = args  # fext: checked already (Model.check_fext)
            x_name = "a" if function is _entry.rnea else "tau"
            args = (*model.check_state(q, v, x, x_name), fext, friction)
        return function(self.entry, model, *args)

    @property
    def Xup(self) -> F64:
        return self.W[:, W_X : W_X + 12]

    @property
    def v(self) -> F64:
        return self.W[:, W_V : W_V + 6]

    @property
    def a(self) -> F64:
        return self.W[:, W_A : W_A + 6]

    @property
    def f(self) -> F64:
        return self.W[:, W_F : W_F + 6]
