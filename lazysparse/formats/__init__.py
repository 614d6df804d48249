"""Level-based storage formats (TACO's level formats) and concrete storage."""
from .levels import Level, DENSE, COMPRESSED, SINGLETON
from .format import Format, FormatFamily, resolve_format, dense, csr, csc, coo, dcsr, dcsc, csf
from .storage import Storage

__all__ = ["Level", "DENSE", "COMPRESSED", "SINGLETON", "Format", "FormatFamily", "resolve_format",
           "dense", "csr", "csc", "coo", "dcsr", "dcsc", "csf", "Storage"]
