"""The nodes' error for what they are given."""


class InputError(ValueError):
    """A message or service request a node cannot use (a joint state, a command, a trajectory,
    odometry, an IMU reading, a request's joints or wrenches); the text says why and what to
    send instead. The node drops it, says so, and keeps its last good state."""
