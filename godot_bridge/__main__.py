"""`python -m godot_bridge` is `godot-bridge`."""

import sys

from godot_bridge.front.cli import main

sys.exit(main())
