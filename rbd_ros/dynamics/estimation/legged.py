"""A legged robot's inputs paired by stamp and answered, state by state: the one path from
joint states, odometry and an IMU to the contacts in touch, their reactions, the joint torques,
flight's accelerations and the balance. The floating-base node runs it on live messages and
``rbd-ros analyze`` on a recording's, in the recording's order, so both give the same answer
for the same inputs.

Each joint state is paired with the odometry (and, once an IMU has spoken, the IMU) of its own
stamp: interpolated between the samples before and after it (the pose along the shortest
arc). A state newer than the newest odometry waits for the next one, at most ``timeout``; then
the nearest odometry is used if it is at most ``timeout`` from the state's stamp (the answer's
status says "ok; odometry held from ... ms before ..."), else the state is not answered and
the status says which input is stale. The clock of that wait is the caller's: a node's
monotonic time, a recording's log time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..algorithm.floating import base_acceleration_from_imu, forward_dynamics
from ..contact.balance import Balance, Support
from ..contact.contacts import Contact, Reaction, Split, check_contacts
from ..errors import RbdError
from ..multibody.configuration import interpolate_base
from ..multibody.model import F64, Data, Model
from .contact_estimation import ContactEstimate, ContactEstimator, StandingSecond, ThresholdProposal
from .timeline import Timeline

#: the floating-base node's defaults: the ground's Coulomb friction, how long a joint state
#: waits for the odometry (and IMU) of its stamp (s)
DEFAULT_FRICTION = 0.7
DEFAULT_TIMEOUT = 0.05
#: and the frame of its world outputs
WORLD_FRAME = "odom"


@dataclass
class Pending:
    """A joint state waiting for the odometry (and IMU) of its stamp; ``q``, ``v`` and
    ``effort`` in the model's order (the base's part filled in when it is paired)."""

    t: int  # its stamp, ns
    q: F64
    v: F64
    effort: F64
    arrived: float  # on the caller's clock, s


@dataclass
class Answer:
    """What one joint state gives: ``status`` is what the floating-base node's ``~/status``
    says for it ("ok" or "flight", with notes; else why there is no answer), and the parts
    computed for it (None: not computed)."""

    t: int  # the joint state's stamp, ns
    status: str = ""
    warning: tuple[str, str] | None = None  # (key, text) for a throttled warning
    estimate: ContactEstimate | None = None  # the contacts estimated from the efforts
    proposal: ThresholdProposal | None = None  # a contact_threshold from the first second
    #                                            the robot stood (once)
    flight: tuple[F64, F64] | None = None  # (base acceleration, joint accelerations)
    reaction: Reaction | None = None
    balance: Balance | None = None
    contacts: list[str] = field(default_factory=list)  # the contact links in touch


class Legged:
    """Everything that depends on the model and the contact set; a new model or contact set
    is a new one. ``estimator``: the contact estimator's settings (gain, threshold, release,
    max_speed), or None to take the contacts from :attr:`active`."""

    def __init__(self, model: Model, contacts: list[Contact], mu: float, timeout: float,
                 estimator: dict[str, float] | None = None) -> None:
        check_contacts(model, contacts, mu)
        self.model, self.contacts, self.mu = model, contacts, mu
        #: which contacts touch, from the efforts (None: from :attr:`active`)
        self.estimator = None if estimator is None else \
            ContactEstimator(model, contacts, **estimator)
        # a contact_threshold proposed from the first second the robot stands (once)
        self.standing = None if self.estimator is None else StandingSecond(self.estimator)
        self.support = Support(model, contacts)  # ZMP, capture point, support polygon
        self.timeout, self.max_age = timeout, int(timeout * 1e9)
        self.data = Data(model)
        self.names = list(model.state_joint_names)
        self.v_index = np.array([model.joint(n).idx_v for n in self.names], dtype=np.int64)
        self.active = {c.link for c in contacts}
        self.acc = np.zeros(model.nv)  # the base's acceleration, then the joints'
        self.qdd = self.acc[6:]  # the desired joint accelerations
        self.odom = Timeline("odometry", interpolate_base)
        self.imu = Timeline("IMU", lambda a, b, s: a + s * (b - a))  # specific force
        self.pending: deque[Pending] = deque(maxlen=1000)
        # the split of each contact set in touch, kept (its QP's constant part, its arrays);
        # the whole set's built now, not on a state
        self._splits: dict[frozenset[str], Split] = {}
        self._last: tuple[set[str] | None, Split | None] = (None, None)
        self._split_of(self.active)

    def _split_of(self, active: set[str]) -> Split | None:
        """The kept split for the contact links in ``active`` (None: no contact is); the
        same set as the last call's (each change makes a new one) without a lookup."""
        if active is self._last[0]:
            return self._last[1]
        key = frozenset(active)
        split = self._splits.get(key)
        if split is None:
            contacts = [c for c in self.contacts if c.link in key]
            if not contacts:
                return None
            split = Split(self.model, contacts, self.mu)
            if len(self._splits) < 64:  # 2^k sets of k contacts; a robot has a few
                self._splits[key] = split
        self._last = (active, split)
        return split

    def touching(self, links: Sequence[str]) -> tuple[str, str] | None:
        """The contact links in touch from now on (an ``active_contacts`` message); None, or
        (key, warning) why it is not taken."""
        if self.estimator is not None:
            return ("active_ignored", "ignored active_contacts: estimate_contacts is true, so "
                                      "the node finds the contacts from the efforts")
        known = {c.link for c in self.contacts}
        unknown = [x for x in links if x not in known]
        if unknown:
            return ("bad_active", f"dropped active_contacts: {unknown} are not contact links "
                                  f"{sorted(known)}")
        self.active = set(links)
        return None

    def without_effort(self, p: Pending) -> list[str]:
        """The joints whose effort the joint states have not given (NaN) for ``p``."""
        nan = np.isnan(p.effort[self.v_index])
        return [self.names[k] for k in np.flatnonzero(nan)] if nan.any() else []

    def ready(self, now: float) -> Iterator[tuple[Pending, F64 | None, str] | Answer]:
        """The waiting joint states, in order, whose odometry (and IMU) is known or whose wait
        is over at ``now``: each as (state with the base's pose and twist filled in, specific
        force or None, notes), or as an Answer saying why it has none (a stale input)."""
        imu = bool(self.imu.stamps)  # once an IMU has spoken, its samples are awaited too
        while self.pending:
            p = self.pending[0]
            if now - p.arrived < self.timeout and not (
                    self.odom.covers(p.t) and (not imu or self.imu.covers(p.t))):
                return
            self.pending.popleft()
            x, note = self.odom.at(p.t, self.max_age)
            f, imu_note = self.imu.at(p.t, self.max_age) if imu else (None, "")
            if x is None or (imu and f is None):
                said = note if x is None else imu_note
                yield Answer(p.t, said, ("stale", f"no answer for a joint state: {said}"))
                continue
            p.q[:7], p.v[:6] = x[:7], x[7:]
            notes = f"{note}, {imu_note}" if note and imu_note else note or imu_note
            yield p, f, f"; {notes}" if notes else ""

    def answer(self, p: Pending, specific_force: F64 | None, note: str,
               balance: bool = True) -> Answer:
        """The answer for a paired joint state (``balance``: with the balance indicators, about
        10 us more). Its reaction's arrays are this Legged's, overwritten by the next answer."""
        out = Answer(p.t)
        m = self.model
        if self.estimator is not None and not self._estimate(p, out):
            return out
        split = self._split_of(self.active)
        if split is None:  # flight: base and joints move under the measured efforts
            missing = self.without_effort(p)
            if missing:
                out.status = f"flight, but the joint states carry no effort for {missing}"
                return out
            out.flight = forward_dynamics(m, self.data, p.q, p.v, p.effort[6:])
            out.status = "flight" + note
            return out
        out.contacts = split.links
        self.acc[:6] = 0.0 if specific_force is None else \
            base_acceleration_from_imu(m, p.q, p.v, specific_force)
        r = split(self.data, p.q, p.v, self.acc)
        if not r.feasible:
            out.warning = ("impossible", f"impossible with contacts {out.contacts}: {r.reason}")
            out.status = r.reason
            return out
        out.reaction = r
        outside = False
        if balance:
            out.balance = b = self.support.balance(r)
            outside = b.capture_point is not None and b.capture_point_margin < 0
        out.status = "ok" + note + (STEP_NEEDED if outside else "")
        return out

    def _estimate(self, p: Pending, out: Answer) -> bool:
        """The contacts that touch, from this state's efforts, into :attr:`active` and
        ``out``; False (``out.status`` says why) when the state cannot give them."""
        estimator = self.estimator
        assert estimator is not None
        missing = self.without_effort(p)
        if missing:
            out.status = (f"cannot estimate the contacts: the joint states carry no effort for "
                          f"{missing}")
            return False
        try:
            est = estimator.update(p.t * 1e-9, p.q, p.v, p.effort[6:])
        except RbdError as e:
            out.warning = ("estimate", f"cannot estimate the contacts: {e}")
            out.status = f"cannot estimate the contacts: {e}"
            return False
        if not est.settled:
            out.status = (f"estimating the contacts: the estimator settles for "
                          f"{estimator.settling * 1e3:.3g} ms after it starts; no contact "
                          "decided yet")
            return False
        self.active = {link for link, on in est.touching.items() if on}
        out.estimate = est
        if self.standing is not None:
            out.proposal = self.standing.add(p.t * 1e-9, est)
            if out.proposal is not None:
                self.standing = None
        return True


#: the status's note while the capture point is outside the support polygon
STEP_NEEDED = "; the capture point is outside the support polygon: a step or a fall follows"
