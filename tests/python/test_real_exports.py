"""`nonzero optimize` on issue 19's real exports (models/real): torchvision's detectors and
transformers models as PyTorch's exporters wrote them, each tested as exported and with its
value_info removed. The target is what the tool rewrites once ONNX's shape inference has run
(models/real/expected.json): exact op counts, and the rewritten model on the library gives
exactly the original's outputs on ONNX Runtime's built-in kernels, at two input sizes. Then:
loading the library alone leaves every export's outputs exactly as they were; the tool without
ONNX's inference rewrites at least the NonZero it rewrites with it; and every
fact a rewrite relied on (its --report-json) holds in ONNX Runtime's run-time tensors."""

import re

import onnx
import onnxruntime as ort
import pytest

import real_exports as rx
from conftest import assert_exact, session

VARIANTS = ["exported", "no_value_info"]
CASES = [(e, v) for e in rx.EXPORTS for v in VARIANTS]


def case_id(case):
    entry, name = case
    return f"{entry['file']}-{name}"


# Models an older ONNX Runtime refuses to load on its built-in kernels, original and rewrite
# alike: the dynamo exports are IR 10, and 1.17 reads up to 9.
HOST_REFUSALS = ("Unsupported model IR version",)


# ONNX Runtime 1.17 refuses the rewritten Keypoint R-CNN: a Resize inside Loop_2273 gets a `sizes`
# of 0 elements from its shape inference. 1.17 reads a custom op's output that shape inference left
# undeclared as a scalar; the library declares NonZero's and ArgWhere's always (rank 2), which made
# the exported model load on 1.17 again, but BooleanMask's rank is unknown when its input's shape is
# unknown to the host; with ONNX's inferred value_info the host knows it, and the model loads. 1.18
# and later load every variant. Asserted, so a fix (or a change) shows.
OLD_HOST_REWRITE_REFUSALS = {"keypoint_rcnn_ts17.onnx": "Number of elements of input 'sizes' (0)"}
OLD_HOST = tuple(int(p) for p in ort.__version__.split(".")[:2]) < (1, 18)


def host_cannot_load(model, *more):
    """True when this ONNX Runtime refuses the model for one of HOST_REFUSALS; then every model
    in `more` (its rewrites) must be refused the same way. Asserted rather than skipped: a
    release that loads it runs the whole test."""
    try:
        session(model, library=False)
        return False
    except Exception as e:  # noqa: BLE001 - anything but a known refusal is re-raised
        refusal = next((r for r in HOST_REFUSALS if r in str(e)), None)
        if refusal is None:
            raise
    for other in more:
        with pytest.raises(Exception, match=re.escape(refusal)):
            session(other)
    return True


def test_manifest_is_true():
    """Each committed export is in the manifest with its true NonZero count and size, under the
    issue's 20 MB, and each file the manifest names exists; exports that failed say why."""
    on_disk = sorted(p.name for p in rx.REAL.glob("*.onnx"))
    assert on_disk == sorted(e["file"] for e in rx.EXPORTS)
    assert sorted(rx.EXPECTED) == on_disk
    for entry in rx.EXPORTS:
        path = rx.REAL / entry["file"]
        assert path.stat().st_size == entry["bytes"] < 20 * 1024 * 1024
        assert rx.op_counts(onnx.load(str(path)))["NonZero"] == entry["nonzero"] > 0, entry["file"]
    assert all(e["error"] for e in rx.MANIFEST if "file" not in e)
    sources = {e["source"] for e in rx.EXPORTS}
    assert len({e["name"] for e in rx.EXPORTS if e["source"] == "torchvision"}) >= 3, sources
    assert len({e["name"] for e in rx.EXPORTS if e["source"] == "transformers"}) >= 3, sources


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rewrite_op_counts(case, tmp_path):
    """Exact op counts: the expected ones for the op types the rewrite changes, the original's
    for every other type."""
    entry, name = case
    model = rx.variant(entry, name)
    proc, rewritten = rx.optimize(model, tmp_path)
    assert rewritten is not None, proc.stderr
    before, after = rx.op_counts(model), rx.op_counts(rewritten)
    want = {op: rx.EXPECTED[entry["file"]].get(op, before[op]) for op in before.keys() | after.keys()}
    got = {op: after[op] for op in want}
    assert got == want, f"{entry['file']} ({name}): {proc.stdout[-2000:]}"
    onnx.checker.check_model(rewritten, full_check=False)


# ONNX's own inference (data_prop=True) writes value_info that ONNX Runtime trips on: the
# inferred model fails on the built-in kernels, before any rewrite.
INFERENCE_BREAKS = {"longformer_ts17.onnx": "SequenceAt outputs inferred as [?, 1], rank 1 at run time"}


@pytest.mark.parametrize("case", CASES + [(e, "inferred") for e in rx.EXPORTS], ids=case_id)
def test_rewritten_outputs_equal_original(case, tmp_path):
    """The rewritten model on the library: exactly the outputs of the same model unrewritten on
    the built-in kernels, at both input sizes. Also after ONNX's inference, where today's tool
    already rewrites every chain (so this runs the library's ops on the real models now).
    Not against the file as exported there: value_info changes which fusions ONNX Runtime
    applies (BART's logits move by 3e-9, VITS's waveform by 7e-6; equal with optimisations off)."""
    entry, name = case
    model = rx.variant(entry, name)
    proc, rewritten = rx.optimize(model, tmp_path)
    assert rewritten is not None, proc.stderr
    if host_cannot_load(model, rewritten):
        return
    if OLD_HOST and entry["file"] in OLD_HOST_REWRITE_REFUSALS and name != "inferred":
        with pytest.raises(Exception, match=re.escape(OLD_HOST_REWRITE_REFUSALS[entry["file"]])):
            session(rewritten)
        return
    builtin = session(model, library=False)
    if name == "inferred" and entry["file"] in INFERENCE_BREAKS:
        with pytest.raises(Exception, match="ScatterND"):
            builtin.run(None, rx.inputs(model, 0))
        return
    ours = session(rewritten)
    for size in range(2):
        feeds = rx.inputs(model, size)
        want, got = builtin.run(None, feeds), ours.run(None, feeds)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_exact(g, w, f"{entry['file']} ({name}) size {rx.SIZES[rx.kind(model)][size]} output {i}")


@pytest.mark.parametrize("entry", rx.EXPORTS, ids=lambda e: e["file"])
def test_library_leaves_the_export_unchanged(entry):
    """The file as exported, not rewritten: with the library loaded, exactly the built-in's
    outputs at both sizes (the library takes over its NonZero and nothing else changes)."""
    model = rx.variant(entry, "exported")
    if host_cannot_load(model, model):
        return
    builtin, ours = session(model, library=False), session(model)
    for size in range(2):
        feeds = rx.inputs(model, size)
        for i, (g, w) in enumerate(zip(ours.run(None, feeds), builtin.run(None, feeds))):
            assert_exact(g, w, f"{entry['file']} size {rx.SIZES[rx.kind(model)][size]} output {i}")


@pytest.mark.parametrize("entry", rx.EXPORTS, ids=lambda e: e["file"])
def test_without_onnx_inference_rewrites_what_it_does(entry, tmp_path):
    """The set of NonZero rewritten without ONNX's shape inference includes the set rewritten
    after infer_shapes(data_prop=True) (node names identify them: both keep the exporter's)."""
    original = rx.variant(entry, "exported")
    everything = rx.nonzero_names(original)
    rewritten = {}
    for name in ("exported", "no_value_info", "inferred"):
        proc, out = rx.optimize(rx.variant(entry, name), tmp_path / name)
        assert out is not None, proc.stderr
        rewritten[name] = everything - rx.nonzero_names(out)
    assert rewritten["inferred"], f"{entry['file']}: ONNX's inference led to no rewrite"
    for name in ("exported", "no_value_info"):
        missed = sorted(rewritten["inferred"] - rewritten[name])
        assert not missed, f"{entry['file']} ({name}): {len(missed)} NonZero left that ONNX's inference lets it rewrite: {missed[:5]}"


def fact_holds(fact, values):
    """One fact of the report against run-time tensors: a rank, bool, or the size of one axis
    equal to another's (and to `size` where that is a number)."""
    got = values[fact["tensor"]]
    if "rank" in fact:
        return got.ndim == fact["rank"]
    if "elem_type" in fact:
        return fact["elem_type"] == "bool" and got.dtype == bool
    other = values[fact["equals"]["tensor"]]
    size = got.shape[fact["axis"]]
    named = str(fact.get("size", ""))
    return size == other.shape[fact["equals"]["axis"]] and (not named.isdigit() or size == int(named))


@pytest.mark.parametrize("case", [(e, v) for e in rx.EXPORTS for v in ("no_value_info", "inferred")], ids=case_id)
def test_relied_on_shape_facts_hold_at_run_time(case, tmp_path):
    """Every fact the inference relied on, as `nonzero optimize --report-json FILE` lists it per
    rewrite (branch `rewriter`: {"nonzero", "rewritten", "left", "rewrites": [{"graph", "node",
    "facts": [{"tensor", "rank"} | {"tensor", "elem_type"} | {"tensor", "axis", "equals":
    {"tensor", "axis"}, "size"}]}]}), holds in ONNX Runtime's run-time tensors (of the file
    without value_info), at both input sizes; the counts match the rewritten model. Also after
    ONNX's inference, whose value_info the tool may take as facts."""
    entry, name = case
    model = rx.variant(entry, name)
    report, rewritten = rx.optimize_accounted(model, tmp_path)
    # A guarded rewrite's sizes are compared by the model itself at run time: not a claim.
    claims = lambda r: [f for f in r["facts"] if "checked" not in f]  # noqa: E731
    facts = [(r["node"], f) for r in report["rewrites"] for f in claims(r)]
    assert report["rewritten"] == 0 or facts, "rewrites that relied on no fact at all"
    outside = sorted({r["graph"] for r in report["rewrites"] if claims(r)} - {"main"})
    assert not outside, f"facts in {outside}: this test reads main-graph tensors only; extend it"
    tensors = sorted({f["tensor"] for _, f in facts} | {f["equals"]["tensor"] for _, f in facts if "equals" in f})
    probe = rx.variant(entry, "no_value_info")
    if host_cannot_load(probe):
        return
    outputs = {o.name for o in probe.graph.output}
    probe.graph.output.extend(onnx.ValueInfoProto(name=t) for t in tensors if t not in outputs)
    ort_session = session(probe, library=False)
    for size in range(2):
        values = dict(zip(tensors, ort_session.run(tensors, rx.inputs(model, size)))) if tensors else {}
        broken = [(node, f) for node, f in facts if not fact_holds(f, values)]
        assert not broken, f"size {size}: {len(broken)} of {len(facts)} facts false at run time, e.g. {broken[:3]}"
