"""``ls.linalg``: NumPy's ``linalg`` names that lazysparse offers (``norm``, lazily)."""
from .statistics import norm

__all__ = ["norm"]
