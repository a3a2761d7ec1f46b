"""`python -m gdres` is `gdres`."""

from gdres.front.cli import entry

entry()
