"""The judge on hand-made models (handmade.py, opset 17, fixed shapes): OpenVINO calls the dynamic
originals dynamic and names NonZero, calls the hand-built static forms static, and those static
forms on ONNX Runtime, OpenVINO CPU and IREE llvm-cpu, trimmed to their counts, equal the
dynamic original on ONNX Runtime exactly, for masks random, all false and all true, with NaN,
-0.0 and denormals in x. IREE reads denormals as zero in comparisons (asserted below), so its
NonZero masks are compared against the original on the flushed input."""

import numpy as np
import pytest

import handmade
from conftest import SHAPES, TAILS
from judge import compare_static, openvino_dynamic, openvino_verdict, run_iree, run_openvino, run_ort

CASES = handmade.MASK_CASES
ENGINES = {"onnxruntime": run_ort, "openvino": run_openvino, "iree": run_iree}


def nonzero_input(shape, case, rng):
    """x for NonZero: "random" has about half its elements +0.0, and NaN, -0.0 and denormals;
    "none" is all zeros (+0.0 and -0.0); "all" has no zero, NaN and denormals included."""
    if case == "random":
        return handmade.specials(shape, rng, zeros=0.5)
    if case == "none":
        return np.where(rng.random(shape) < 0.5, np.float32(0.0), np.float32(-0.0)).astype(np.float32)
    x = rng.standard_normal(shape).astype(np.float32)
    x[x == 0] = 1.0
    flat = x.reshape(-1)
    places = rng.choice(flat.size, 1 + len(handmade.DENORMALS), replace=False)
    flat[places] = np.concatenate([[np.nan], handmade.DENORMALS])
    return x


def denormal_count(x):
    return int(np.count_nonzero((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)))


@pytest.mark.parametrize("shape", SHAPES)
def test_openvino_names_nonzero_in_the_dynamic_originals(models, shape):
    sources, followers = openvino_dynamic(models["nonzero", shape])
    # An op whose output is a graph output takes the output's name.
    assert (sources, followers) == ([("NonZero", "y")], [])
    sources, followers = openvino_dynamic(models["x_mask", shape])
    assert sources == [("NonZero", "nonzero")]
    # OpenVINO writes the Transpose of a [1, count] tensor as a Reshape.
    transpose = ("Reshape" if len(shape) == 1 else "Transpose", "transpose")
    assert followers == [transpose, ("GatherND", "y")]
    # x[mask] = v: every input and output shape is static, the count inside is not, and
    # model.is_dynamic() says so as the walk does. OpenVINO converts Expand to Broadcast.
    import openvino as ov

    model = ov.convert_model(str(models["mask_assign", shape]))
    assert not any(p.get_partial_shape().is_dynamic for p in list(model.inputs) + list(model.outputs))
    assert model.is_dynamic()
    sources, followers = openvino_dynamic(models["mask_assign", shape])
    assert sources == [("NonZero", "nonzero")]
    assert followers == [transpose, ("Broadcast", "expand")]
    assert openvino_verdict(models["mask_assign", shape])[0] is True


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["nonzero_static", "x_mask_static", "mask_assign_static"])
def test_openvino_finds_the_static_forms_static(models, shape, kind):
    assert openvino_verdict(models[kind, shape]) == (False, [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", SHAPES)
def test_nonzero_static_form_equals_the_original(models, shape, case, engine):
    rng = np.random.default_rng([len(shape), CASES.index(case), 1])
    x = nonzero_input(shape, case, rng)
    # IREE's CPU code reads denormals as zero in comparisons: it is judged on the flushed input.
    want_input = handmade.flush_denormals(x) if engine == "iree" else x
    want = run_ort(models["nonzero", shape], {"x": want_input})
    got = ENGINES[engine](models["nonzero_static", shape], {"x": x})
    counts = compare_static(want, got, pads={"y": -1})
    numel = int(np.prod(shape))
    nonzeros = np.count_nonzero(want_input)
    assert counts == {"y": (nonzeros, numel, 1)}
    assert nonzeros == {"none": 0, "all": numel - (engine == "iree") * denormal_count(x)}.get(case, nonzeros)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", SHAPES)
def test_x_mask_static_form_equals_the_original(models, shape, case, engine):
    rng = np.random.default_rng([len(shape), CASES.index(case), 2])
    # Denormals here are values moved, never compared: IREE keeps their bits.
    feeds = {"x": handmade.specials(list(shape) + TAILS[shape], rng), "mask": handmade.mask(shape, case, rng)}
    want = run_ort(models["x_mask", shape], feeds)
    got = ENGINES[engine](models["x_mask_static", shape], feeds)
    counts = compare_static(want, got, pads={"y": 0})
    assert counts == {"y": (int(feeds["mask"].sum()), int(np.prod(shape)), 0)}
    if case != "none":
        assert denormal_count(got["y"]) == denormal_count(want["y"])


@pytest.mark.parametrize("v", [1.5, np.nan, -0.0, 1e-40])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", SHAPES)
def test_mask_assign_where_equals_the_original(models, shape, case, engine, v):
    rng = np.random.default_rng([len(shape), CASES.index(case), 3])
    feeds = {"x": handmade.specials(shape, rng), "mask": handmade.mask(shape, case, rng),
             "v": np.array(v, np.float32)}
    want = run_ort(models["mask_assign", shape], feeds)
    got = ENGINES[engine](models["mask_assign_static", shape], feeds)
    if engine == "onnxruntime" and v == 0 and np.signbit(v) and case != "none":
        # ONNX Runtime 1.31.1's Where writes +0.0 for a -0.0 from its second input (v here).
        assert np.all(np.signbit(want["y"][feeds["mask"]]))
        want = {"y": np.where(feeds["mask"], np.float32(0.0), want["y"])}
    assert compare_static(want, got) == {}
    if case == "all":
        assert np.array_equal(got["y"], np.full(shape, v, np.float32), equal_nan=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_iree_reads_denormals_as_zero_in_comparisons(models, shape):
    """The flush the tests above allow for, asserted: IREE's own NonZero and the static form's
    Equal(x, 0) both count a denormal as zero (where ONNX Runtime and OpenVINO do not), while a
    Where or Gather moves a denormal's bits unchanged."""
    x = np.zeros(shape, np.float32)
    flat = x.reshape(-1)
    flat[: len(handmade.DENORMALS)] = handmade.DENORMALS
    flat[-1] = 2.0
    assert np.count_nonzero(x) == len(handmade.DENORMALS) + 1
    iree_dynamic = run_iree(models["nonzero", shape], {"x": x})["y"]
    iree_static = run_iree(models["nonzero_static", shape], {"x": x})
    assert iree_dynamic.tolist() == np.array(np.nonzero(handmade.flush_denormals(x))).tolist()
    assert int(iree_static["y_count"]) == 1
    assert run_ort(models["nonzero", shape], {"x": x})["y"].shape == (len(shape), len(handmade.DENORMALS) + 1)
    assert int(run_openvino(models["nonzero_static", shape], {"x": x})["y_count"]) == len(handmade.DENORMALS) + 1
    kept = run_iree(models["mask_assign_static", shape], {
        "x": x, "mask": np.zeros(shape, bool), "v": np.array(0, np.float32)})["y"]
    assert kept.tobytes() == x.tobytes()


def test_onnxruntime_where_drops_the_sign_of_a_zero_from_x(models):
    """ONNX Runtime 1.31.1's Where selects each input against 0 and then merges the two, taking
    the first unless it equals 0: a -0.0 from X (the second input) comes out +0.0, a -0.0 from
    Y keeps its sign. OpenVINO and IREE keep both. So a bit-exact static form puts the values
    whose sign must survive in Y (handmade.x_mask_static does)."""
    shape = (4, 5)
    x = np.full(shape, -0.0, np.float32)
    mask = np.zeros(shape, bool)
    mask[0] = True
    where = models["mask_assign_static", shape]  # Where(mask, v, x)
    feeds = {"x": x, "mask": mask, "v": np.array(-0.0, np.float32)}
    y = run_ort(where, feeds)["y"]
    assert np.array_equal(np.signbit(y), ~mask)  # from v (X): +0.0; from x (Y): -0.0
    for engine in (run_openvino, run_iree):
        assert np.all(np.signbit(engine(where, feeds)["y"]))


def test_openvino_reads_nan_as_greater(models):
    """OpenVINO CPU's Greater and GreaterOrEqual answer true for a NaN on some CPUs
    (openvinotoolkit/openvino issues 31196 and 35927), where ONNX Runtime and IREE answer false, as
    IEEE 754 does; Less, LessOrEqual and Equal agree on all three. So where an export compares a score holding a NaN
    with a threshold, OpenVINO's original and static model both select it, and
    test_exports_after.py judges OpenVINO's static output against OpenVINO's original there."""
    x = np.array([np.nan, 0.2, 0.7, -np.nan, 0.5, 1e-40], np.float32)
    path = models["comparisons", (6,)]
    ieee = {op: getattr(np, name)(x, np.float32(0.5)).tolist() for op, name in (
        ("Greater", "greater"), ("GreaterOrEqual", "greater_equal"), ("Less", "less"),
        ("LessOrEqual", "less_equal"), ("Equal", "equal"))}
    for engine in (run_ort, run_iree):
        assert {k: v.tolist() for k, v in engine(path, {"x": x}).items()} == ieee
    nan = np.isnan(x)
    openvino = {op: np.where(nan, op.startswith("Greater"), ieee[op]).tolist() for op in ieee}
    got = {k: v.tolist() for k, v in run_openvino(path, {"x": x}).items()}
    # It depends on the CPU: the fault is seen on Intel Xeon (AVX-512, AMX); on AMD EPYC (AVX2,
    # no AVX-512) OpenVINO answers as IEEE 754 does, and its original and ONNX Runtime's agree.
    assert got in (openvino, ieee), got


def test_iree_reads_denormals_as_zero_in_arithmetic(models):
    """IREE's CPU code reads a denormal as zero in arithmetic too (x * 2, x + y), where ONNX
    Runtime and OpenVINO CPU compute with it: its results are those of the flushed inputs. So a
    masked write that computes (`x[m] += v`, `x[m] *= 2`) gives a zero of the flushed sign where
    a denormal is written, in IREE's original and static model alike, and
    test_exports_after.py judges IREE's static output against IREE's original there."""
    x = np.array([1e-40, -1e-40, 1.4e-45, 0.5, -0.0, 3.0], np.float32)
    y = np.array([-0.0, 0.0, -0.0, 1e-40, 1e-40, 1e-40], np.float32)
    path = models["arithmetic", (6,)]
    bits = lambda out: {k: v.tobytes() for k, v in out.items()}  # noqa: E731
    ieee = {"mul": (x * np.float32(2)).tobytes(), "add": (x + y).tobytes()}
    assert bits(run_ort(path, {"x": x, "y": y})) == ieee
    assert bits(run_openvino(path, {"x": x, "y": y})) == ieee
    fx, fy = handmade.flush_denormals(x), handmade.flush_denormals(y)
    assert bits(run_iree(path, {"x": x, "y": y})) == {"mul": (fx * np.float32(2)).tobytes(), "add": (fx + fy).tobytes()}
