"""compare_static and trimmed on real outputs (the hand-made static forms run on ONNX Runtime):
what the contract accepts, and that each way of breaking it is caught."""

import numpy as np
import pytest

import handmade
from contract import assert_same, compare_static, count_outputs, padding, trimmed
from judge import run_ort

SHAPE = (4, 5)


@pytest.fixture(scope="module")
def nonzero_pair(models):
    """(original outputs, static outputs) of the bare NonZero on an input with 9 of 20 non-zero."""
    x = np.zeros(SHAPE, np.float32)
    x.reshape(-1)[[0, 3, 4, 7, 8, 11, 15, 18, 19]] = [1, np.nan, -2, 1e-40, 3, 4, 5, 6, 7]
    return run_ort(models["nonzero", SHAPE], {"x": x}), run_ort(models["nonzero_static", SHAPE], {"x": x})


@pytest.fixture(scope="module")
def x_mask_pair(models):
    rng = np.random.default_rng(7)
    feeds = {"x": handmade.specials([*SHAPE, 3], rng), "mask": handmade.mask(SHAPE, "random", rng)}
    return run_ort(models["x_mask", SHAPE], feeds), run_ort(models["x_mask_static", SHAPE], feeds)


def test_the_contract_holds_and_is_measured(nonzero_pair, x_mask_pair):
    want, got = nonzero_pair
    assert count_outputs(got) == {"y": "y_count"}
    assert compare_static(want, got, pads={"y": -1}) == {"y": (9, 20, 1)}
    # The axis given (as the CLI's report gives it) or found: the same cut.
    assert compare_static(want, got, axes={"y": 1}) == {"y": (9, 20, 1)}
    assert trimmed(got, {"y": "y_count"}, {"y": 1})["y"].tolist() == want["y"].tolist()
    assert padding(got, {"y": "y_count"}, {"y": 1})["y"].tolist() == [[-1] * 11] * 2
    # [capacity, rank] coordinates: the padded axis is 0.
    assert compare_static({"y": want["y"].T}, {"y": got["y"].T, "y_count": got["y_count"]}) == {"y": (9, 20, 0)}
    want, got = x_mask_pair
    count = int(got["y_count"])
    assert compare_static(want, got, pads={"y": 0}) == {"y": (count, 20, 0)}


def test_a_wrong_count_is_caught(nonzero_pair):
    want, got = nonzero_pair
    for count in (8, 10):
        with pytest.raises(AssertionError, match="y: shape"):
            compare_static(want, dict(got, y_count=np.array(count, np.int64)))
    with pytest.raises(AssertionError, match="capacity 20"):
        compare_static(want, dict(got, y_count=np.array(21, np.int64)), axes={"y": 1})
    with pytest.raises(AssertionError, match="not an int64 scalar"):
        compare_static(want, dict(got, y_count=np.array(9, np.int32)))
    with pytest.raises(AssertionError, match="not an int64 scalar"):
        compare_static(want, dict(got, y_count=np.array([9], np.int64)))


def test_wrong_values_or_padding_are_caught(nonzero_pair):
    want, got = nonzero_pair
    bad = got["y"].copy()
    bad[1, 0] += 1
    with pytest.raises(AssertionError, match="y: values differ"):
        compare_static(want, dict(got, y=bad))
    bad = got["y"].copy()
    bad[0, -1] = 0
    compare_static(want, dict(got, y=bad))  # the padding is left unchecked...
    with pytest.raises(AssertionError, match="padding is not all -1"):
        compare_static(want, dict(got, y=bad), pads={"y": -1})  # ...unless pads says what it is
    with pytest.raises(AssertionError, match="dtype"):
        compare_static(want, dict(got, y=got["y"].astype(np.int32)))
    with pytest.raises(AssertionError, match="y: shape"):  # no y_count: y is compared whole
        compare_static(want, {"y": got["y"]})
    with pytest.raises(AssertionError, match="outputs in one model only"):
        compare_static(want, dict(got, z=got["y"]))


def test_nan_and_the_sign_of_zero_count(models):
    rng = np.random.default_rng(8)
    feeds = {"x": handmade.specials([*SHAPE, 3], rng), "mask": handmade.mask(SHAPE, "all", rng)}
    want = run_ort(models["x_mask", SHAPE], feeds)
    got = run_ort(models["x_mask_static", SHAPE], feeds)
    compare_static(want, got)
    nan, negative_zero = np.isnan(got["y"]), (got["y"] == 0) & np.signbit(got["y"])
    assert nan.sum() == 1 and negative_zero.sum() == 1
    with pytest.raises(AssertionError, match="y: NaN at"):
        compare_static(want, dict(got, y=np.where(nan, np.float32(0), got["y"])))
    with pytest.raises(AssertionError, match="y: 1 values differ"):
        compare_static(want, dict(got, y=np.where(negative_zero, np.float32(0), got["y"])))
    a = np.array([0.0, np.nan, 1.0], np.float32)
    assert_same("a", a, a.copy())
    with pytest.raises(AssertionError, match="NaN at"):
        assert_same("a", a, np.array([0.0, 2.0, 1.0], np.float32))
    with pytest.raises(AssertionError, match="values differ"):
        assert_same("a", a, np.array([-0.0, np.nan, 1.0], np.float32))
    # Up to rounding (float reductions): zeros of either sign alike, NaN still placed exactly.
    assert_same("a", a, np.array([-0.0, np.nan, np.nextafter(np.float32(1), 2)], np.float32), (1e-6, 0))
    with pytest.raises(AssertionError, match="values differ"):
        assert_same("a", a, np.array([0.0, np.nan, 1.001], np.float32), (1e-6, 0))


def test_an_output_full_to_capacity_needs_no_axis(models):
    x = np.ones(SHAPE, np.float32)
    want = run_ort(models["nonzero", SHAPE], {"x": x})
    got = run_ort(models["nonzero_static", SHAPE], {"x": x})
    assert compare_static(want, got, pads={"y": -1}) == {"y": (20, 20, 1)}
