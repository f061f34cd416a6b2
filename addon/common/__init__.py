"""What every feature shares: action I/O for each Blender version (``animdata``), armature ↔ core
(``armature``, ``clip``), object spaces (``spaces``), the action's record (``record``), units, the
scene settings and how features register."""
