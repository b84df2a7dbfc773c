"""The models of benches/patterns.py: each PyTorch exporter pattern built node for node as the
TorchScript exporter (opset 17) writes it, with the inputs, the numpy reference, the ONNX Compress
equivalent and the memory floor it is timed against; and a large detection-like model for timing
the rewriter."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
THRESHOLD = 0.5


def make_model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "torch_jit", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pytorch",
                          producer_version="2.15.0")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def nonzero_transpose(mask_name, prefix="/"):
    """What every NonZero of a PyTorch export starts with: torch's [nnz, rank] layout."""
    return [helper.make_node("NonZero", [mask_name], [f"{prefix}NonZero_output_0"], name=f"{prefix}NonZero"),
            helper.make_node("Transpose", [f"{prefix}NonZero_output_0"], [f"{prefix}Transpose_output_0"],
                             name=f"{prefix}Transpose", perm=[1, 0])]


# Each pattern: build(n_mask, rng) -> dict(model, feeds, numpy, compress (model, feeds) or None,
# floor (function), mask_elements).

def p_nonzero(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = np.where(rng.random(shape) < 0.5, rng.random(shape, dtype=np.float32) + 0.5, np.float32(-0.0)).astype(np.float32)
    m = make_model(nonzero_transpose("x"), [vi("x", F, ["N", "M"])], [vi("/Transpose_output_0", I64, ["nnz", 2])])
    xbuf, ybuf = np.empty_like(x), np.empty((int(np.count_nonzero(x)), len(shape)), np.int64)

    def floor():
        np.copyto(xbuf, x)
        ybuf.fill(1)
    return dict(model=m, feeds={"x": x}, numpy=lambda: np.argwhere(x), compress=None, floor=floor)


def p_index_mask(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = rng.random(shape, dtype=np.float32)
    mask = rng.random(shape) < 0.5
    nodes = nonzero_transpose("mask") + [
        helper.make_node("GatherND", ["x", "/Transpose_output_0"], ["/GatherND_output_0"], name="/GatherND")]
    m = make_model(nodes, [vi("x", F, ["N", "M"]), vi("mask", B, ["N", "M"])], [vi("/GatherND_output_0", F, ["nnz"])])
    compress = make_model([helper.make_node("Compress", ["x", "mask"], ["y"])],
                          [vi("x", F, [x.size]), vi("mask", B, [x.size])], [vi("y", F, ["nnz"])])
    return dict(model=m, feeds={"x": x, "mask": mask}, numpy=lambda: x[mask],
                compress=(compress, {"x": x.reshape(-1), "mask": mask.reshape(-1)}),
                floor=mask_floor(x, mask, int(np.count_nonzero(mask)), x.dtype))


def p_boxes(n, rng):
    count = n  # one score per box
    scores = rng.random(count, dtype=np.float32)
    boxes = rng.random((count, 4), dtype=np.float32)
    nodes = [constant("/Constant", np.array(THRESHOLD, np.float32)),
             helper.make_node("Greater", ["scores", "/Constant_output_0"], ["/Greater_output_0"], name="/Greater")]
    nodes += nonzero_transpose("/Greater_output_0")
    nodes.append(helper.make_node("GatherND", ["boxes", "/Transpose_output_0"], ["/GatherND_output_0"],
                                  name="/GatherND"))
    m = make_model(nodes, [vi("scores", F, ["N"]), vi("boxes", F, ["N", 4])], [vi("/GatherND_output_0", F, ["nnz", 4])])
    compress = make_model(
        [helper.make_node("Greater", ["scores", "t"], ["m"]), helper.make_node("Compress", ["boxes", "m"], ["y"], axis=0)],
        [vi("scores", F, [count]), vi("boxes", F, [count, 4])], [vi("y", F, ["nnz", 4])],
        [numpy_helper.from_array(np.array(THRESHOLD, np.float32), "t")])
    nnz = int(np.count_nonzero(scores > THRESHOLD))
    bbuf, mbuf, ybuf = np.empty_like(boxes), np.empty(count, np.bool_), np.empty((nnz, 4), np.float32)

    def floor():
        np.copyto(bbuf, boxes)
        np.greater(scores, THRESHOLD, out=mbuf)  # the mask read: scores once
        ybuf.fill(1)
    return dict(model=m, feeds={"scores": scores, "boxes": boxes}, numpy=lambda: boxes[scores > THRESHOLD],
                compress=(compress, {"scores": scores, "boxes": boxes}), floor=floor)


def p_masked_select(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = rng.random(shape, dtype=np.float32)
    mask = rng.random(shape[-1]) < 0.5  # one mask row, broadcast over x's rows
    nodes = [helper.make_node("Shape", ["x"], ["/Shape_output_0"], name="/Shape"),
             helper.make_node("Expand", ["mask", "/Shape_output_0"], ["/Expand_output_0"], name="/Expand")]
    nodes += nonzero_transpose("/Expand_output_0")
    nodes.append(helper.make_node("GatherND", ["x", "/Transpose_output_0"], ["/GatherND_output_0"],
                                  name="/GatherND"))
    m = make_model(nodes, [vi("x", F, ["N", "M"]), vi("mask", B, ["M"])], [vi("/GatherND_output_0", F, ["nnz"])])
    minus_one = numpy_helper.from_array(np.array([-1], np.int64), "minus_one")
    compress = make_model(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Expand", ["mask", "s"], ["mb"]),
         helper.make_node("Reshape", ["mb", "minus_one"], ["mf"]), helper.make_node("Compress", ["x", "mf"], ["y"])],
        [vi("x", F, shape), vi("mask", B, [shape[-1]])], [vi("y", F, ["nnz"])], [minus_one])
    full = np.broadcast_to(mask, x.shape)
    return dict(model=m, feeds={"x": x, "mask": mask}, numpy=lambda: x[np.broadcast_to(mask, x.shape)],
                compress=(compress, {"x": x, "mask": mask}),
                floor=mask_floor(x, mask, int(np.count_nonzero(full)), x.dtype))


def p_as_tuple(n, rng):
    count = n
    mask = rng.random(count) < 0.5
    data = rng.random((count, 4), dtype=np.float32)
    nodes = nonzero_transpose("mask") + [
        constant("/Constant", np.array([1], np.int64)),
        helper.make_node("Split", ["/Transpose_output_0", "/Constant_output_0"], ["/Split_output_0"], name="/Split", axis=1),
        constant("/Constant_1", np.array([1], np.int64)),
        helper.make_node("Squeeze", ["/Split_output_0", "/Constant_1_output_0"], ["/Squeeze_output_0"], name="/Squeeze"),
        helper.make_node("Gather", ["data", "/Squeeze_output_0"], ["/Gather_output_0"], name="/Gather", axis=0)]
    m = make_model(nodes, [vi("mask", B, ["N"]), vi("data", F, ["N", 4])], [vi("/Gather_output_0", F, ["nnz", 4])])
    compress = make_model([helper.make_node("Compress", ["data", "mask"], ["y"], axis=0)],
                          [vi("data", F, [count, 4]), vi("mask", B, [count])], [vi("y", F, ["nnz", 4])])
    return dict(model=m, feeds={"mask": mask, "data": data}, numpy=lambda: data[mask],
                compress=(compress, {"data": data, "mask": mask}),
                floor=mask_floor(data, mask, int(np.count_nonzero(mask)) * 4, data.dtype))


def constant(name, value):
    """A Constant node, as the TorchScript exporter writes scalars, split sizes and axes."""
    return helper.make_node("Constant", [], [name + "_output_0"], name=name,
                            value=numpy_helper.from_array(value, name + "_output_0"))


def mask_floor(x, mask, out_elems, dtype):
    xbuf, ybuf = np.empty_like(x), np.empty(out_elems, dtype)

    def floor():
        np.copyto(xbuf, x)
        np.count_nonzero(mask)  # one read of the mask
        ybuf.fill(1)
    return floor


PATTERNS = [
    ("torch.nonzero(x)", "nonzero_transpose", p_nonzero),
    ("x[mask]", "index_mask", p_index_mask),
    ("boxes[scores > t]", "boxes_scores", p_boxes),
    ("masked_select, broadcast mask", "masked_select_broadcast", p_masked_select),
    ("nonzero(as_tuple=True) -> Gather", "as_tuple_gather", p_as_tuple),
]
# "Large" is the target size: X holds 16M float32 (64 MB). For the 1-D mask patterns that
# means 4M boxes of 4 floats.
LARGE = {"nonzero_transpose": 4096 * 4096, "index_mask": 4096 * 4096, "masked_select_broadcast": 4096 * 4096,
         "boxes_scores": 4096 * 4096 // 4, "as_tuple_gather": 4096 * 4096 // 4}
SMALL = [1024, 4096, 16384, 65536]


def detection_like(chains, weights_mb, path, anchors=8732):
    """A large model for timing the rewriter: `chains` per-class post-processing chains as the
    TorchScript exporter writes torchvision's (Gather(scores, c, axis=1) -> Greater -> NonZero ->
    Transpose -> Split -> Squeeze -> Gather(boxes, axis=0); SSDlite has 180 NonZero), beside a
    MatMul head whose weights weigh `weights_mb` MB so that parsing and writing count too."""
    rng = np.random.default_rng(3)
    k = max(1, int(weights_mb * (1 << 20) / 4 / 1024))
    inits = [numpy_helper.from_array(rng.random((1024, k), dtype=np.float32), "head.weight")]
    nodes = [helper.make_node("MatMul", ["features", "head.weight"], ["head"], name="/head/MatMul"),
             constant("/Constant_threshold", np.array(THRESHOLD, np.float32)),
             constant("/Constant_one", np.array([1], np.int64))]
    outputs = [vi("head", F, [1, k])]
    for c in range(chains):
        p = f"/postprocess.{c}/"
        nodes += [constant(p + "Constant", np.array(c, np.int64)),
                  helper.make_node("Gather", ["scores", p + "Constant_output_0"], [p + "Gather_output_0"],
                                   name=p + "Gather", axis=1),
                  helper.make_node("Greater", [p + "Gather_output_0", "/Constant_threshold_output_0"],
                                   [p + "Greater_output_0"], name=p + "Greater")]
        nodes += nonzero_transpose(p + "Greater_output_0", p)
        nodes += [helper.make_node("Split", [p + "Transpose_output_0", "/Constant_one_output_0"], [p + "Split_output_0"],
                                   name=p + "Split", axis=1),
                  helper.make_node("Squeeze", [p + "Split_output_0", "/Constant_one_output_0"], [p + "Squeeze_output_0"],
                                   name=p + "Squeeze"),
                  helper.make_node("Gather", ["boxes", p + "Squeeze_output_0"], [p + "boxes"], name=p + "Gather_1", axis=0)]
        outputs.append(vi(p + "boxes", F, ["nnz", 4]))
    graph = helper.make_graph(
        nodes, "detection_like",
        [vi("features", F, [1, 1024]), vi("boxes", F, [anchors, 4]), vi("scores", F, [anchors, chains])],
        outputs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
