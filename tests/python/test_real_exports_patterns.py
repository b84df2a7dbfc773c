"""Issue 25's pattern exports (models/real/tf2onnx, models/real/paddle2onnx,
models/real/torch_patterns) as tf2onnx, paddle2onnx and PyTorch's two exporters wrote them, on
ONNX Runtime, at each size of their manifest and with masks random, all false and all true:
  - with the library registered, exactly the built-in kernels' outputs, and where the pattern is
    plain indexing, exactly numpy's (coordinates, shapes, dtypes);
  - rewritten by `nonzero optimize` (as exported, and without value_info), exactly the
    original's outputs with the library, and without it (the fallback functions).
How many chains the rewrite fuses is not asserted here (issue 25 is changing the rewriter):
models/real/README.md lists what each export's report said before it."""


import collections
import numpy as np
import onnx
import pytest

import real_exports as rx
import real_patterns as rp
from conftest import assert_exact, session
from test_real_exports import host_cannot_load


def entry_id(entry):
    return f"{entry['folder'].name}/{entry['file']}"


def masked_scatter(f):
    y = f["x"].copy()
    y[f["m"]] = f["s"].reshape(-1)[: f["m"].sum()]  # source elements in order, from the first
    return [y]


def assign(f, add=False):
    y = f["x"].copy()
    y[f["m"]] = y[f["m"]] + f["v"] if add else f["v"]
    return [y]


def argwhere(f):
    return [np.argwhere(f["c"]).astype(np.int64)]


# numpy's result for the exports that are plain indexing (the reductions' float sums and the
# router are checked against the built-in kernels only).
NUMPY = {
    "boolean_mask": lambda f: [f["x"][f["m"]]],
    "boolean_mask_2d": lambda f: [f["x"][f["m"]]],
    "boolean_mask_axis1": lambda f: [f["x"][:, f["m"]]],
    "where_gather_nd": lambda f: [f["x"][f["c"]]],
    "where_coordinates": argwhere,
    "nonzero": argwhere,
    "nonzero_gather": lambda f: [f["x"][f["m"]]],
    "nonzero_gather_nd": lambda f: [f["x"][f["m"]]],
    "x_mask": lambda f: [f["x"][f["m"]]],
    "x_mask_2d": lambda f: [f["x"][f["m"]]],
    "nonzero_index_select": lambda f: [f["x"][f["m"]]],
    "where_tuple": lambda f: [f["x"][f["c"]]],
    "where_tuple_same_shape": lambda f: [f["x"][f["c"]]],
    "mask_assign": assign,
    "mask_add": lambda f: assign(f, add=True),
    "masked_scatter": masked_scatter,
}


def runs(entry, valid=True):
    """(size index, case) for every size of the manifest and every mask case the export is
    valid for (or, valid=False, every case it is not)."""
    invalid = entry.get("invalid_cases", [])
    return [(size, case) for size in range(len(entry["sizes"])) for case in rp.CASES if (case in invalid) != valid]


def test_manifests_are_true():
    """Each folder's .onnx files are its manifest's, each with its true NonZero count and size
    (a few KB; models/real/families' real architectures under 1 MB), each graph input as the manifest says (name, dtype, static dims), and each
    failed or NonZero-free export says why. Every exporter is there."""
    for folder in rp.FOLDERS:
        on_disk = sorted(p.name for p in folder.glob("*.onnx"))
        assert on_disk == sorted(e["file"] for e in rp.EXPORTS if e["folder"] == folder), folder
    for entry in rp.EXPORTS:
        model = onnx.load(str(rp.path(entry)))
        limit = 1024 * 1024 if entry["folder"].name == "families" else 64 * 1024
        assert rp.path(entry).stat().st_size == entry["bytes"] < limit, entry["file"]
        assert rx.op_counts(model)["NonZero"] == entry["nonzero"] > 0, entry["file"]
        graph_inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
        assert [i.name for i in graph_inputs] == [s["name"] for s in entry["inputs"]], entry["file"]
        for i, spec in zip(graph_inputs, entry["inputs"]):
            t = i.type.tensor_type
            assert onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) == rp.DTYPES[spec["dtype"]], (entry["file"], i.name)
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            assert dims == [s if isinstance(s, int) else None for s in spec["shape"]], (entry["file"], i.name)
    assert all(e["error"] for e in rp.FAILED)
    exporters = {e["exporter"] for e in rp.EXPORTS}
    assert exporters == {"tf2onnx", "paddle2onnx", "ts17", "dynamo18"}, exporters


def test_inputs_cover_the_mask_cases():
    """The cases are what they say: every mask all false, all true, or both values present."""
    for entry in rp.EXPORTS:
        for size, case in runs(entry):
            for m in rp.masks(entry, rp.inputs(entry, size, case)):
                assert m.dtype == bool and m.size > 0
                assert {"none": not m.any(), "all": m.all(), "random": m.any() and not m.all(),
                        "one": m.sum() == 1}[case], (entry["file"], size, case)


@pytest.mark.parametrize("entry", [e for e in rp.EXPORTS if e.get("invalid_cases")], ids=entry_id)
def test_invalid_cases_fail_on_the_builtin_kernels(entry):
    """The cases an export is listed as invalid for fail on ONNX Runtime's own kernels, as the
    manifest says (an exporter's bug, not ours), with the library too; the others run."""
    model = onnx.load(str(rp.path(entry)))
    assert entry["invalid_why"] and runs(entry)
    for library in (False, True):
        ours = session(model, library=library)
        for size, case in runs(entry, valid=False):
            with pytest.raises(Exception, match="ScatterND"):
                ours.run(None, rp.inputs(entry, size, case))


@pytest.mark.parametrize("entry", rp.EXPORTS, ids=entry_id)
def test_library_gives_the_builtins_outputs(entry):
    """The export as written, with the library registered: exactly the built-in kernels'
    outputs, and numpy's where the pattern is plain indexing."""
    model = onnx.load(str(rp.path(entry)))
    if host_cannot_load(model, model):
        return
    builtin, ours = session(model, library=False), session(model)
    for size, case in runs(entry):
        feeds = rp.inputs(entry, size, case)
        want, got = builtin.run(None, feeds), ours.run(None, feeds)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_exact(g, w, f"{entry['file']} size {size} {case} output {i}")
        if entry["name"] in NUMPY:
            reference = NUMPY[entry["name"]](feeds)
            assert len(reference) == len(got)
            for i, (g, r) in enumerate(zip(got, reference)):
                assert_exact(g, r, f"{entry['file']} size {size} {case} output {i} against numpy")


@pytest.mark.parametrize("variant", ["exported", "no_value_info"])
@pytest.mark.parametrize("entry", rp.EXPORTS, ids=entry_id)
def test_rewritten_gives_the_originals_outputs(entry, variant, tmp_path):
    """`nonzero optimize` on the export (as written, and without its value_info): the rewritten
    model gives exactly the original's outputs on the built-in kernels, with the library and
    without it (where it runs the rewrite's fallback functions)."""
    model = onnx.load(str(rp.path(entry)))
    if variant == "no_value_info":
        model = rx.without_value_info(model)
    proc, rewritten = rx.optimize(model, tmp_path)
    assert rewritten is not None, proc.stderr
    if host_cannot_load(model, rewritten):
        return
    original = session(model, library=False)
    contenders = {"library": session(rewritten), "no library": session(rewritten, library=False)}
    for size, case in runs(entry):
        feeds = rp.inputs(entry, size, case)
        want = original.run(None, feeds)
        for name, contender in contenders.items():
            got = contender.run(None, feeds)
            assert len(got) == len(want)
            for i, (g, w) in enumerate(zip(got, want)):
                assert_exact(g, w, f"{entry['file']} ({variant}, {name}) size {size} {case} output {i}")


@pytest.mark.parametrize("entry", rp.EXPORTS, ids=entry_id)
def test_optimize_reports_every_nonzero(entry, tmp_path):
    """`--report-json` accounts for every NonZero of the export: rewritten + left = NonZero, and
    the rewritten model keeps exactly the NonZero the report leaves (counts only, whatever the
    rewriter fuses)."""
    model = onnx.load(str(rp.path(entry)))
    report, rewritten = rx.optimize_accounted(model, tmp_path)


# What the rewriter fuses in the torch pattern exports whose coordinates are taken apart into
# columns (issue 25, item 1 b-d): rewrite kind -> count, and the gathers kept.
FUSED = {
    # x[torch.where(c)]: dynamo's Concat of every column is the coordinates; TorchScript's linear
    # index r * W + c over Flatten(x) reads the same elements.
    "torch_patterns/where_tuple_dynamo18.onnx": ({"BooleanMaskGatherNd": 1}, {}),
    "torch_patterns/where_tuple_same_shape_dynamo18.onnx": ({"BooleanMaskGatherNd": 1}, {}),
    "torch_patterns/where_tuple_ts17.onnx": ({"BooleanMaskLinear": 1}, {}),
    "torch_patterns/where_tuple_same_shape_ts17.onnx": ({"BooleanMaskLinear": 1}, {}),
    # The routing weights weights[token, slot] become BooleanMask; hidden[token] (a gather by one
    # column) and index_add keep the coordinates.
    "torch_patterns/moe_router_dynamo18.onnx": ({"BooleanMaskGatherNd": 4, "ArgWhere": 4},
                                                {"gather-not-fused": 4}),
    "torch_patterns/moe_router_ts17.onnx": ({"BooleanMaskLinear": 4, "ArgWhere": 4}, {"gather-not-fused": 4}),
}


@pytest.mark.parametrize("file", sorted(FUSED))
def test_columns_taken_apart_are_fused(file, tmp_path):
    entry = next(e for e in rp.EXPORTS if f"{e['folder'].name}/{e['file']}" == file)
    report, rewritten = rx.optimize_accounted(onnx.load(str(rp.path(entry))), tmp_path)
    kinds, kept = FUSED[file]
    assert dict(collections.Counter(r["kind"] for r in report["rewrites"])) == kinds
    assert report["gathers_kept"] == kept
    if not kept:
        assert [n.op_type for n in rewritten.graph.node] == ["BooleanMask"]


def guarded_rewrites(report):
    return [r for r in report["rewrites"] if any(f.get("checked") == "at run time" for f in r["facts"])]


GUARDED = [e for e in rp.EXPORTS if e["folder"].name in ("tf2onnx", "paddle2onnx")]


@pytest.mark.parametrize("entry", GUARDED, ids=entry_id)
def test_dims_named_apart_are_fused_and_fail_only_where_the_original_fails(entry, tmp_path):
    """tf2onnx and paddle2onnx name every dim apart, so the sizes of mask and data are not
    proven equal (issue 25 item 1 f). A 2-D mask's gather becomes If(sizes agree, BooleanMask,
    the original gather of ArgWhere); a 1-D mask's, along any axis (item 1 e), becomes
    BooleanMaskAxis, which is that gather by definition. With the mask shorter than the data,
    longer with only false entries past the end, or longer with a true one there, the rewritten
    model gives exactly the original's outputs, or fails where the original fails, with the
    library and without it."""
    model = onnx.load(str(rp.path(entry)))
    report, rewritten = rx.optimize_accounted(model, tmp_path)
    along_axis = [r for r in report["rewrites"] if r["kind"] == "BooleanMaskAxis"]
    if not guarded_rewrites(report) and not along_axis:
        # Nothing gathered by the coordinates (a plain tf.where / paddle.nonzero).
        assert all(r["kind"] == "ArgWhere" for r in report["rewrites"]), report["rewrites"]
        return
    assert report["gathers_kept"] == {}, report["gathers_kept"]
    if host_cannot_load(model, rewritten):
        return
    original = session(model, library=False)
    contenders = {"library": session(rewritten), "no library": session(rewritten, library=False)}
    (mask,) = [s for s in entry["inputs"] if s["values"] == "mask"]
    rng = np.random.default_rng(7)
    failures = 0
    for delta, tail in [(0, False), (-1, False), (2, False), (2, True)]:
        feeds = rp.inputs(entry, 0, "random", seed=3)
        m = feeds[mask["name"]]
        n = m.shape[0] + delta
        grown = np.concatenate([m, np.full((max(delta, 0),) + m.shape[1:], tail)]) if delta > 0 else m[:n]
        grown[: min(n, m.shape[0])] = rng.random(grown[: min(n, m.shape[0])].shape) < 0.5
        feeds[mask["name"]] = grown
        try:
            want = original.run(None, feeds)
        except Exception:
            want = None
        for name, contender in contenders.items():
            if want is None:
                with pytest.raises(Exception):
                    contender.run(None, feeds)
                failures += 1
                continue
            got = contender.run(None, feeds)
            for i, (g, w) in enumerate(zip(got, want)):
                assert_exact(g, w, f"{entry['file']} mask {delta:+d} tail {tail} ({name}) output {i}")
    assert failures >= 2, "a true entry past the data's end fails in the original"
