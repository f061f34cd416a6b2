import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.io.bvh import read_bvh
from core.keyframes import PoseMetric, evaluate, extract_keyframes, joint_weights, position_errors, reconstruct
from core.keyframes.error import measured_points
from core.keyframes.threshold import threshold_keys
from tests.conftest import shared_file
from tests.core.test_kinematics import fk_by_matrices


@pytest.fixture(scope="module")
def clip():
    return synthetic.demo_clip()


def test_reconstruct_is_exact_at_keys_and_slerps_between(clip):
    keys = np.array([0, 39, 40, 100, clip.n_frames - 1])
    rebuilt = reconstruct(clip, keys)
    assert np.allclose(rebuilt.rotations[keys], clip.rotations[keys])
    # frame 70 lies 30/60 of the way from key 40 to key 100: hand-built slerp per joint
    u = 0.5
    for j in range(clip.skeleton.n_joints):
        a, b = clip.rotations[40, j], clip.rotations[100, j]
        if np.dot(a, b) < 0:
            b = -b
        theta = np.arccos(np.clip(np.dot(a, b), -1, 1))
        expected = a if theta < 1e-9 else (np.sin((1 - u) * theta) * a + np.sin(u * theta) * b) / np.sin(theta)
        assert abs(np.dot(rebuilt.rotations[70, j], expected)) == pytest.approx(1, abs=1e-9)
    assert np.allclose(rebuilt.translations[70], 0.5 * (clip.translations[40] + clip.translations[100]))


@pytest.mark.parametrize("method", ["threshold", "uniform"])
@pytest.mark.parametrize("count", [2, 3, 17, 50])
def test_count_is_met_exactly_with_ends(clip, method, count):
    keys = extract_keyframes(clip, method, count=count).keys
    assert len(keys) == count and keys[0] == 0 and keys[-1] == clip.n_frames - 1
    assert np.all(np.diff(keys) > 0)


def test_ratio_target(clip):
    keys = extract_keyframes(clip, "threshold", ratio=0.1).keys
    assert len(keys) == round(0.1 * clip.n_frames)


def test_threshold_rule_follows_algorithm_1(clip):
    metric = PoseMetric.for_motion(clip)
    delta = 0.05
    keys = threshold_keys(clip, metric, delta)
    # independent per-frame walk of Algorithm 1
    expected, last = [0], 0
    for t in range(1, clip.n_frames):
        if metric(clip.rotations[t], clip.translations[t], clip.rotations[last], clip.translations[last]) > delta:
            expected.append(t)
            last = t
    if expected[-1] != clip.n_frames - 1:
        expected.append(clip.n_frames - 1)
    assert keys.tolist() == expected
    result = extract_keyframes(clip, "threshold", threshold=delta)
    assert result.keys.tolist() == expected and result.params["threshold"] == delta


def test_max_error_target_is_guaranteed_and_small(clip):
    bound = 0.05
    result = extract_keyframes(clip, "threshold", max_error=bound)
    rebuilt = reconstruct(clip, result.keys)
    err = position_errors(clip, rebuilt)  # heads, tips and sides: the measure the reports use
    assert err.max() <= bound
    assert len(result.keys) < clip.n_frames / 2
    # one key fewer (dropping the least useful) breaks the bound or is at the count limit
    fewer = extract_keyframes(clip, "threshold", count=len(result.keys) - 1)
    fewer_err = position_errors(clip, reconstruct(clip, fewer.keys))
    assert fewer_err.max() > bound * 0.5


def test_error_definitions_against_independent_fk(clip):
    keys = extract_keyframes(clip, "uniform", count=12).keys
    rebuilt = reconstruct(clip, keys)
    metric = PoseMetric.for_motion(clip)
    summary, per_frame = evaluate(clip, rebuilt, metric)
    # the measured points by 4×4 matrices: heads, then End Sites (the demo's leaves all have one),
    # then two side points per bone (checked by hand in test_keyframe_error.py)
    points = measured_points(clip.skeleton)
    assert len(points) == 3 * clip.skeleton.n_joints + len(clip.skeleton.end_site_parents)
    local = np.concatenate((points.offsets, np.ones((len(points), 1))), axis=1)
    a = np.einsum(
        "tpij,pj->tpi", fk_by_matrices(clip.skeleton, clip.translations, clip.rotations, True)[:, points.owner], local
    )
    b = np.einsum(
        "tpij,pj->tpi",
        fk_by_matrices(clip.skeleton, rebuilt.translations, rebuilt.rotations, True)[:, points.owner],
        local,
    )
    dist = np.linalg.norm(a - b, axis=-1)
    heads = dist[:, : clip.skeleton.n_joints]
    assert dist.max() > heads.max()  # tips and sides add to the joints' error
    assert summary["position_mean"] == pytest.approx(dist.mean(), rel=1e-9)
    assert summary["position_max"] == pytest.approx(dist.max(), rel=1e-9)
    assert np.allclose(per_frame, dist.mean(axis=1))
    # rotation error of one frame by hand: root travel term + weighted half-angles
    t = 5
    w = joint_weights(clip.skeleton)
    half = [np.arccos(min(1.0, abs(np.dot(clip.rotations[t, j], rebuilt.rotations[t, j])))) for j in range(len(w))]
    travel = np.linalg.norm(clip.translations[t, 0] - rebuilt.translations[t, 0]) / (0.5 * clip.skeleton.size())
    by_hand = np.dot(w, half) + metric.translation_weight * travel
    assert metric(
        clip.rotations[t], clip.translations[t], rebuilt.rotations[t], rebuilt.translations[t]
    ) == pytest.approx(by_hand)


def test_default_weights_follow_the_hierarchy():
    sk = synthetic.humanoid()
    w = joint_weights(sk)
    assert w.sum() == pytest.approx(1)
    assert w[sk.index("Hips")] > w[sk.index("LeftUpLeg")] > w[sk.index("LeftLeg")] > w[sk.index("LeftToeBase")] > 0
    assert w[sk.index("Hips")] == pytest.approx(2 * w[sk.index("LeftToeBase")], rel=0.1)
    main = joint_weights(sk, "MAIN")
    assert main[sk.index("LeftHand")] == 0 and main[sk.index("Head")] > 0
    custom = joint_weights(sk, "UNIFORM", {"Head": 0.0})
    assert custom[sk.index("Head")] == 0 and np.allclose(custom[custom > 0], 1 / (sk.n_joints - 1))
    with pytest.raises(KeyError):
        joint_weights(sk, overrides={"Tail": 1.0})


def test_bad_targets_are_rejected(clip):
    with pytest.raises(ValueError, match="exactly one target"):
        extract_keyframes(clip, count=3, ratio=0.1)
    with pytest.raises(ValueError, match="unknown keyframe method"):
        extract_keyframes(clip, "magic", count=3)
    with pytest.raises(ValueError, match="ratio"):
        extract_keyframes(clip, ratio=1.5)


def test_keys_are_stable_for_identical_quaternion_signs(clip):
    flipped = clip.copy()
    flipped.rotations[::2] *= -1  # same rotations, opposite signs
    a = extract_keyframes(clip, "threshold", count=20).keys
    b = extract_keyframes(flipped, "threshold", count=20).keys
    assert a.tolist() == b.tolist()
    assert np.allclose(np.abs(quat.dot(reconstruct(flipped, b).rotations, reconstruct(clip, a).rotations)), 1)


def test_real_capture_counts_and_quality():
    m = read_bvh(shared_file("cmu_bvh_cgspeed/05_02.bvh"))
    metric = PoseMetric.for_motion(m)
    count = round(0.05 * m.n_frames)
    for method in ("threshold", "uniform"):
        keys = extract_keyframes(m, method, count=count).keys
        assert len(keys) == count and keys[0] == 0 and keys[-1] == m.n_frames - 1
    # the reference figure for 56 uniform keys (the T-pose at frame 0 smeared over
    # the first segment), reproduced when jumps are not protected
    smeared = extract_keyframes(m, "uniform", count=count, keep_jumps=False).keys
    summary = evaluate(m, reconstruct(m, smeared), metric)[0]
    heads = position_errors(m, reconstruct(m, smeared))[:, : m.skeleton.n_joints]
    assert heads.mean() == pytest.approx(0.161, abs=0.002)  # the figure was on joints only
    assert summary["position_mean"] == pytest.approx(0.1726, abs=0.002) and summary["position_max"] > 10
    kept = extract_keyframes(m, "uniform", count=count)
    assert {0, 1} <= set(kept.keys.tolist()) and kept.params["jump_frames"] == [0, 1]
    assert evaluate(m, reconstruct(m, kept.keys), metric)[0]["position_max"] < 3


def test_jumps_are_found_only_where_the_pose_jumps():
    from core.keyframes.jumps import jump_frames

    clip = synthetic.demo_clip()
    metric = PoseMetric.for_motion(clip)
    assert len(jump_frames(clip, metric)) == 0
    teleport = clip.copy()
    teleport.translations[200:, 0] += [3.0, 0.0, 0.0]
    assert jump_frames(teleport, metric).tolist() == [199, 200]
    keys = extract_keyframes(teleport, "uniform", count=10).keys
    assert {199, 200} <= set(keys.tolist()) and len(keys) == 10


def test_blockwise_evaluation_equals_the_whole_rebuild(clip, monkeypatch):
    import core.kinematics
    from core.keyframes import evaluate_keys

    monkeypatch.setattr(core.kinematics, "CHUNK", 37)  # many uneven blocks
    keys = extract_keyframes(clip, "uniform", count=15).keys
    metric = PoseMetric.for_motion(clip)
    whole, per_frame = evaluate(clip, reconstruct(clip, keys), metric)
    blocks, per_frame_blocks = evaluate_keys(clip, keys, metric)
    numbers = [k for k, v in whole.items() if isinstance(v, float)]
    assert len(numbers) == 5 and set(blocks) == set(whole)
    assert {k: blocks[k] for k in numbers} == pytest.approx({k: whole[k] for k in numbers}, rel=1e-12)
    assert blocks["per_bone_max"] == pytest.approx(whole["per_bone_max"], rel=1e-12)
    assert [blocks[k] for k in ("worst_bone", "worst_point", "worst_frame")] == [
        whole[k] for k in ("worst_bone", "worst_point", "worst_frame")
    ]
    assert np.allclose(per_frame, per_frame_blocks)
