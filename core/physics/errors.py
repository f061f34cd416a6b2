"""The one error type of the physics layer."""


class PhysicsError(ValueError):
    """Physics cannot run on this input: settings out of range, a body without feet or contacts,
    no stretch long enough to solve. A ValueError, so callers that catch those still do; callers
    that must tell physics failures apart (the Retarget operator, ``scripts/retarget.py``) catch
    this type instead of reading the message."""
