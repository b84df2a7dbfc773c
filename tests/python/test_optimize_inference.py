"""`nonzero optimize` without the exporter's value_info: on every committed model with its
value_info removed, the tool rewrites every chain it rewrites after ONNX's own shape inference
(`infer_shapes(data_prop=True)`), and the result still gives exactly the original's outputs.
Also the report (`-v`, `--report-json`), `--provider cuda` and `--nonzero-domain`."""

import json

import onnx
import pytest

from conftest import assert_exact, session
from onnx_cases import ROOT
from test_optimize import MODELS, optimize, random_inputs


def without_value_info(path, tmp_path):
    model = onnx.load(str(path))
    del model.graph.value_info[:]
    for output in model.graph.output:
        output.type.Clear()
    stripped = tmp_path / ("stripped_" + path.name)
    onnx.save(model, str(stripped))
    return stripped


def with_onnx_inference(path, tmp_path):
    model = onnx.shape_inference.infer_shapes(onnx.load(str(path)), data_prop=True)
    inferred = tmp_path / ("inferred_" + path.name)
    onnx.save(model, str(inferred))
    return inferred


def report_of(path, tmp_path, *extra):
    report = tmp_path / (path.name + ".json")
    proc, out = optimize(path, tmp_path, "--report-json", str(report), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(report.read_text()), out


def rewritten_nodes(report):
    return {(r["graph"], r["node"], r["op"]) for r in report["rewrites"]}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_without_value_info_rewrites_what_onnx_inference_allows(path, tmp_path):
    bare, bare_out = report_of(without_value_info(path, tmp_path), tmp_path)
    helped, _ = report_of(with_onnx_inference(path, tmp_path), tmp_path)
    assert rewritten_nodes(bare) >= rewritten_nodes(helped)
    assert bare["rewritten"] >= helped["rewritten"]
    original = onnx.load(str(path))
    try:
        builtin = session(original, library=False)
    except Exception as e:  # IR 10 on ONNX Runtime 1.17: the host limit test_optimize asserts
        assert "Unsupported model IR version" in str(e)
        return
    ours = session(onnx.load(str(bare_out)))
    for seed in range(2):
        feeds = random_inputs(original, seed)
        for i, (g, w) in enumerate(zip(ours.run(None, feeds), builtin.run(None, feeds))):
            assert_exact(g, w, f"{path.name} without value_info, seed {seed} output {i}")


def kept_gather_model(tmp_path):
    """A 2-D mask whose second size is fixed apart from the data's (5 against 4): no proof, no
    guard (patterns/guarded.rs), so the GatherND is kept."""
    h = onnx.helper
    graph = h.make_graph(
        [h.make_node("NonZero", ["m"], ["nz"]), h.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
         h.make_node("GatherND", ["x", "t"], ["y"])], "kept",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["A", 4, 3]),
         h.make_tensor_value_info("m", onnx.TensorProto.BOOL, ["B", 5])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    path = tmp_path / "kept.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8), str(path))
    return path


def test_report_lists_facts_and_what_was_left(tmp_path):
    # A 1-D mask's unproven sizes need no proof: BooleanMaskAxis is the gather itself.
    report, _ = report_of(ROOT / "models/rewrite-variants/unproven_dims.onnx", tmp_path)
    assert [r["op"] for r in report["rewrites"]] == ["BooleanMaskAxis"] and report["gathers_kept"] == {}
    path = kept_gather_model(tmp_path)
    report, _ = report_of(path, tmp_path)
    assert report["nonzero"] == report["rewritten"] + report["left"]
    assert report["gathers_kept"] == {"sizes-not-proven": 1}
    (kept,) = [n for n in report["left_nodes"] if n["op"] != "NonZero"]
    assert kept["reason"] == "sizes-not-proven" and "mask" in kept["detail"]
    proc, _ = optimize(path, tmp_path, "-v")
    assert any(line.startswith(f"left: {kept['op']} {kept['node']} in main:") for line in proc.stdout.splitlines())

    # Sizes of a 2-D mask named apart: fused, the sizes compared at run time, nothing kept.
    report, _ = report_of(ROOT / "models/rewrite-variants/unproven_dims_2d.onnx", tmp_path)
    (rewrite,) = report["rewrites"]
    assert {"tensor": "m", "leading_sizes_of": "x", "checked": "at run time"} in rewrite["facts"]
    assert report["gathers_kept"] == {} and rewrite["line"].endswith("(guarded)")

    report, _ = report_of(ROOT / "models/exported/x_mask_ts17.onnx", tmp_path)
    (rewrite,) = report["rewrites"]
    assert rewrite["op"] == "BooleanMask"
    mask = rewrite["facts"][0]["tensor"]
    assert {"tensor": mask, "elem_type": "bool"} in rewrite["facts"]
    assert any(f.get("equals", {}).get("tensor") == "input_0" for f in rewrite["facts"])


def test_provider_cuda_rewrites_nothing_and_says_why(tmp_path):
    path = ROOT / "models/exported/x_mask_ts17.onnx"
    proc, out = optimize(path, tmp_path, "--provider", "cuda", "-v")
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == path.read_bytes()
    assert "provider cuda: nothing rewritten" in proc.stdout
    assert "1 NonZero: 0 rewritten, 1 left" in proc.stdout
    proc, out = optimize(path, tmp_path, "--provider", "rocm")
    assert proc.returncode == 1 and "expected cpu, cuda (ONNX Runtime's providers)" in proc.stderr


def test_nonzero_domain_moves_what_is_left(tmp_path):
    path = ROOT / "models/nonzero_opset13_float/model.onnx"
    report, out = report_of(path, tmp_path, "--nonzero-domain")
    assert report["moved_to_domain"] == 1 and report["left"] == 0
    model = onnx.load(str(out))
    assert [(n.domain, n.op_type) for n in model.graph.node] == [("nonzero", "NonZero")]
    assert ("nonzero", 1) in {(o.domain, o.version) for o in model.opset_import}
