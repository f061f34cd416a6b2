import threading

import numpy as np
import pytest

from core.blas import blas_threads, one_blas_thread


def test_one_blas_thread_inside_the_block_and_the_count_put_back():
    before = blas_threads()
    if before is None:
        pytest.skip("NumPy here does not use OpenBLAS: the block does nothing")
    with one_blas_thread():
        assert blas_threads() == 1
        with one_blas_thread():  # nested: still one, and the outer block's exit restores
            assert blas_threads() == 1
        assert blas_threads() == 1
        a = np.random.default_rng(0).normal(size=(300, 300))
        assert np.allclose((a @ a.T) @ np.linalg.inv(a @ a.T), np.eye(300), atol=1e-6)  # products still right
    assert blas_threads() == before
    with pytest.raises(ValueError, match="inside"), one_blas_thread():
        raise ValueError("inside")
    assert blas_threads() == before


def test_overlapping_blocks_from_two_threads_restore_once_both_left():
    before = blas_threads()
    if before is None:
        pytest.skip("NumPy here does not use OpenBLAS")
    entered, release = threading.Event(), threading.Event()

    def worker():
        with one_blas_thread():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=worker)
    with one_blas_thread():
        t.start()
        entered.wait(10)
    assert blas_threads() == 1  # the worker's block is still open
    release.set()
    t.join(10)
    assert blas_threads() == before


def test_numpy_built_with_openblas_is_found():
    """Every NumPy wheel Blender ships or CI installs (1.x: openblas64, 2.x: scipy-openblas) is limited, not skipped."""
    try:
        name = str(np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("name", ""))
    except (TypeError, KeyError):  # an older NumPy without the dict form
        pytest.skip("NumPy does not say its BLAS")
    if "openblas" not in name:
        pytest.skip(f"NumPy uses {name}, not OpenBLAS")
    assert blas_threads() is not None
