"""Exceptions of the dynamics core. Their text says what is wrong and what to change."""


class RbdError(ValueError):
    """Base class of every error raised by :mod:`rbd_ros.dynamics`."""


class URDFError(RbdError):
    """The URDF cannot be turned into a model: the message names the element at fault."""


class ModelError(RbdError):
    """The model cannot answer this call (wrong sizes, unknown names, singular subtree)."""


class TrajectoryError(RbdError):
    """A trajectory cannot be followed (no points, times not increasing, sizes that differ,
    values out of the model's limits): the message says which point and joint."""
