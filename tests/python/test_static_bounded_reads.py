"""How a length the shapes bound (test_static_bounded_lengths.py) is read back by Longformer's
global attention: the slots' scores joined with the window's along one axis, softmaxed over both
and cut apart at L (emit-static's capped/joined.rs), and the slots' values flattened with the
batch and gathered at the local coordinates' linear index `j + i * L` (capped/linear.rs). Each
static model must equal the original on ONNX Runtime, cut to its counts."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact, unread_nodes
from static_cases import static_model
from test_static_bounded_lengths import BATCH, SEQ, global_indices_model, slot_scores_model


def joined_scores_model():
    """Longformer's attention scores: the global slots' scores joined with the window's along
    one axis, `probs = softmax(cat((scores, window), -1))`, then cut apart again at the length as
    transformers does: `probs.narrow(-1, 0, L)` and `probs.narrow(-1, L, probs.size(-1) - L)`.
    The padding is then a middle segment of the joined axis, between the slots and the window."""
    model = slot_scores_model(17)
    g = model.graph
    # Without the max and min over the slots (ONNX Runtime 1.17.3 refuses them over nothing).
    kept = [n for n in g.node if n.op_type not in ("ReduceMax", "ReduceMin") or n.input[0] != "scores"]
    del g.node[:]
    g.node.extend(kept)
    g.input.append(helper.make_tensor_value_info("window", TensorProto.FLOAT, [BATCH, 3]))
    g.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), "start0"),
                          numpy_helper.from_array(np.array([-1], np.int64), "last"),
                          numpy_helper.from_array(np.array([2 ** 63 - 1], np.int64), "to_end")])
    g.node.extend([
        helper.make_node("Concat", ["scores", "window"], ["joined"], axis=-1),
        helper.make_node("Softmax", ["joined"], ["joined_probs"], axis=-1),
        helper.make_node("Unsqueeze", ["most", "axis0"], ["most_1d"]),
        helper.make_node("Slice", ["joined_probs", "start0", "most_1d", "last"], ["global_probs"]),
        helper.make_node("Shape", ["joined_probs"], ["joined_shape"]),
        helper.make_node("Slice", ["joined_shape", "last", "to_end"], ["joined_size_1d"]),
        helper.make_node("Squeeze", ["joined_size_1d", "axis0"], ["joined_size"]),
        helper.make_node("Sub", ["joined_size", "most"], ["window_size"]),
        helper.make_node("Add", ["most", "window_size"], ["window_end"]),
        helper.make_node("Unsqueeze", ["window_end", "axis0"], ["window_end_1d"]),
        helper.make_node("Slice", ["joined_probs", "most_1d", "window_end_1d", "last"], ["window_probs"]),
        helper.make_node("Slice", ["joined_probs", "most_1d", "to_end", "last"], ["window_rest"]),
    ])
    del g.output[:]
    g.output.extend([helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
                     for name in ("global_probs", "window_probs", "window_rest")])
    return model


def test_slots_joined_with_the_window_are_softmaxed_and_cut_apart_as_the_original():
    """The joined axis's middle segment (the slots past L) is read as the lowest value by the
    softmax; the cut at L gives the slots (padded, with their count) and the window (fixed, no
    count). Unmasked, the padded slots' scores would take a share of every softmax (tens of
    percent here). The softmax sums over the capacity's longer axis: the padding adds exact
    zeros, but ONNX Runtime's vectorised sum groups the terms otherwise, so the last bit may
    differ (one ulp seen): 1e-6 relative, shapes, counts and the padding exact."""
    model = joined_scores_model()
    static, report = static_model(model)
    assert report["left_nodes"] == [] and not unread_nodes(static), report["left_nodes"]
    names = [o.name for o in static.graph.output]
    assert names == ["global_probs", "window_probs", "window_rest", "global_probs_count"], names
    shapes = {o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in static.graph.output}
    assert shapes["window_probs"] == [BATCH, 3] and shapes["global_probs"] == [BATCH, SEQ], shapes
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(13)
    masks = [np.zeros((BATCH, SEQ), bool), np.ones((BATCH, SEQ), bool)]
    masks += [rng.random((BATCH, SEQ)) < p for p in (0.2, 0.5) for _ in range(4)]
    for mask in masks:
        feeds = {"m": mask, "x": rng.standard_normal((BATCH, 1)).astype(np.float32),
                 "window": rng.standard_normal((BATCH, 3)).astype(np.float32)}
        want = dict(zip(["global_probs", "window_probs", "window_rest"], original.run(None, feeds)))
        got = dict(zip(names, made.run(None, feeds)))
        count = int(got["global_probs_count"])
        assert count == mask.sum(1).max()
        assert (got["global_probs"][:, count:] == 0).all(), got["global_probs"]
        got["global_probs"] = got["global_probs"][:, :count]
        for name in ("global_probs", "window_probs", "window_rest"):
            assert got[name].shape == want[name].shape and got[name].dtype == want[name].dtype, name
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=0,
                                       err_msg=f"{name}, mask {mask.astype(int)}")


def linear_index_model():
    """Longformer's `global_attn_output[i, :, j]` in 3-D: values over the slots `v[b, l, :]`
    (`x[b] * l * w`), read at the local coordinates `i, j` as TorchScript writes it: the batch
    flattened with the slots (`Flatten(v, axis=2)`, rows `b * L + l`) and gathered at
    `j + i * v.shape[1]`."""
    model = global_indices_model(17)
    g = model.graph
    g.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 1]))
    g.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), "axis0"),
                          numpy_helper.from_array(np.array([-1], np.int64), "axis_last"),
                          numpy_helper.from_array(np.array(0, np.int64), "column0"),
                          numpy_helper.from_array(np.array(1, np.int64), "column1"),
                          numpy_helper.from_array(np.array([1], np.int64), "slots_axis"),
                          numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "w")])
    g.node.extend([
        helper.make_node("Cast", ["slots"], ["slots_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["slots_f", "axis0"], ["slot_row"]),
        helper.make_node("Mul", ["slot_row", "x"], ["scaled"]),
        helper.make_node("Unsqueeze", ["scaled", "axis_last"], ["scaled_col"]),
        helper.make_node("Mul", ["scaled_col", "w"], ["v"]),
        helper.make_node("Flatten", ["v"], ["rows"], axis=2),
        helper.make_node("Gather", ["local_at", "column0"], ["i"], axis=1),
        helper.make_node("Gather", ["local_at", "column1"], ["j"], axis=1),
        helper.make_node("Shape", ["v"], ["v_shape"]),
        helper.make_node("Gather", ["v_shape", "slots_axis"], ["stride"], axis=0),
        helper.make_node("Mul", ["i", "stride"], ["i_rows"]),
        helper.make_node("Add", ["j", "i_rows"], ["linear"]),
        helper.make_node("Gather", ["rows", "linear"], ["picked"], axis=0),
    ])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("picked", TensorProto.FLOAT, None))
    return model


def test_slots_read_at_the_linear_index_of_local_coordinates_equal_the_originals():
    """The rows `b * L + l` of the original are `b * C + l` at the capacity C, and the index
    `j + i * L` is `j + i * C`: the same element, since `j < L` (a coordinate along the slots of
    a selection that reads their padding as false). The picked rows are the local selection's
    (padded, with its count), exact."""
    model = linear_index_model()
    static, report = static_model(model)
    assert report["left_nodes"] == [] and not unread_nodes(static), report["left_nodes"]
    names = [o.name for o in static.graph.output]
    assert names == ["picked", "picked_count"], names
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(17)
    masks = [np.zeros((BATCH, SEQ), bool), np.ones((BATCH, SEQ), bool)]
    masks += [rng.random((BATCH, SEQ)) < p for p in (0.2, 0.5) for _ in range(4)]
    for mask in masks:
        feeds = {"m": mask, "x": rng.standard_normal((BATCH, 1)).astype(np.float32)}
        (want,) = original.run(None, feeds)
        picked, count = made.run(None, feeds)
        assert int(count) == len(want) == mask.sum()
        assert_exact(picked[:int(count)], want, f"mask {mask.astype(int)}")
        assert (picked[int(count):] == 0).all(), picked
