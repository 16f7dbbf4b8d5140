"""skconsole's version, at the bottom of the layers: the package face re-exports it and
the schema setup records it (``sk_schema_version_t``), without either importing the other.

A constant, kept equal to pyproject.toml's, so a source checkout that was never
installed reports the same version as the installed package.
"""

__version__ = "0.1.0"
#: the schema version this skconsole sets up and understands (skconsole.db.schema)
SCHEMA_VERSION = 9
