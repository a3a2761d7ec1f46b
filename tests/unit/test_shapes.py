"""Every shape shape_create lists has a case in tests/engine/test_shapes.py."""

from __future__ import annotations

from typing import Any

from gdres.requests.models import SHAPE_TYPES

# Non-default values for every listed class, in the JSON forms decisions.md §4 accepts.
SHAPES: dict[str, dict[str, Any]] = {
    "BoxShape3D": {"size": [1, 2, 3]},
    "SphereShape3D": {"radius": 1.5},
    "CapsuleShape3D": {"radius": 0.5, "height": 3},
    "CylinderShape3D": {"radius": 0.75, "height": 2.5},
    "ConcavePolygonShape3D": {"data": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "backface_collision": True},
    "ConvexPolygonShape3D": {"points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]},
    "WorldBoundaryShape3D": {"plane": [0, 1, 0, 2]},
    "SeparationRayShape3D": {"length": 4, "slide_on_slope": True},
    "HeightMapShape3D": {"map_width": 2, "map_depth": 2, "map_data": [0, 1, 2, 3]},
    "CircleShape2D": {"radius": 5},
    "RectangleShape2D": {"size": [10, 20]},
    "CapsuleShape2D": {"radius": 2, "height": 8},
    "SegmentShape2D": {"a": [1, 2], "b": [5, 5]},
    "ConvexPolygonShape2D": {"points": [[0, 0], [4, 0], [0, 4]]},
    "ConcavePolygonShape2D": {"segments": [[0, 0], [1, 1], [1, 1], [2, 0]]},
    "WorldBoundaryShape2D": {"normal": [0, -1], "distance": 3},
    "SeparationRayShape2D": {"length": 6},
}


def test_every_listed_shape_has_a_case() -> None:
    assert sorted(SHAPES) == sorted(SHAPE_TYPES)
