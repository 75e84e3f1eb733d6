"""The dynamics core, numpy and numba only (no ROS in here), in five rooms: ``multibody`` (a URDF
read into a Model, a thread's Data, spatial algebra), ``algorithm`` (RNEA, ABA, CRBA,
kinematics, momentum, centroidal quantities, the inertial regressor, the floating base),
``contact`` (the feet's reactions and their QP), ``estimation`` (the momentum observer,
collisions, which feet carry the robot) and ``control`` (a joint trajectory's splines, its
tolerances, computed torque). The names most callers need are here."""

from .algorithm import floating
from .algorithm.aba import aba, aba_batch, euler_step
from .algorithm.centroidal import Centroidal, centroidal
from .algorithm.crba import crba, crba_batch
from .algorithm.momentum import momentum
from .algorithm.regressor import inertial_parameters, regressor, regressor_batch
from .algorithm.rnea import gravity, nonlinear_effects, rnea, rnea_batch
from .errors import ModelError, RbdError, URDFError
from .multibody.configuration import integrate
from .multibody.model import Data, Frame, Joint, Model
from .multibody.urdf import load_urdf, load_urdf_string

__all__ = [
    "Centroidal",
    "Data",
    "Frame",
    "Joint",
    "Model",
    "ModelError",
    "RbdError",
    "URDFError",
    "aba",
    "aba_batch",
    "centroidal",
    "crba",
    "crba_batch",
    "euler_step",
    "floating",
    "gravity",
    "inertial_parameters",
    "integrate",
    "load_urdf",
    "load_urdf_string",
    "momentum",
    "nonlinear_effects",
    "regressor",
    "regressor_batch",
    "rnea",
    "rnea_batch",
]
