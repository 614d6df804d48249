"""Level-based storage formats (TACO's level formats) and concrete storage."""
from lazysparse.formats.level_kinds import LevelKind, Dense, Compressed, Singleton, KINDS
from lazysparse.formats.levels import Level, DENSE, COMPRESSED, SINGLETON
from lazysparse.formats.format import Format, FormatFamily, resolve_format, dense, csr, csc, coo, dcsr, dcsc, csf
from lazysparse.formats.storage import Storage

__all__ = ["LevelKind", "Dense", "Compressed", "Singleton", "KINDS", "Level", "DENSE", "COMPRESSED", "SINGLETON", "Format", "FormatFamily", "resolve_format",
           "dense", "csr", "csc", "coo", "dcsr", "dcsc", "csf", "Storage"]
