"""`python -m bridge` is `godot-bridge`."""

import sys

from .cli import main

sys.exit(main())
