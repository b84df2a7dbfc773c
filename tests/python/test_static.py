"""`nonzero optimize --static` (issue 26) on real exports exactly as their exporters wrote them:
models/exported (TorchScript opset 17, dynamo opset 18) and issue 25's pattern exports
(tf2onnx, paddle2onnx, torch patterns). For each, with every input shape fixed:

- what stays dynamic is exactly the list below (op, reason code), and the CLI then exits 1
  naming each and writes nothing, unless --allow-dynamic;
- a fully static result has standard ONNX ops only (no `nonzero` op, no function, no NonZero),
  fixed input shapes and the original's opset, and on ONNX Runtime's built-in kernels its
  outputs, cut to their `<name>_count` along the padded axis, equal the original's: exactly
  (dtype, shape, values, NaN places), or up to float rounding for the float reductions named
  below; for random masks, all false, all true, one true, and floats with NaN, -0.0 and a
  denormal; and also at --capacity 3, where the first 3 in row-major order are kept.

OpenVINO's and IREE's verdicts on the same outputs are tests/static (the `static` stage)."""

import subprocess

import numpy as np
import onnx
import pytest

import static_cases as sc
from conftest import session
from test_optimize import ort_dylib
from test_real_exports import host_cannot_load

EXPORTS = sc.exports()
IDS = [e[0] for e in EXPORTS]

# (op, reason) of each node left dynamic, per export; an export not listed becomes static.
# (y = x[m] if ... else x[~m] is static: each branch's selection padded, the If's y_count from
# both: emit-static's if_outputs.rs.)
LEFT = {}
# Outputs that are float sums or means over the selection: equal up to rounding (the order of
# the additions differs), which --static allows.
FLOAT_REDUCTIONS = {
    "tf2onnx/masked_reduce_sum_tf2onnx.onnx": {"Identity:0"},
    "tf2onnx/masked_count_mean_tf2onnx.onnx": {"Identity:0"},
    # x[m].prod(0): the padding reads as 1, the product's order may differ.
    "torch_patterns/masked_prod_ts17.onnx": {"y"},
    "torch_patterns/masked_prod_dynamo18.onnx": {"y"},
}
# Exports whose selections are nested (boxes filtered by score, then the kept boxes by size).
NESTED = {"exported/detection_postprocess_dynamo18.onnx", "exported/detection_postprocess_ts17.onnx",
          "families/superpoint_dynamo18.onnx"}  # the pixels above the threshold, then off the border
DATA_DEPENDENT = {"NonZero", "NonMaxSuppression", "Unique", "Compress"}


def assert_equal(name, got, want, rounding, written=None):
    """Exact equality; `rounding` allows float rounding. `written`: the bool positions a masked
    write wrote, where a written -0.0 may read +0.0 (ONNX Runtime's Where, docs/static.md):
    asserted to be the only sign difference."""
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if rounding:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
    elif got.dtype.kind == "f":
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        assert np.array_equal(got, want, equal_nan=True), (name, got, want)
        # -0.0 and 0.0 are equal as numbers: compare the sign bits too.
        differ = np.signbit(got) != np.signbit(want)
        allowed = np.zeros_like(differ) if written is None else written & (want == 0) & np.signbit(want)
        assert not (differ & ~allowed).any(), (name, np.argwhere(differ & ~allowed))
    else:
        assert np.array_equal(got, want), (name, got, want)


def static_model(export_id, capacity=None):
    _, path, entry = EXPORTS[IDS.index(export_id)]
    rc, text, written, report = sc.make_static(path, sc.fixed_shapes(path, entry), capacity=capacity)
    assert rc == 0, text
    return path, entry, written, report


@pytest.mark.parametrize("export_id", IDS)
def test_what_stays_dynamic_is_named(export_id):
    _, path, entry = EXPORTS[IDS.index(export_id)]
    shapes = sc.fixed_shapes(path, entry)
    rc, text, written, report = sc.make_static(path, shapes, allow_dynamic=True)
    assert rc == 0, text
    left = sorted((l["op"], l["reason"]) for l in report["left_nodes"])
    assert left == sorted(LEFT.get(export_id, [])), text
    assert report["static"]["input_shapes"] == shapes
    if left:
        rc, text, written, report = sc.make_static(path, shapes)
        assert rc == 1 and written is None and report is None, text
        assert "still dynamic, nothing written" in text
        for op, reason in left:
            assert f"{op} " in text and reason in text, text


def every_node(graph):
    """The nodes of `graph` and of its If, Loop and Scan bodies."""
    for node in graph.node:
        yield node
        for a in node.attribute:
            for body in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from every_node(body)


@pytest.mark.parametrize("export_id", [i for i in IDS if i not in LEFT])
def test_static_model_is_standard_and_fixed(export_id):
    path, _, written, report = static_model(export_id)
    original, model = onnx.load(path), onnx.load(written)
    onnx.checker.check_model(model)
    assert not model.functions
    assert [(o.domain, o.version) for o in model.opset_import] == [
        (o.domain, o.version) for o in original.opset_import]
    ops = {(n.domain, n.op_type) for n in every_node(model.graph)}
    assert all(domain in ("", "ai.onnx") for domain, _ in ops), ops
    assert not DATA_DEPENDENT & {op for _, op in ops}, ops
    for i in model.graph.input:
        dims = i.type.tensor_type.shape.dim
        assert all(d.HasField("dim_value") for d in dims), i
    counts = report["static"]["count_outputs"]
    names = [o.name for o in model.graph.output]
    assert names == [o.name for o in original.graph.output] + [c["count"] for c in counts.values()]


def writes(report, name, feeds, outputs, value):
    """Where a masked write of this export may have written `name`: every element that differs
    from the data it was written over is certainly written; elements equal to it (a -0.0 written
    over a +0.0, say) are judged by the element's own value only, as allowed in assert_equal."""
    if not any(r["kind"] == "masked-write" for r in report["static"]["rewrites"]):
        return None
    return np.ones(value.shape, dtype=bool)


@pytest.mark.parametrize("capacity", [None, 3])
@pytest.mark.parametrize("export_id", [i for i in IDS if i not in LEFT])
def test_trimmed_outputs_equal_the_original(export_id, capacity):
    path, entry, written, report = static_model(export_id, capacity)
    counts = report["static"]["count_outputs"]
    if host_cannot_load(onnx.load(path), onnx.load(written)):
        return  # ONNX Runtime 1.17 and IR 10 (the dynamo exports): both refused alike
    original, static = session(str(path), library=False), session(str(written), library=False)
    names = [o.name for o in static.get_outputs()]
    rounding = FLOAT_REDUCTIONS.get(export_id, set())
    compared = 0
    for case in sc.CASES:
        if case == "specials" and export_id in NMS:
            continue  # a real score of NaN (or -inf without a threshold): docs/static.md's exception
        for seed in range(2):
            feeds = sc.feeds(path, entry, case, seed)
            if sc.invalid(entry, case):
                # The export fails on these inputs (manifest); the static model fails too.
                with pytest.raises(Exception):
                    original.run(None, feeds)
                with pytest.raises(Exception):
                    static.run(None, feeds)
                continue
            want = dict(zip([o.name for o in original.get_outputs()], original.run(None, feeds)))
            got = sc.trimmed(static.run(None, feeds), names, counts)
            for name, value in want.items():
                if capacity is not None and export_id in NESTED and name in counts:
                    # The first selection is cut to the capacity; the second filters those rows:
                    # what is kept is an ordered subsequence of the original's rows.
                    kept, axis = got[name], counts[name]["axis"]
                    assert kept.shape[axis] <= capacity
                    rows = [np.take(value, i, axis=axis) for i in range(value.shape[axis])]
                    at = 0
                    for i in range(kept.shape[axis]):
                        row = np.take(kept, i, axis=axis)
                        while at < len(rows) and not np.array_equal(rows[at], row, equal_nan=True):
                            at += 1
                        assert at < len(rows), (export_id, case, name, "row not in the original's order")
                        at += 1
                    continue
                if capacity is not None and name in counts:
                    # The first `capacity` in row-major order, and the count saturates there.
                    axis = counts[name]["axis"]
                    value = np.take(value, np.arange(min(capacity, value.shape[axis])), axis=axis)
                elif capacity is not None:
                    continue  # may be computed from a cut selection: not the original's any more
                written = writes(report, name, feeds, want, value)
                assert_equal(f"{export_id} {case} {name}", got[name], value, name in rounding, written)
            compared += 1
    # Every case ran, but the invalid ones (ts17's `y[m] = v` with more than one true row) and
    # NMS's specials.
    skipped = {"specials"} if export_id in NMS else set()
    assert compared == 2 * len([c for c in sc.CASES if not sc.invalid(entry, c) and c not in skipped])


@pytest.mark.parametrize("export_id", [i for i in IDS if i not in LEFT])
def test_the_default_modes_output_is_lowered_then_made_static(export_id, tmp_path):
    """`nonzero optimize` first (the library's ops, in If and Loop bodies too, and their
    fallback functions), then `--static` on its output: the library's ops are lowered to their
    bodies, and the result is as standard and as static as from the export itself, with the
    same outputs once cut (random masks and all-false ones)."""
    _, path, entry = EXPORTS[IDS.index(export_id)]
    rewritten = tmp_path / "rewritten.onnx"
    done = subprocess.run([str(sc.CLI), "optimize", str(path), str(rewritten)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    library = {n.op_type for n in every_node(onnx.load(rewritten).graph) if n.domain == "nonzero"}
    rc, text, written, report = sc.make_static(rewritten, sc.fixed_shapes(path, entry))
    assert rc == 0, text
    assert report["static"]["lowered"] == sum(
        1 for n in every_node(onnx.load(rewritten).graph) if n.domain == "nonzero"), (library, text)
    model = onnx.load(written)
    assert not model.functions
    assert [(o.domain, o.version) for o in model.opset_import] == [
        (o.domain, o.version) for o in onnx.load(path).opset_import]
    assert not {n.op_type for n in every_node(model.graph)} & (DATA_DEPENDENT | library)
    if host_cannot_load(onnx.load(path), model):
        return  # ONNX Runtime 1.17 and IR 10 (the dynamo exports): both refused alike
    original, static = session(str(path), library=False), session(str(written), library=False)
    names = [o.name for o in static.get_outputs()]
    for case in ("random", "none"):
        feeds = sc.feeds(path, entry, case, 0)
        if sc.invalid(entry, case):
            continue
        want = dict(zip([o.name for o in original.get_outputs()], original.run(None, feeds)))
        got = sc.trimmed(static.run(None, feeds), names, report["static"]["count_outputs"])
        for name, value in want.items():
            assert_equal(f"{export_id} {case} {name}", got[name], value, name in FLOAT_REDUCTIONS.get(export_id, set()),
                         writes(report, name, feeds, want, value))


NMS = [i for i in IDS if "mask_nms" in i]


@pytest.mark.parametrize("target", [None, "qnn", "litert"])
@pytest.mark.parametrize("export_id", NMS)
def test_mask_then_nms_becomes_static(export_id, target):
    """nms(boxes[m], scores[m]): no NonZero is left; NMS reads every box with the masked ones
    scored -inf under a score threshold, then becomes the fixed-shape greedy Loop (unrolled
    picks for the NPU targets), whose rows are padded with -1 past `y_count`. The outputs (kept
    boxes, or indices among the masked boxes, remapped by a running count: litert's reads NMS's
    box column by a Slice), cut to the count, are exactly the original's. Not with the
    "specials" case: a real score of NaN or -inf is the documented exception (docs/static.md)."""
    _, path, entry = EXPORTS[IDS.index(export_id)]
    rc, text, written, report = sc.make_static(path, sc.fixed_shapes(path, entry), target=target)
    assert rc == 0, text
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert kinds.count("mask-then-nms") == 1 and kinds.count("fixed-nms") == 1, kinds
    # kept[nms(...)] reads boxes at the unremapped indices: the selections die with NonZero.
    assert kinds.count("nms-reader") == (1 if "indices" not in export_id else 0), kinds
    model = onnx.load(written)
    ops = {n.op_type for n in every_node(model.graph)}
    assert not ops & {"NonZero", "NonMaxSuppression"} and ("Loop" in ops) == (target is None), ops
    if host_cannot_load(onnx.load(path), model):
        return
    original, static = session(str(path), library=False), session(str(written), library=False)
    names = [o.name for o in static.get_outputs()]
    assert names == ["y", "y_count"]
    for case in [c for c in sc.CASES if c != "specials"]:
        for seed in range(3):
            feeds = sc.feeds(path, entry, case, seed)
            (want,) = original.run(None, feeds)
            got, count = static.run(None, feeds)
            assert_equal(f"{export_id} {case} {seed}", got[:count], want, False)
            # Past the count: -1 (indices) or +0.0 (boxes), docs/static.md's fill.
            fill = -1 if got.dtype == np.int64 else 0.0
            assert (got[count:] == fill).all(), (export_id, case, seed, got[count:])


def test_cli_check_and_refusals(tmp_path):
    """`--static --check` runs both models on the built-in kernels and compares the cut outputs;
    static-only flags without --static, --nonzero-domain with it, and a size that is not one
    are refused, naming the rule, with nothing written."""
    model, out = sc.EXPORTED / "x_mask_ts17.onnx", tmp_path / "out.onnx"
    shapes = ["--input-shape", "input_0=4,5,3", "--input-shape", "input_1=4,5"]
    done = subprocess.run([str(sc.CLI), "optimize", "--static", "--check", "--ort-dylib", ort_dylib(), *shapes,
                           str(model), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "check: 3 runs, every output, cut to its count, exactly equal" in done.stdout
    out.unlink()
    for args, why in (
        (["--capacity", "5"], "--static"),
        (["--static", "--nonzero-domain", *shapes], "choose one"),
        (["--static", "--input-shape", "input_0=4,a,3"], "'a' is not a size"),
        (["--static", *shapes, "--input-shape", "input_1=4,5"], "given twice"),
    ):
        done = subprocess.run([str(sc.CLI), "optimize", *args, str(model), str(out)], capture_output=True, text=True)
        assert done.returncode != 0 and why in done.stderr, (args, done.stderr)
        assert not out.exists()


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
@pytest.mark.parametrize("opset", [13, 17, 18])
def test_max_and_min_over_a_selection(dtype, opset, tmp_path):
    """x[m].max(0) and x[m].min(0) (as the exporters write them: GatherND of the transposed
    NonZero, then ReduceMax/ReduceMin over axis 0): the padding reads as the type's lowest or
    highest value, so the static model gives exactly the original's, an empty selection's
    -inf/+inf (or the integer range's ends) included, as ONNX Runtime gives them."""
    from onnx import TensorProto as T, helper

    elem = {np.float32: T.FLOAT, np.int64: T.INT64, np.float16: T.FLOAT16}[dtype]
    reduce = lambda op, out: (helper.make_node(op, ["rows"], [out], axes=[0], keepdims=0) if opset < 18
                              else helper.make_node(op, ["rows", "axes"], [out], keepdims=0))
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["m"], ["nz"]), helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
         helper.make_node("GatherND", ["x", "t"], ["rows"]), reduce("ReduceMax", "top"), reduce("ReduceMin", "bottom")],
        "g", [helper.make_tensor_value_info("x", elem, ["n", 4]), helper.make_tensor_value_info("m", T.BOOL, ["n"])],
        [helper.make_tensor_value_info("top", elem, None), helper.make_tensor_value_info("bottom", elem, None)],
        [helper.make_tensor("axes", T.INT64, [1], [0])] if opset >= 18 else [])
    path = tmp_path / "reduce.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8), path)
    rc, text, written, report = sc.make_static(path, {"x": [6, 4], "m": [6]})
    assert rc == 0 and not report["left_nodes"], text
    original, static = session(str(path), library=False), session(str(written), library=False)
    rng = np.random.default_rng(opset)
    for m in (rng.random(6) < 0.5, np.zeros(6, bool), np.ones(6, bool), np.eye(6, dtype=bool)[2]):
        x = (rng.standard_normal((6, 4)) * 100).astype(dtype)
        if dtype != np.int64:
            x[1, 2], x[3, 1] = np.nan, -0.0
        feeds = {"x": x, "m": m}
        got = static.run(None, feeds)
        try:
            want = original.run(None, feeds)
        except Exception as e:  # noqa: BLE001
            # ONNX Runtime 1.17.3 refuses a max or min over nothing; 1.31.1 gives -inf / +inf
            # (the integer range's ends), which the static model gives on both.
            assert not m.any() and "ReduceMax" in str(e), e
            info = np.finfo(dtype) if dtype != np.int64 else None
            lowest, highest = (-np.inf, np.inf) if info else (np.iinfo(dtype).min, np.iinfo(dtype).max)
            assert (got[0] == lowest).all() and (got[1] == highest).all(), got
            continue
        for name, g, w in zip(("top", "bottom"), got, want):
            assert_equal(f"{dtype.__name__} opset {opset} {m} {name}", g, w, False)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8])
def test_max_and_min_read_as_truth_values(dtype, tmp_path):
    """x[m].max(0) and x[m].min(0) read only through a Cast to bool (dynamo's any() and all()):
    their padding reads as a small integer (1 for a min, -1 for a signed max), not the type's
    extreme, and the truth of the result is the original's for every selection, an empty one
    included (values from -3 to 3: zeros, and values past 1 and below -1, decide)."""
    from onnx import TensorProto as T, helper

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]), helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "t"], ["rows"])]
    for op, out in (("ReduceMax", "any"), ("ReduceMin", "all")):
        nodes += [helper.make_node(op, ["rows"], [f"{out}_value"], axes=[0], keepdims=0),
                  helper.make_node("Cast", [f"{out}_value"], [out], to=T.BOOL)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", elem, ["n", 4]), helper.make_tensor_value_info("m", T.BOOL, ["n"])],
        [helper.make_tensor_value_info("any", T.BOOL, None), helper.make_tensor_value_info("all", T.BOOL, None)])
    path = tmp_path / "truth.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    rc, text, written, report = sc.make_static(path, {"x": [6, 4], "m": [6]})
    assert rc == 0 and not report["left_nodes"], text
    # No padding reads as the type's extremes (an unsigned max's lowest, 0, is small already).
    info = np.iinfo(dtype)
    extremes = {int(info.max)} | ({int(info.min)} if info.min < 0 else set())
    scalars = {int(onnx.numpy_helper.to_array(t)) for t in onnx.load(str(written)).graph.initializer
               if not t.dims and t.data_type == elem}
    assert not scalars & extremes, scalars
    original, static = session(str(path), library=False), session(str(written), library=False)
    rng = np.random.default_rng(7)
    low = 0 if dtype == np.uint8 else -3
    for m in (rng.random(6) < 0.5, np.zeros(6, bool), np.ones(6, bool), np.eye(6, dtype=bool)[2]):
        for _ in range(5):
            x = rng.integers(low, 4, (6, 4)).astype(dtype)
            feeds = {"x": x, "m": m}
            got = static.run(None, feeds)
            try:
                want = original.run(None, feeds)
            except Exception as e:  # noqa: BLE001
                # ONNX Runtime 1.17.3 refuses a max or min over nothing; the static model gives
                # the truth of 1.31.1's extremes on both: a max's lowest (0 unsigned), a min's highest.
                assert not m.any() and "Reduce" in str(e), e
                assert (got[0] == (info.min != 0)).all() and got[1].all(), got
                continue
            for name, g, w in zip(("any", "all"), got, want):
                assert g.dtype == w.dtype == np.bool_ and g.shape == w.shape == (4,), (name, g, w)
                assert np.array_equal(g, w), (dtype.__name__, m, x, name, g, w)
