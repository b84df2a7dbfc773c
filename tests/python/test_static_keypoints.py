"""Issue 37, item 6: a keypoint detector's tail as the dynamo exporter writes SuperPoint's
(models/real/families/superpoint_dynamo18.onnx; crates/optimize/src/tests/static_keypoints.rs
builds the same graph): the pixels scoring above a threshold, those away from the border (their
coordinates compared with fixed bounds, a second selection of the first's rows), the kept
keypoints' coordinates and scores, a descriptor sampled at each with GridSample and normalised
within its row, and the scores written into `zeros(1, len(keypoints))` along the batch axis.

The static model must equal the original on ONNX Runtime exactly, cut to the counts, with -1
past them in the int64 keypoints and +0 in the floats, for score maps selecting nothing,
everything, one pixel, only border pixels, and at random."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact, unread_nodes
from static_cases import make_static

H, W, C = 6, 8, 4
OUTPUTS = ("keypoints", "descriptors", "written")


def keypoints_model():
    def ints(name, values, scalar=False):
        array = np.array(values[0] if scalar else values, np.int64)
        return numpy_helper.from_array(array, name)

    inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
             [("threshold", 0.5), ("scale", [W - 3.0, H - 1.0]), ("eps", 1e-12), ("zero_f", 0.0)]]
    inits += [ints(n, [v], scalar=True) for n, v in [("zero", 0), ("one", 1), ("five", H - 1), ("seven", W - 1)]]
    inits += [ints(n, v) for n, v in [("zero_list", [0]), ("one_list", [1]), ("two_list", [2]),
                                       ("one_c", [1, C]), ("grid_shape", [1, 1, -1, 2]), ("rows_shape", [1, C, -1])]]
    node = helper.make_node
    nodes = [
        node("Greater", ["s", "threshold"], ["m"]),
        node("NonZero", ["m"], ["nz"]),
        node("Transpose", ["nz"], ["points"], perm=[1, 0]),
        node("Gather", ["nz", "zero"], ["r"], axis=0),
        node("Slice", ["nz", "one_list", "two_list", "zero_list"], ["c1"]),
        node("Squeeze", ["c1", "zero_list"], ["c"]),
        node("GreaterOrEqual", ["r", "one"], ["r_low"]),
        node("Less", ["r", "five"], ["r_high"]),
        node("GreaterOrEqual", ["c", "one"], ["c_low"]),
        node("Less", ["c", "seven"], ["c_high"]),
        node("And", ["r_low", "r_high"], ["r_in"]),
        node("And", ["c_low", "c_high"], ["c_in"]),
        node("And", ["r_in", "c_in"], ["inside"]),
        node("NonZero", ["inside"], ["nz2"]),
        node("Transpose", ["nz2"], ["kept"], perm=[1, 0]),
        node("GatherND", ["points", "kept"], ["keypoints"]),
        node("GatherND", ["s", "points"], ["all_scores"]),
        node("GatherND", ["all_scores", "kept"], ["scores"]),
        node("Cast", ["keypoints"], ["kf"], to=TensorProto.FLOAT),
        node("Div", ["kf", "scale"], ["g"]),
        node("Reshape", ["g", "grid_shape"], ["grid"]),
        node("GridSample", ["d", "grid"], ["sampled"], align_corners=1),
        node("Reshape", ["sampled", "rows_shape"], ["v"]),
        node("ReduceL2", ["v", "one_list"], ["norm"], keepdims=1),
        node("Clip", ["norm", "eps"], ["clamped"]),
        node("Shape", ["keypoints"], ["n"], start=0, end=1),
        node("Concat", ["one_c", "n"], ["desc_shape"], axis=0),
        node("Expand", ["clamped", "desc_shape"], ["divisor"]),
        node("Div", ["v", "divisor"], ["descriptors"]),
        node("Concat", ["one_list", "n"], ["out_shape"], axis=0),
        node("Expand", ["zero_f", "out_shape"], ["zeros"]),
        node("Unsqueeze", ["scores", "zero_list"], ["row"]),
        node("Shape", ["row"], ["row_shape"]),
        node("Expand", ["zero", "row_shape"], ["at"]),
        node("ScatterElements", ["zeros", "at", "row"], ["written"], axis=0),
    ]
    inputs = [helper.make_tensor_value_info("s", TensorProto.FLOAT, [H, W]),
              helper.make_tensor_value_info("d", TensorProto.FLOAT, [1, C, 3, 4])]
    types = {"keypoints": TensorProto.INT64, "descriptors": TensorProto.FLOAT, "written": TensorProto.FLOAT}
    outputs = [helper.make_tensor_value_info(name, types[name], None) for name in OUTPUTS]
    graph = helper.make_graph(nodes, "keypoints", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def score_maps(rng):
    border = np.ones((H, W), bool)
    border[1:H - 1, 1:W - 1] = False
    one = np.zeros((H, W), bool)
    one[2, 3] = True
    masks = [np.zeros((H, W), bool), np.ones((H, W), bool), one, border]
    masks += [rng.random((H, W)) < p for p in (0.2, 0.5, 0.8) for _ in range(4)]
    for mask in masks:
        yield np.where(mask, 0.5 + rng.random((H, W)), rng.random((H, W)) * 0.5).astype(np.float32)


def test_keypoints_off_the_border_and_their_descriptors_equal_the_originals(tmp_path):
    model = keypoints_model()
    onnx.save(model, tmp_path / "keypoints.onnx")
    rc, text, written, report = make_static(tmp_path / "keypoints.onnx", {})
    assert rc == 0, text
    static = onnx.load(written)
    assert report["left_nodes"] == [] and not unread_nodes(static)
    names = [o.name for o in static.graph.output]
    assert names[:3] == list(OUTPUTS), names
    assert sorted(names[3:]) == sorted(f"{n}_count" for n in OUTPUTS), names
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(37)
    for s in score_maps(rng):
        feeds = {"s": s, "d": rng.standard_normal((1, C, 3, 4)).astype(np.float32)}
        want = dict(zip(OUTPUTS, original.run(None, feeds)))
        got = dict(zip(names, made.run(None, feeds)))
        inside = (s[1:H - 1, 1:W - 1] > 0.5).sum()
        for name, axis in (("keypoints", 0), ("descriptors", 2), ("written", 1)):
            count = int(got[f"{name}_count"])
            assert count == inside == want[name].shape[axis], (name, count, inside)
            cut = np.take(got[name], np.arange(count), axis=axis)
            assert_exact(cut, want[name], f"{name}, {inside} inside")
            rest = np.take(got[name], np.arange(count, got[name].shape[axis]), axis=axis)
            if got[name].dtype == np.int64:
                assert (rest == -1).all(), name
            else:
                assert (rest == 0).all() and not np.signbit(rest).any(), name
