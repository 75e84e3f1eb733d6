"""URDF to :class:`~rbd_ros.dynamics.multibody.model.Model`, through urdf-parser-py.

Everything a URDF can get wrong that would make the dynamics meaningless (a loop, a missing
link, a non-finite number, a negative mass) is refused as one :class:`URDFError` whose text
names the element at fault. What real vendor URDFs carry as CAD-export noise -- an inertia
that is slightly indefinite, principal moments that break the triangle inequality -- is loaded
as given, as Pinocchio, KDL and Gazebo load it, with one warning that names each link and what
is odd about it; ``strict=True`` refuses it instead. Only links and joints are read, and of
the transmissions each motor's rotor inertia (Drake's tags, below): visuals, collisions,
materials, the rest of the transmissions and ``<gazebo>`` tags cannot stop a model from
loading.

A motor's rotor turns ``gear_ratio`` times as fast as its joint: the joint feels its inertia
times ``gear_ratio^2``, the joint's armature (Pinocchio's ``model.armature``, MuJoCo's
``armature``), added to the mass matrix's diagonal. A URDF says it as Drake reads it::

    <transmission name="t1">
      <joint name="joint1"/>
      <actuator name="motor1">
        <drake:rotor_inertia value="3.3e-4"/>  <!-- kg m^2 (kg for a prismatic joint) -->
        <drake:gear_ratio value="100"/>        <!-- 1 if not given -->
      </actuator>
    </transmission>

(with ``xmlns:drake="http://drake.mit.edu"`` on ``<robot>``; any namespace is read).
"""

from __future__ import annotations

import contextlib
import logging
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from urdf_parser_py import urdf as up
from urdf_parser_py.xml_reflection import core as xml_core

from ..errors import URDFError
from .layout import (
    INERTIA_SIZE,
    MF_ARMATURE,
    MF_COULOMB,
    MF_DAMPING,
    MF_E,
    MF_I,
    MF_R,
    MF_S,
    MF_WIDTH,
    MI_WIDTH,
)
from .model import F64, I64, Frame, Joint, Model
from .spatial import (
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    inertia_in_parent,
    rpy_matrix,
    spatial_inertia,
)

log = logging.getLogger("rbd_ros.dynamics")

SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "planar", "floating")
ONE_DOF = ("revolute", "continuous", "prismatic")
GRAVITY = (0.0, 0.0, -9.81)
ROOT_JOINT = "root_joint"
#: (positions, velocities) of a joint kind; every other moving kind has one of each
COORDINATES = {"floating": (7, 6), "planar": (3, 3)}


def load_urdf(path: str | Path, floating_base: bool = False, strict: bool = False) -> Model:
    """Model of the URDF file at ``path``; ``floating_base`` adds a free-flyer root;
    ``strict`` refuses inertias no solid body has instead of warning about them."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise URDFError(f"cannot read URDF file '{path}': {e.strerror}") from None
    return load_urdf_string(text, floating_base=floating_base, strict=strict)


def load_urdf_string(xml: str, floating_base: bool = False, strict: bool = False) -> Model:
    """Model of a URDF document (as ``robot_description`` carries it)."""
    root = _check_xml(xml)
    with _quiet_parser() as notes:
        try:
            robot = up.URDF.from_xml_string(ET.tostring(_dynamics_only(root), encoding="unicode"))
        except Exception as e:  # urdf-parser-py raises assorted types
            raise URDFError(f"invalid URDF: {e}") from None
    for note in notes:
        log.debug("urdf-parser-py: %s", note)
    builder = _Builder(robot, floating_base, _armatures(root))
    model = builder.build()
    builder.odd += _stray_rotors(root)
    if model.nv and model.total_mass == 0.0:
        builder.odd.append("no link has an <inertial>: every torque is zero and forward "
                           "dynamics is undefined (a kinematics-only description)")
    if builder.odd:
        text = "; ".join(builder.odd)
        if strict:
            raise URDFError(f"refused in strict mode: {text}")
        log.warning("URDF '%s' loaded as Pinocchio and KDL load it, but %s", model.name, text)
    if builder.massless:
        log.info("links without <inertial> are massless: %s", ", ".join(builder.massless))
    return model


def _dynamics_only(root: ET.Element) -> ET.Element:
    """A copy of ``<robot>`` with only its links (their ``<inertial>``) and joints: an odd
    ``<visual>``, ``<material>`` or ``<transmission>`` must not keep a robot from loading."""
    out = ET.Element("robot", {"name": root.get("name") or "robot"})
    for el in root:
        if el.tag == "joint":
            out.append(el)
        elif el.tag == "link":
            link = ET.SubElement(out, "link", dict(el.attrib))
            link.extend(c for c in el if c.tag == "inertial")
    return out


def rotor_tags(transmission: ET.Element) -> dict[str, ET.Element]:
    """A ``<transmission>``'s actuator tags by their name in any namespace (``rotor_inertia``,
    ``gear_ratio``: Drake's)."""
    return {el.tag.rpartition("}")[2]: el for act in transmission.findall("actuator")
            for el in act}


def _armatures(root: ET.Element) -> dict[str, float]:
    """Each joint's armature from its transmission's ``rotor_inertia`` and ``gear_ratio``
    (Drake's tags, in any namespace): the rotor inertia times the gear ratio squared."""
    out: dict[str, float] = {}
    for tr in root.findall("transmission"):
        name = tr.get("name") or "(unnamed)"
        tags = rotor_tags(tr)
        if "rotor_inertia" not in tags:
            continue
        joints = [j.get("name") or "" for j in tr.findall("joint")]
        if len(joints) != 1 or len(tr.findall("actuator")) != 1:
            raise URDFError(f"transmission '{name}' has a rotor_inertia, {len(joints)} joints and "
                            f"{len(tr.findall('actuator'))} actuators: a rotor inertia is read "
                            "from a simple transmission, one joint and one actuator")
        values = []
        for tag, default in (("rotor_inertia", None), ("gear_ratio", 1.0)):
            el = tags.get(tag)
            text = default if el is None else el.get("value")
            try:
                values.append(float(text))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise URDFError(f"transmission '{name}': <{tag}> needs a number in its value "
                                f"attribute, got {text!r}") from None
        inertia, ratio = values
        if not (math.isfinite(inertia) and inertia >= 0 and math.isfinite(ratio) and ratio != 0):
            raise URDFError(f"transmission '{name}' has rotor_inertia {inertia:g} and gear_ratio "
                            f"{ratio:g}: the inertia must be finite and >= 0, the ratio finite "
                            "and not 0")
        if joints[0] in out:
            raise URDFError(f"joint '{joints[0]}' has a rotor_inertia in two transmissions")
        out[joints[0]] = inertia * ratio * ratio
    return out


def _stray_rotors(root: ET.Element) -> list[str]:
    """A note for each ``rotor_inertia`` tag that is not in a transmission's actuator, where
    it is not read."""
    read = {id(el) for tr in root.findall("transmission") for act in tr.findall("actuator")
            for el in act}
    return [f"the <{el.tag.rpartition('}')[2]}> in <{parent.tag} name=\"{parent.get('name')}\">"
            " is not read: a rotor inertia is read in a <transmission>'s <actuator>, beside "
            "one <joint name=...>"
            for parent in root.iter() for el in parent
            if el.tag.rpartition("}")[2] == "rotor_inertia" and id(el) not in read]


def _check_xml(xml: str) -> ET.Element:
    if not isinstance(xml, str) or not xml.strip():
        raise URDFError("the URDF is empty: expected an XML document with a <robot> element")
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        hint = "" if "unbound prefix" not in str(e) else \
            (" (a tag's prefix, such as drake:, needs its namespace declared on <robot>: "
             'xmlns:drake="http://drake.mit.edu")')
        raise URDFError(f"the URDF is not well-formed XML: {e}{hint}") from None
    if root.tag != "robot":
        raise URDFError(f"the URDF's top element is <{root.tag}>, expected <robot>")
    if any((el.tag.startswith("{") and "xacro" in el.tag) or
           any("${" in v or "$(" in v for v in el.attrib.values()) for el in root.iter()):
        raise URDFError("this is xacro, not URDF (it has xacro:, ${...} or $(...)): expand it "
                        "first (xacro robot.urdf.xacro > robot.urdf), or give the launch "
                        "files description_file:=robot.urdf.xacro")
    names: dict[str, set[str]] = {"link": set(), "joint": set()}
    for el in root:
        if el.tag in names:
            name = el.get("name")
            if not name:
                raise URDFError(f"a <{el.tag}> has no name attribute")
            if name in names[el.tag]:
                raise URDFError(f"{el.tag} '{name}' is declared twice")
            names[el.tag].add(name)
        if el.tag == "joint" and el.get("type") not in SUPPORTED:
            raise URDFError(
                f"joint '{el.get('name')}' has unsupported type '{el.get('type')}'; "
                f"supported: {', '.join(SUPPORTED)}"
            )
    if not names["link"]:
        raise URDFError("the URDF declares no <link>")
    return root


@contextlib.contextmanager
def _quiet_parser() -> Iterator[list[str]]:
    """Collect urdf-parser-py's "Unknown tag" notes instead of letting it print them."""
    notes: list[str] = []
    saved = xml_core.on_error
    xml_core.on_error = notes.append
    try:
        yield notes
    finally:
        xml_core.on_error = saved


def _origin(el: object) -> tuple[F64, F64]:
    """(rotation, translation) of an ``<origin>`` (identity when absent)."""
    o = getattr(el, "origin", None)
    xyz = np.zeros(3) if o is None or o.xyz is None else np.asarray(o.xyz, dtype=float)
    rpy = np.zeros(3) if o is None or o.rpy is None else np.asarray(o.rpy, dtype=float)
    return rpy_matrix(rpy), xyz


def _finite(values: object, what: str) -> None:
    if not np.all(np.isfinite(np.asarray(values, dtype=float))):
        raise URDFError(f"{what} contains a non-finite number: {values}")


class _Builder:
    def __init__(self, robot: up.URDF, floating_base: bool, armature: dict[str, float]) -> None:
        self.robot = robot
        self.floating_base = floating_base
        self.armature = armature
        self.links = {link.name: link for link in robot.links}
        self.joints = {j.name: j for j in robot.joints}
        # bodies
        self.parent: list[int] = []
        self.jtype: list[int] = []
        self.mf: list[F64] = []
        self.body_names: list[str] = []
        self.body_joints: list[str] = []
        self.body_qv: list[tuple[int, int]] = []  # full q, v index
        self.frames: dict[str, Frame] = {}
        self.joint_bodies: dict[str, int] = {}  # joint name -> its (last) body
        self.nq_full = 0
        self.nv_full = 0
        self.massless: list[str] = []
        self.odd: list[str] = []  # what is loaded as given but no real robot has

    # ------------------------------------------------------------------ tree
    def build(self) -> Model:
        root = self._root()
        for name in self.armature:
            j = self.joints.get(name)
            if j is None or j.type not in ONE_DOF:
                raise URDFError(f"a transmission gives joint '{name}' a rotor_inertia, but "
                                + ("the URDF declares no such joint" if j is None else
                                   f"it is {j.type}: only revolute, continuous and prismatic "
                                   "joints have one"))
        for j in self.robot.joints:
            if j.mimic is not None and j.mimic.joint not in self.joints:
                self.odd.append(f"joint '{j.name}' mimics joint '{j.mimic.joint}', which is not "
                                "declared: it is loaded as an independent joint")
                j.mimic = None
        children: dict[str, list[up.Joint]] = {name: [] for name in self.links}
        for j in self.robot.joints:
            children[j.parent].append(j)
        R0, p0 = np.eye(3), np.zeros(3)
        free = children[root][0] if len(children[root]) == 1 else None
        if free is not None and free.type == "floating" and self._massless(root):
            # the URDF's own free flyer (a floating joint from a massless "world" link): it is
            # the model's free-flyer root, with or without floating_base, and the only one
            self.floating_base = True
            self.frames[root] = Frame(root, -1, np.eye(3), np.zeros(3))  # the world's
            R0, p0 = _origin(free)
            _finite(p0, f"the <origin> of joint '{free.name}'")
            root = free.child
        if self.floating_base:
            self._add_body(-1, R0, p0, JOINT_FREE, np.zeros(6), root, ROOT_JOINT, 7, 6)
            self.joint_bodies[ROOT_JOINT] = 0
            body = 0
        else:
            body = -1
        self._place(root, body, np.eye(3), np.zeros(3))
        if not self.floating_base and root in self.massless:
            self.massless.remove(root)  # a fixed root (often "world") never moves
        stack = list(reversed(children[root]))
        while stack:  # depth first, children in URDF order (Pinocchio's order too)
            j = stack.pop()
            self._joint(j)
            stack.extend(reversed(children[j.child]))
        return self._assemble()

    def _root(self) -> str:
        for j in self.robot.joints:
            for end in ("parent", "child"):
                if getattr(j, end) not in self.links:
                    raise URDFError(
                        f"joint '{j.name}' names {end} link '{getattr(j, end)}', "
                        "which is not declared"
                    )
        parent_of: dict[str, str] = {}
        for j in self.robot.joints:
            if j.child in parent_of:
                raise URDFError(
                    f"link '{j.child}' is the child of two joints ('{parent_of[j.child]}' and "
                    f"'{j.name}'): the kinematic graph has a loop; a URDF must be a tree"
                )
            parent_of[j.child] = j.name
        roots = [name for name in self.links if name not in parent_of]
        if len(roots) > 1:
            raise URDFError(
                f"the URDF has {len(roots)} root links ({', '.join(roots)}): every link but "
                "one must be the child of a joint"
            )
        if not roots:
            raise URDFError("every link is the child of a joint: the kinematic graph is a loop")
        # a loop disconnected from the root leaves links unreachable
        reach = {roots[0]}
        frontier = [roots[0]]
        by_parent: dict[str, list[str]] = {}
        for j in self.robot.joints:
            by_parent.setdefault(j.parent, []).append(j.child)
        while frontier:
            for c in by_parent.get(frontier.pop(), []):
                if c not in reach:
                    reach.add(c)
                    frontier.append(c)
        lost = sorted(set(self.links) - reach)
        if lost:
            raise URDFError(f"links {', '.join(lost)} form a loop not connected to the root "
                            f"link '{roots[0]}'")
        return str(roots[0])

    # ------------------------------------------------------------------ links and joints
    def _place(self, link: str, body: int, R: F64, p: F64) -> None:
        """Attach ``link`` to ``body`` at pose (R, p) and merge its inertia into the body."""
        self.frames[link] = Frame(link, body, R, p)
        inertia = self._inertia(link)
        if body >= 0 and inertia is not None:
            E = R.T
            row = self.mf[body]
            row[MF_I : MF_I + INERTIA_SIZE] += inertia_in_parent(inertia, E, p).reshape(-1)

    def _massless(self, link: str) -> bool:
        inertial = self.links[link].inertial
        return inertial is None or not inertial.mass

    def _inertia(self, link: str) -> F64 | None:
        inertial = self.links[link].inertial
        if inertial is None:
            self.massless.append(link)
            return None
        m = float(inertial.mass if inertial.mass is not None else 0.0)
        if not math.isfinite(m) or m < 0:
            raise URDFError(f"link '{link}' has mass {m}: a mass must be a finite number >= 0")
        i = inertial.inertia
        if i is None:
            Ic = np.zeros((3, 3))
        else:
            Ic = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]],
                          dtype=float)
        _finite(Ic, f"the inertia of link '{link}'")
        ev = np.linalg.eigvalsh(Ic)
        tol = 1e-6 * float(np.abs(ev).max()) + 1e-12
        moments = f"principal moments {ev[0]:.3g}, {ev[1]:.3g}, {ev[2]:.3g} kg m^2"
        if ev[0] < -tol:
            self.odd.append(f"link '{link}' has an inertia that is not positive semi-definite "
                            f"({moments})")
        elif ev[2] > ev[0] + ev[1] + tol:
            self.odd.append(f"link '{link}' has {moments}, which break the triangle "
                            "inequality (the largest must not exceed the sum of the others)")
        R, c = _origin(inertial)
        _finite(c, f"the <inertial><origin> of link '{link}'")
        return spatial_inertia(m, c, R @ Ic @ R.T)

    def _add_body(self, parent: int, R: F64, p: F64, jtype: int, S: F64, link: str,
                  joint: str, nq: int, nv: int) -> int:
        row = np.zeros(MF_WIDTH)
        row[MF_E : MF_E + 9] = R.T.reshape(-1)
        row[MF_R : MF_R + 3] = p
        row[MF_S : MF_S + 6] = S
        self.mf.append(row)
        self.parent.append(parent)
        self.jtype.append(jtype)
        self.body_names.append(link)
        self.body_joints.append(joint)
        self.body_qv.append((self.nq_full, self.nv_full))
        self.nq_full += nq
        self.nv_full += nv
        return len(self.parent) - 1

    def _joint(self, j: up.Joint) -> None:
        parent = self.frames[j.parent]
        Ro, po = _origin(j)
        _finite(po, f"the <origin> of joint '{j.name}'")
        R = parent.rotation @ Ro
        p = parent.translation + parent.rotation @ po
        if j.type == "fixed":
            self._place(j.child, parent.body, R, p)
            return
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
        _finite(axis, f"the <axis> of joint '{j.name}'")
        n = float(np.linalg.norm(axis))
        if j.type != "floating" and n < 1e-9:
            raise URDFError(f"joint '{j.name}' has a zero <axis>: give it a direction")
        axis = axis / max(n, 1e-300)
        zero = np.zeros(3)
        if j.type in ("revolute", "continuous"):
            b = self._add_body(parent.body, R, p, JOINT_REVOLUTE, np.r_[axis, zero], j.child,
                               j.name, 1, 1)
        elif j.type == "prismatic":
            b = self._add_body(parent.body, R, p, JOINT_PRISMATIC, np.r_[zero, axis], j.child,
                               j.name, 1, 1)
        elif j.type == "planar":
            # x and y slide in the plane normal to the axis, theta turns about it
            e = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
            u1 = e - axis * (e @ axis)
            u1 /= np.linalg.norm(u1)
            u2 = np.cross(axis, u1)
            b = self._add_body(parent.body, R, p, JOINT_PRISMATIC, np.r_[zero, u1],
                               f"{j.child}/planar_x", j.name, 1, 1)
            b = self._add_body(b, np.eye(3), zero, JOINT_PRISMATIC, np.r_[zero, u2],
                               f"{j.child}/planar_y", j.name, 1, 1)
            b = self._add_body(b, np.eye(3), zero, JOINT_REVOLUTE, np.r_[axis, zero], j.child,
                               j.name, 1, 1)
        else:  # floating
            b = self._add_body(parent.body, R, p, JOINT_FREE, np.zeros(6), j.child, j.name, 7, 6)
        self.joint_bodies[j.name] = b
        if j.dynamics is not None and j.type in ONE_DOF:
            d = float(j.dynamics.damping or 0.0)
            f = float(j.dynamics.friction or 0.0)
            if d < 0 or f < 0 or not (math.isfinite(d) and math.isfinite(f)):
                raise URDFError(f"joint '{j.name}' has <dynamics damping={d} friction={f}>: "
                                "both must be finite and >= 0")
            self.mf[b][MF_DAMPING] = d
            self.mf[b][MF_COULOMB] = f
        self.mf[b][MF_ARMATURE] = self.armature.get(j.name, 0.0)
        self._place(j.child, b, np.eye(3), np.zeros(3))

    # ------------------------------------------------------------------ coordinates
    def _mimic_source(self, name: str) -> tuple[str, float, float]:
        """Follow a mimic chain to its independent joint: (source, multiplier, offset)."""
        mul, off = 1.0, 0.0
        seen = [name]
        j = self.joints[name]
        while j.mimic is not None:
            src = j.mimic.joint
            if self.joints[src].type not in ONE_DOF or j.type not in ONE_DOF:
                raise URDFError(
                    f"mimic joint '{j.name}' ({j.type}) follows '{src}' "
                    f"({self.joints[src].type}): both must be revolute, continuous or prismatic"
                )
            k = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            o = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            _finite([k, o], f"the <mimic> of joint '{j.name}'")
            mul, off = mul * k, mul * o + off
            if src in seen:
                raise URDFError(f"mimic joints form a cycle: {' -> '.join([*seen, src])}")
            seen.append(src)
            j = self.joints[src]
        return j.name, mul, off

    def _assemble(self) -> Model:
        nb = len(self.parent)
        qv = np.array(self.body_qv, dtype=np.int64).reshape(nb, 2)
        order, kinds, idx, nq, nv = self._joint_order()
        maps = self._coordinate_maps(qv, order, kinds, idx, nv)
        qsrc, qlin, vsrc, vmul, vfull, mimic_rows, joints = maps
        mi = np.zeros((nb, MI_WIDTH), dtype=np.int64)
        mi[:, 0] = self.parent
        mi[:, 1] = self.jtype
        mi[:, 2:] = qv
        # every body from the root to a mimic joint or its source (ABA's constraint sweeps)
        body_of_v = {int(mi[b, 3]): b for b in range(nb)}
        path: set[int] = set()
        for row in mimic_rows:
            for b in (body_of_v[row], body_of_v[int(vfull[vsrc[row]])]):
                while b >= 0:
                    path.add(b)
                    b = self.parent[b]
        groups = mimic_groups(mi, [(r, int(vfull[vsrc[r]])) for r in mimic_rows], body_of_v)
        return Model(
            name=self.robot.name or "robot",
            nq=nq,
            nv=nv,
            nq_full=self.nq_full,
            nv_full=self.nv_full,
            mi=mi,
            mf=np.array(self.mf).reshape(nb, MF_WIDTH),
            qsrc=qsrc,
            qlin=qlin,
            vsrc=vsrc,
            vmul=vmul,
            vfull=vfull,
            mimic_rows=np.array(mimic_rows, dtype=np.int64),
            mimic_bodies=np.array(sorted(path), dtype=np.int64),
            mimic_group=groups,
            gravity=np.array(GRAVITY),
            joints=tuple(joints),
            body_names=tuple(self.body_names),
            body_joints=tuple(self.body_joints),
            frames=self.frames,
            has_free_flyer=self.floating_base,
        )

    def _joint_order(self) -> tuple[list[str], dict[str, str], dict[str, tuple[int, int]],
                                    int, int]:
        """The joints in the order of their first bodies, each one's kind, the independent
        ones' first position and velocity index, and nq and nv."""
        first_body: dict[str, int] = {}
        for b, name in enumerate(self.body_joints):
            first_body.setdefault(name, b)
        order = sorted(first_body, key=first_body.__getitem__)
        idx: dict[str, tuple[int, int]] = {}
        nq = nv = 0
        kinds: dict[str, str] = {}
        for name in order:
            j = self.joints.get(name)
            kind = "floating" if j is None else j.type
            kinds[name] = kind
            if j is not None and j.mimic is not None:
                continue
            dq, dv = COORDINATES.get(kind, (1, 1))
            idx[name] = (nq, nv)
            nq += dq
            nv += dv
        return order, kinds, idx, nq, nv

    def _coordinate_maps(self, qv: np.ndarray, order: list[str], kinds: dict[str, str],
                         idx: dict[str, tuple[int, int]], nv: int
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                    list[int], list[Joint]]:
        """From the full coordinates (every joint's, mimic ones too) to the independent ones:
        qsrc, qlin, vsrc, vmul, vfull, the mimic joints' rows, and each joint's Joint."""
        qsrc = np.zeros(self.nq_full, dtype=np.int64)
        qlin = np.zeros((self.nq_full, 2))
        vsrc = np.zeros(self.nv_full, dtype=np.int64)
        vmul = np.zeros(self.nv_full)
        vfull = np.zeros(nv, dtype=np.int64)
        mimic_rows: list[int] = []
        joints: list[Joint] = []
        first_body = {name: self.body_joints.index(name) for name in order}
        for name in order:
            fq, fv = (int(x) for x in qv[first_body[name]])
            kind = kinds[name]
            j = self.joints.get(name)
            mimic = None
            if j is not None and j.mimic is not None:
                src, k, o = self._mimic_source(name)
                sq, sv = idx[src]
                qsrc[fq], qlin[fq] = sq, (k, o)
                vsrc[fv], vmul[fv] = sv, k
                mimic_rows.append(fv)
                mimic = (src, k, o)
                rq = rv = -1
                dq = dv = 1
            else:
                rq, rv = idx[name]
                dq, dv = COORDINATES.get(kind, (1, 1))
                for k in range(dq):
                    qsrc[fq + k], qlin[fq + k] = rq + k, (1.0, 0.0)
                for k in range(dv):
                    vsrc[fv + k], vmul[fv + k] = rv + k, 1.0
                    vfull[rv + k] = fv + k
            joints.append(self._joint_info(name, kind, rq, rv, dq, dv, mimic))
        return qsrc, qlin, vsrc, vmul, vfull, mimic_rows, joints

    def _joint_info(self, name: str, kind: str, rq: int, rv: int, nq: int, nv: int,
                    mimic: tuple[str, float, float] | None) -> Joint:
        j = self.joints.get(name)
        lim = None if j is None else j.limit
        lower, upper, vel, eff = -np.inf, np.inf, np.inf, np.inf
        if lim is not None and kind in ("revolute", "prismatic"):
            lower = float(lim.lower) if lim.lower is not None else lower
            upper = float(lim.upper) if lim.upper is not None else upper
        if lim is not None:
            vel = float(lim.velocity) if lim.velocity is not None else vel
            eff = float(lim.effort) if lim.effort is not None else eff
        row = self.mf[self.joint_bodies[name]]  # as _joint validated and stored them
        damping, friction = float(row[MF_DAMPING]), float(row[MF_COULOMB])
        return Joint(name, kind, rq, rv, nq, nv, lower, upper, vel, eff, damping, friction, mimic,
                     float(row[MF_ARMATURE]))


def mimic_groups(mi: np.ndarray, rows: list[tuple[int, int]], body_of_v: dict[int, int]) -> I64:
    """ABA's one-coordinate groups, a code per body: a source joint and its mimic joints form a
    group when the bodies they move hang from one parent body, nothing else hangs below them and
    no other group hangs from that parent (a gripper's fingers). ABA then treats the group as
    a single joint and needs no constraint sweeps. Code -1: not in a group; -2: a group's
    parent; p >= 0: a member of the group hanging from body p. All -1 unless every mimic joint
    is in a group (the general constraint correction handles the rest)."""
    code = np.full(mi.shape[0], -1, dtype=np.int64)
    members: dict[int, set[int]] = {}
    for row, src in rows:
        members.setdefault(body_of_v[src], {body_of_v[src]}).add(body_of_v[row])
    for bodies in members.values():
        parents = {int(mi[b, 0]) for b in bodies} - bodies
        below = {b for b in range(mi.shape[0]) if int(mi[b, 0]) in bodies}
        p = min(parents)
        if (len(parents) != 1 or p < 0 or code[p] != -1 or not below <= bodies
                or any(mi[b, 1] == JOINT_FREE for b in bodies)):
            return np.full(mi.shape[0], -1, dtype=np.int64)
        code[p] = -2
        code[sorted(bodies)] = p
    return code
