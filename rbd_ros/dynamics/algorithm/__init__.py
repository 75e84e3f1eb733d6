"""The algorithms, each a compiled kernel behind a Python function that checks its arguments:
RNEA, ABA (its mimic joints in :mod:`.aba_mimic`), CRBA, kinematics, momentum, the inertial
regressor and the floating base's dynamics."""
