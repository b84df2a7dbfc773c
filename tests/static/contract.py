"""The output contract of `nonzero optimize --static` (issue 26, item 3), as the judge checks it.

Every graph output whose length was data-dependent keeps its name and is padded to a fixed
capacity along one axis (its padded axis): coordinates `[rank, capacity]` padded with -1 (or
`[capacity, rank]`), values padded with 0. Each such output `<name>` gains an int64 scalar output
`<name>_count`. Cutting `<name>` to `<name>_count` along its padded axis must give exactly the
original model's output. Imports no pytest."""

import numpy as np

SUFFIX = "_count"


def count_outputs(outputs):
    """{padded output name: its count output name} for every `<name>_count` output of a static
    model's outputs (a dict by name) whose `<name>` is also an output."""
    return {name[: -len(SUFFIX)]: name for name in outputs
            if name.endswith(SUFFIX) and name[: -len(SUFFIX)] in outputs}


def _count(value, name):
    value = np.asarray(value)
    assert value.dtype == np.int64 and value.shape == (), f"{name}: {value.dtype} {value.shape}, not an int64 scalar"
    return int(value)


def padded_axis(static, original, name=""):
    """The one axis along which a padded output's shape differs from the original's (the two
    agree on rank and every other length). When they agree everywhere (the count equals the
    capacity), None: no axis needs cutting."""
    assert static.ndim == original.ndim, f"{name}: rank {static.ndim}, the original's {original.ndim}"
    axes = [a for a in range(static.ndim) if static.shape[a] != original.shape[a]]
    assert len(axes) <= 1, f"{name}: shape {static.shape} differs from {original.shape} on axes {axes}"
    return axes[0] if axes else None


def trimmed(outputs, counts, axes):
    """The static model's `outputs` (a dict by name) with each padded output cut to its count
    along its padded axis and the count outputs dropped. `counts` maps a padded output's name to
    its count output's name (count_outputs), `axes` maps it to its padded axis. Asserts that
    each count is an int64 scalar within the capacity."""
    dropped = set(counts.values())
    result = {}
    for name, value in outputs.items():
        if name in dropped:
            continue
        value = np.asarray(value)
        if name in counts:
            count, axis = _count(outputs[counts[name]], counts[name]), axes[name]
            assert 0 <= count <= value.shape[axis], f"{name}: count {count}, capacity {value.shape[axis]}"
            value = np.take(value, np.arange(count), axis=axis)
        result[name] = value
    return result


def padding(outputs, counts, axes):
    """{padded output name: the part past its count} (the padding), for checking its value."""
    result = {}
    for name, count_name in counts.items():
        value, axis = np.asarray(outputs[name]), axes[name]
        count = _count(outputs[count_name], count_name)
        result[name] = np.take(value, np.arange(count, value.shape[axis]), axis=axis)
    return result


def assert_same(name, got, want, rounding=None):
    """Exact equality of two arrays: dtype, shape, NaN positions, the other values, and the sign
    of zeros (-0.0 is not 0.0). With `rounding` (rtol, atol), float values may differ by that
    much (np.isclose), zeros of either sign alike; NaN positions must still agree."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, want {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, want {want.shape}"
    if got.dtype.kind not in "fc":
        where = np.argwhere(got != want)[:8].tolist()
        assert np.array_equal(got, want), f"{name}: values differ at {where}"
        return
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    where = np.argwhere(nan_got != nan_want)[:8].tolist()
    assert np.array_equal(nan_got, nan_want), f"{name}: NaN at {where} in one only"
    g, w = got[~nan_got], want[~nan_want]
    if rounding is None:
        same = (g == w) & (np.signbit(g) == np.signbit(w))
    else:
        rtol, atol = rounding
        same = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=False)
    if not same.all():
        where = np.flatnonzero(~same)[:8]
        raise AssertionError(
            f"{name}: {len(np.flatnonzero(~same))} values differ, e.g. {g[where].tolist()} vs {w[where].tolist()}")


def compare_static(original_outputs, static_outputs, axes=None, rounding=None, pads=None):
    """Asserts the contract: `static_outputs` (a static model's outputs by name), trimmed to
    their counts, equal `original_outputs` (the dynamic original's outputs by name) exactly,
    output by output, and nothing else is left over. The count outputs are found by name
    (`<name>_count`); each padded axis is `axes[name]` when given (the CLI's report has them),
    else the one axis whose length differs from the original's. `rounding` is None (exact) or
    {output name: (rtol, atol)} for the float reductions that are exact only up to rounding.
    `pads` ({padded output name: fill}, e.g. -1 for coordinates, 0 for values) also checks
    that everything past each count is that fill (a +0.0 for a float 0).
    Returns {padded output name: (count, capacity, axis)}."""
    static_outputs = {k: np.asarray(v) for k, v in static_outputs.items()}
    counts = count_outputs(static_outputs)
    left = sorted((set(static_outputs) - set(counts.values())) ^ set(original_outputs))
    assert not left, f"outputs in one model only: {left}"
    axes = dict(axes or {})
    for name in counts:
        if name not in axes:
            count = _count(static_outputs[counts[name]], counts[name])
            axis = padded_axis(static_outputs[name], np.asarray(original_outputs[name]), name)
            if axis is None:  # full to capacity: an axis whose length is the count (nothing to cut)
                candidates = [a for a, n in enumerate(static_outputs[name].shape) if n == count]
                assert candidates, f"{name}: no axis of length {count} in {static_outputs[name].shape}"
                axis = candidates[0]
            axes[name] = axis
    cut = trimmed(static_outputs, counts, axes)
    for name, want in original_outputs.items():
        assert_same(name, cut[name], want, (rounding or {}).get(name))
    past = padding(static_outputs, counts, axes)
    for name, fill in (pads or {}).items():
        pad = past[name]
        ok = np.all(pad == fill) and (fill != 0 or not np.any(np.signbit(pad)))
        assert ok, f"{name}: padding is not all {fill}: {np.unique(pad)[:8].tolist()}"
    return {name: (_count(static_outputs[c], c), static_outputs[name].shape[axes[name]], axes[name])
            for name, c in counts.items()}
