"""The model and its layout: a URDF read into packed arrays (:class:`~.model.Model`), a
thread's work arrays (:class:`~.model.Data`), spatial algebra, configurations, and the C entry
through which the per-call algorithms run (:mod:`.entry`)."""
