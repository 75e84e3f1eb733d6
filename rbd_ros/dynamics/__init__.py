"""The dynamics core: URDF to model, RNEA, ABA, CRBA, floating base. No ROS in here."""

from . import floating
from .aba import aba, aba_batch
from .configuration import integrate
from .crba import crba, crba_batch
from .errors import ModelError, RbdError, URDFError
from .model import Data, Frame, Joint, Model
from .momentum import momentum
from .regressor import inertial_parameters, regressor, regressor_batch
from .rnea import gravity, nonlinear_effects, rnea, rnea_batch
from .urdf import load_urdf, load_urdf_string

__all__ = [
    "Data",
    "Frame",
    "Joint",
    "Model",
    "ModelError",
    "RbdError",
    "URDFError",
    "aba",
    "aba_batch",
    "crba",
    "crba_batch",
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
