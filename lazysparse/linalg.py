"""``ls.linalg``: NumPy's ``linalg`` names that lazysparse offers (``norm``, lazily)."""
from lazysparse.api.statistics import norm

__all__ = ["norm"]
