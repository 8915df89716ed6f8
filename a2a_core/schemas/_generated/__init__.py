"""Generated from the vendored 1.0 proto; do not edit (``scripts/regenerate_grpc.py``).

``a2a-v1.0.binpb`` is the ``FileDescriptorSet`` protoc writes for ``a2a-v1.0.proto`` and its
imports; :mod:`a2a_core._grpc.proto` builds the message classes from it.
"""
