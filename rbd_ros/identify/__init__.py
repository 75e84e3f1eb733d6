"""Dynamic identification (offline): inertial and friction parameters from joint states and
measured efforts. Loads scipy when used; the core and the nodes never import it."""
