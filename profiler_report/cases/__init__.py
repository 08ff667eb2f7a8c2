"""The built-in case studies, one subpackage each (``transpose/``, ``reduction/``): the Python side
of a ladder (buffers, reference, launch shapes, peers, notes) as plugins on top of ``live/`` and
``analysis/``. They are found by name through :data:`profiler_report.model.registry.REGISTRY`.
"""
