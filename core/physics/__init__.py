"""Physics layer: body model, dynamics (CoM, momentum, ZMP, inverse dynamics), displacement
mapping, an unscented Kalman filter and the physics-aware retargeting driver."""
