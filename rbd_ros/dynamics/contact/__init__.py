"""Contacts: the reactions of a floating base's feet as one small QP (:mod:`.qp`), within
friction cones and the soles' edges."""
