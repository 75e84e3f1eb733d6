"""Estimators over time: the momentum observer and collision detector, and which feet carry
the robot from joint torques alone."""
