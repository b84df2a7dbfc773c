"""Hand-made models (onnx.helper, opset 17, fixed input shapes) for the judge's own tests: the
dynamic originals as PyTorch exports them, and their standard-op static forms built by hand as
issue 26 describes them, before `nonzero optimize --static` writes any. Imports no pytest."""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

OPSET = 17


def _model(nodes, inputs, outputs, initializers=(), name="g"):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="nonzero-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def nonzero(shape):
    """`y = NonZero(x)` for a float32 x of a fixed shape: y is [rank, nnz]."""
    return _model(
        [h.make_node("NonZero", ["x"], ["y"], name="nonzero")],
        [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
        [h.make_tensor_value_info("y", T.INT64, [len(shape), "nnz"])],
    )


def x_mask(shape, tail):
    """`y = x[mask]` as PyTorch's ts17 exporter writes it: NonZero(mask), Transpose, GatherND.
    mask is bool `shape`, x is float32 `shape + tail`, y is [nnz, *tail]."""
    return _model(
        [
            h.make_node("NonZero", ["mask"], ["nz"], name="nonzero"),
            h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0], name="transpose"),
            h.make_node("GatherND", ["x", "idx"], ["y"], name="gather_nd"),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, list(shape) + list(tail)),
         h.make_tensor_value_info("mask", T.BOOL, list(shape))],
        [h.make_tensor_value_info("y", T.FLOAT, ["nnz"] + list(tail))],
    )


def mask_assign(shape):
    """`x[mask] = v` (v a float32 scalar input) as PyTorch's ts17 exporter writes it: NonZero,
    Transpose, ScatterND with v expanded to the count. The output's shape is static; the count is
    dynamic inside the graph."""
    return _model(
        [
            h.make_node("NonZero", ["mask"], ["nz"], name="nonzero"),
            h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0], name="transpose"),
            h.make_node("Shape", ["idx"], ["idx_shape"], end=1, name="count_shape"),
            h.make_node("Expand", ["v", "idx_shape"], ["updates"], name="expand"),
            h.make_node("ScatterND", ["x", "idx", "updates"], ["y"], name="scatter_nd"),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, list(shape)),
         h.make_tensor_value_info("mask", T.BOOL, list(shape)),
         h.make_tensor_value_info("v", T.FLOAT, [])],
        [h.make_tensor_value_info("y", T.FLOAT, list(shape))],
    )


def nms(boxes, picks):
    """`selected = NonMaxSuppression(boxes, scores, picks, 0.5, 0.25)` over one list of `boxes`
    boxes ([1, boxes, 4] corners and [1, 1, boxes] scores): a detector's NMS in small, keeping at
    most `picks`. Its rows are [k, 3]."""
    return _model(
        [h.make_node("NonMaxSuppression", ["boxes", "scores", "picks", "iou", "threshold"], ["selected"],
                     name="nms")],
        [h.make_tensor_value_info("boxes", T.FLOAT, [1, boxes, 4]),
         h.make_tensor_value_info("scores", T.FLOAT, [1, 1, boxes])],
        [h.make_tensor_value_info("selected", T.INT64, ["k", 3])],
        [_const("picks", np.array([picks], np.int64)), _const("iou", np.array([0.5], np.float32)),
         _const("threshold", np.array([0.25], np.float32))],
    )


def _compaction(mask, numel, prefix):
    """Nodes and initializers that compact a bool tensor `mask` of `numel` elements: the flat
    indices of its true elements in row-major order in `numel` slots, -1 in the unused ones
    (`<prefix>_flat`), `<prefix>_valid` (flat >= 0), and the count `<prefix>_count` (an int64
    scalar, ReduceSum(Cast(mask))). CumSum gives each true element its slot; ScatterElements
    writes numel + 1 slots, the last one taking every false element; Slice drops it."""
    p = prefix
    inits = [
        _const(f"{p}_flat_shape", np.array([numel], np.int64)),
        _const(f"{p}_numel", np.array(numel, np.int64)),
        _const(f"{p}_one", np.array(1, np.int64)),
        _const(f"{p}_zero_axis", np.array(0, np.int64)),
        _const(f"{p}_iota", np.arange(numel, dtype=np.int64)),
        _const(f"{p}_empty", np.full(numel + 1, -1, np.int64)),
        _const(f"{p}_starts", np.array([0], np.int64)),
        _const(f"{p}_ends", np.array([numel], np.int64)),
        _const(f"{p}_minus_one", np.array(-1, np.int64)),
    ]
    nodes = [
        h.make_node("Reshape", [mask, f"{p}_flat_shape"], [f"{p}_m"]),
        h.make_node("Cast", [f"{p}_m"], [f"{p}_m64"], to=T.INT64),
        h.make_node("CumSum", [f"{p}_m64", f"{p}_zero_axis"], [f"{p}_cs"]),
        h.make_node("Sub", [f"{p}_cs", f"{p}_one"], [f"{p}_slot"]),
        h.make_node("Where", [f"{p}_m", f"{p}_slot", f"{p}_numel"], [f"{p}_target"]),
        h.make_node("ScatterElements", [f"{p}_empty", f"{p}_target", f"{p}_iota"], [f"{p}_slots"], axis=0),
        h.make_node("Slice", [f"{p}_slots", f"{p}_starts", f"{p}_ends"], [f"{p}_flat"]),
        h.make_node("GreaterOrEqual", [f"{p}_flat", f"{p}_zero_axis"], [f"{p}_valid"]),
        h.make_node("ReduceSum", [f"{p}_m64"], [f"{p}_count"], keepdims=0),
    ]
    return nodes, inits


def _coordinates(flat, valid, shape, out, prefix):
    """[rank, numel] int64 coordinates of the flat indices `flat` (Div/Mod by the strides), -1
    where `valid` is false."""
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    p, nodes, rows = prefix, [], []
    inits = [_const(f"{p}_axis0", np.array([0], np.int64)), _const(f"{p}_pad", np.array(-1, np.int64))]
    for axis, (stride, dim) in enumerate(zip(strides, shape)):
        inits += [_const(f"{p}_stride{axis}", np.array(stride, np.int64)),
                  _const(f"{p}_dim{axis}", np.array(dim, np.int64))]
        nodes += [
            h.make_node("Div", [flat, f"{p}_stride{axis}"], [f"{p}_q{axis}"]),
            h.make_node("Mod", [f"{p}_q{axis}", f"{p}_dim{axis}"], [f"{p}_c{axis}"]),
            h.make_node("Unsqueeze", [f"{p}_c{axis}", f"{p}_axis0"], [f"{p}_row{axis}"]),
        ]
        rows.append(f"{p}_row{axis}")
    nodes += [
        h.make_node("Concat", rows, [f"{p}_coords"], axis=0),
        h.make_node("Where", [valid, f"{p}_coords", f"{p}_pad"], [out]),
    ]
    return nodes, inits


def nonzero_static(shape):
    """The static form of `nonzero(shape)`: y is [rank, numel] with -1 in the unused columns,
    plus `y_count`."""
    numel = int(np.prod(shape))
    inits = [_const("zero", np.array(0, np.float32))]
    nodes = [h.make_node("Equal", ["x", "zero"], ["is_zero"]), h.make_node("Not", ["is_zero"], ["mask"])]
    more, more_inits = _compaction("mask", numel, "k")
    nodes, inits = nodes + more, inits + more_inits
    more, more_inits = _coordinates("k_flat", "k_valid", list(shape), "y", "c")
    nodes, inits = nodes + more, inits + more_inits
    nodes.append(h.make_node("Identity", ["k_count"], ["y_count"]))
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
        [h.make_tensor_value_info("y", T.INT64, [len(shape), numel]),
         h.make_tensor_value_info("y_count", T.INT64, [])],
        inits,
    )


def x_mask_static(shape, tail):
    """The static form of `x_mask(shape, tail)`: y is [numel, *tail], rows past the count 0,
    plus `y_count`. The rows of x (reshaped to [numel, *tail]) are gathered at the compacted
    flat indices, with -1 replaced by 0 (a valid row, masked again to 0). The gathered values
    are Where's third input, not its second: ONNX Runtime 1.31.1's Where turns a -0.0 taken
    from its second input into +0.0 (test_onnxruntime_where_drops_the_sign_of_a_zero_from_x)."""
    numel = int(np.prod(shape))
    tail = list(tail)
    nodes, inits = _compaction("mask", numel, "k")
    inits += [
        _const("rows_shape", np.array([numel] + tail, np.int64)),
        _const("valid_shape", np.array([numel] + [1] * len(tail), np.int64)),
        _const("zero_index", np.array(0, np.int64)),
        _const("zero_value", np.array(0, np.float32)),
    ]
    nodes += [
        h.make_node("Reshape", ["x", "rows_shape"], ["rows"]),
        h.make_node("Where", ["k_valid", "k_flat", "zero_index"], ["safe_index"]),
        h.make_node("Gather", ["rows", "safe_index"], ["gathered"], axis=0),
        h.make_node("Not", ["k_valid"], ["unused"]),
        h.make_node("Reshape", ["unused", "valid_shape"], ["unused_rows"]),
        h.make_node("Where", ["unused_rows", "zero_value", "gathered"], ["y"]),
        h.make_node("Identity", ["k_count"], ["y_count"]),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, list(shape) + tail),
         h.make_tensor_value_info("mask", T.BOOL, list(shape))],
        [h.make_tensor_value_info("y", T.FLOAT, [numel] + tail),
         h.make_tensor_value_info("y_count", T.INT64, [])],
        inits,
    )


def mask_assign_static(shape):
    """The static form of `mask_assign(shape)`: Where(mask, v, x), as issue 26 writes it. Exact
    on OpenVINO and IREE; on ONNX Runtime 1.31.1 a written v of -0.0 comes out +0.0 (its Where
    drops the sign of a zero from the second input), which the tests pin."""
    return _model(
        [h.make_node("Where", ["mask", "v", "x"], ["y"], name="where")],
        [h.make_tensor_value_info("x", T.FLOAT, list(shape)),
         h.make_tensor_value_info("mask", T.BOOL, list(shape)),
         h.make_tensor_value_info("v", T.FLOAT, [])],
        [h.make_tensor_value_info("y", T.FLOAT, list(shape))],
    )


COMPARISONS = ("Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Equal")


def comparisons(n):
    """Each of COMPARISONS of a float32 x [n] with the constant 0.5, one bool output each (named
    after the op)."""
    return _model(
        [h.make_node(op, ["x", "c"], [op], name=op) for op in COMPARISONS],
        [h.make_tensor_value_info("x", T.FLOAT, [n])],
        [h.make_tensor_value_info(op, T.BOOL, [n]) for op in COMPARISONS],
        [_const("c", np.array(0.5, np.float32))],
    )


def arithmetic(n):
    """`mul = x * 2` and `add = x + y`, float32 x and y [n]."""
    return _model(
        [h.make_node("Mul", ["x", "two"], ["mul"], name="mul"), h.make_node("Add", ["x", "y"], ["add"], name="add")],
        [h.make_tensor_value_info("x", T.FLOAT, [n]), h.make_tensor_value_info("y", T.FLOAT, [n])],
        [h.make_tensor_value_info("mul", T.FLOAT, [n]), h.make_tensor_value_info("add", T.FLOAT, [n])],
        [_const("two", np.array(2, np.float32))],
    )


# Input cases: the mask random (about half true), all false, all true; x with NaN, -0.0 and
# denormals (positive and negative) at random places among normal values.
MASK_CASES = ("random", "none", "all")
DENORMALS = np.array([1e-40, -1e-40, np.finfo(np.float32).smallest_subnormal], np.float32)


def specials(shape, rng, zeros=0.0):
    """float32 values of `shape`, normal, with a fraction `zeros` set to +0.0, and NaN, -0.0 and
    each of DENORMALS at distinct random places."""
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) < zeros] = 0.0
    flat = x.reshape(-1)
    places = rng.choice(flat.size, 2 + len(DENORMALS), replace=False)
    flat[places] = np.concatenate([np.array([np.nan, -0.0], np.float32), DENORMALS])
    return x


def mask(shape, case, rng):
    if case == "random":
        return rng.random(shape) < 0.5
    return np.full(shape, case == "all", dtype=bool)


def flush_denormals(x):
    """x with every denormal replaced by a zero of the same sign (what IREE's CPU code does)."""
    x = x.copy()
    tiny = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)
    x[tiny] = np.copysign(np.zeros_like(x[tiny]), x[tiny])
    return x
