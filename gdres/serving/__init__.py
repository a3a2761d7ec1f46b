"""Serving requests: warm engines per project and replies in order (pool.py), the import of a
project's assets (imports.py), and the per-file locks of writes (locks.py)."""

import logging

# A library stays quiet unless its user configures logging; the command line shows these on stderr.
logging.getLogger("gdres").addHandler(logging.NullHandler())
