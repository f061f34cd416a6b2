"""A mocap library, not one clip: keyframe summaries of every clip, their poses in a rig-independent
form, an index of the clips, and search by pose (:mod:`.poses`, :mod:`.catalogue`, :mod:`.search`)."""
