"""Physics layer for physics-aware retargeting (Jin et al. 2014; Tak & Ko 2005).

- :mod:`.body`: de Leva (1996) body model (segment masses, CoM, inertia, torque limits) on any humanoid;
- :mod:`.derivatives`: Savitzky–Golay smoothing and time derivatives;
- :mod:`.dynamics`: segment kinematics, CoM, momentum, ZMP, support polygons, inverse dynamics;
- :mod:`.support`: foot boxes, vectorised convex hulls, point-in-polygon, distances;
- :mod:`.displacement`: cubic B-spline displacement mapping (motion warping);
- :mod:`.balance`: the balance plan (cart-table ZMP correction as a B-spline shift);
- :mod:`.ukf`: unscented Kalman filter with Merwe sigma points and quaternion-aware states;
- :mod:`.metrics`: plausibility metrics; :mod:`.solve`: the :func:`physics_retarget` driver, its stages
  :mod:`.planting`, :mod:`.plan`, :mod:`.filter_pass`, :mod:`.flights`, :mod:`.guard`, :mod:`.repair` and its
  settings :mod:`.options`;
- :mod:`.split`: the double-support force split needing the least torque;
- :mod:`.unexplained`: frames the floor-and-feet model cannot explain (hands, equipment);
- :mod:`.feasibility`: lower bounds showing where no valid pose near the motion exists;
- :mod:`.apply`: physics from user settings; :mod:`.errors`: :class:`PhysicsError`.

numpy only, like the rest of ``core`` (Blender ships no scipy); BLAS runs on one thread while it
solves (``core/blas.py``).
"""

from .body import BodyModel, body_model
from .dynamics import center_of_mass, inverse_dynamics, momentum, segment_kinematics, support_from, zmp
from .errors import PhysicsError
from .metrics import analyse, report
from .options import PhysicsOptions
from .solve import physics_retarget

__all__ = [
    "BodyModel",
    "PhysicsError",
    "PhysicsOptions",
    "analyse",
    "body_model",
    "center_of_mass",
    "inverse_dynamics",
    "momentum",
    "physics_retarget",
    "report",
    "segment_kinematics",
    "support_from",
    "zmp",
]
