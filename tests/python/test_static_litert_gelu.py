"""Issue 38: under `--static --target litert`, the rank-0 divisor of an exported GELU,
`Div(x, 1.4142135)` read by an Erf, becomes a `[1]` tensor (crates/emit-static/src/litert/
gelu_divisors.rs): onnx2tf 2.6.9's tf_converter fuses TorchScript's GELU chain into LiteRT's GELU
builtin only then, and otherwise writes the Erf as FlexErf, which LiteRT does not run. The form
must equal the original exactly, node for node (dtype, shape, values, on ±0, ±inf, NaN and
subnormals); a Div
that no Erf reads, a rank-0 dividend (its quotient would become [1]; litert declares the scalar
input `s` [1] and reshapes it back) and the other targets keep
the rank-0 divisor."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_declared
from static_cases import static_model

SHAPE = [2, 5, 8]
SQRT_2 = np.float32(1.4142135)


def gelu_model():
    """y: TorchScript's GELU of x; z: x / √2 (no Erf); w: Erf(s / √2) of a rank-0 s."""
    nodes = [helper.make_node("Constant", [], ["root2"], value=numpy_helper.from_array(np.array(SQRT_2))),
             helper.make_node("Div", ["x", "root2"], ["q"]),
             helper.make_node("Erf", ["q"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["x", "e1"], ["xe"]),
             helper.make_node("Mul", ["xe", "half"], ["y"]),
             helper.make_node("Div", ["x", "root2"], ["z"]),
             helper.make_node("Div", ["s", "root2"], ["sq"]),
             helper.make_node("Erf", ["sq"], ["w"])]
    inits = [numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    graph = helper.make_graph(
        nodes, "gelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z", "w")], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def unoptimized(model):
    """A CPU session that runs the nodes as written: ONNX Runtime fuses the litert form's GELU
    (its divisor now an initializer of its own) into its Gelu kernel, which rounds otherwise by
    up to one ulp, and leaves the original's (a Constant read by three Divs) as it is."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def divisor_dims(model):
    """For each Div, by its output: the dims of its divisor (an initializer or a Constant's)."""
    tensors = {t.name: t for t in model.graph.initializer}
    tensors |= {n.output[0]: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"}
    return {n.output[0]: list(tensors[n.input[1]].dims) for n in model.graph.node if n.op_type == "Div"}


@pytest.mark.parametrize("target", ["litert", "generic", "qnn", "rknn"])
def test_a_gelu_divisor_for_litert_has_one_element(target):
    model = gelu_model()
    static, _ = static_model(model, *([] if target == "generic" else ["--target", target]))
    want_dims = {"q": [1] if target == "litert" else [], "z": [], "sq": []}
    assert divisor_dims(static) == want_dims
    if target == "litert":
        (q,) = [n for n in static.graph.node if n.output[0] == "q"]
        (divisor,) = [t for t in static.graph.initializer if t.name == q.input[1]]
        assert numpy_helper.to_array(divisor).tolist() == [SQRT_2]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3.4e38, -3.4e38, 1.0, -2.5]
    x = np.random.default_rng(7).standard_normal(np.prod(SHAPE)).astype(np.float32)
    x[:len(special)] = special
    feeds = {"x": x.reshape(SHAPE), "s": np.array(-0.75, np.float32)}
    want = unoptimized(model).run(None, feeds)
    got = run_declared(unoptimized(static), feeds)
    for name, g, w in zip(("y", "z", "w"), got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{target} {name}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        same = np.array_equal(g, w, equal_nan=True) and np.array_equal(np.signbit(g), np.signbit(w))
        assert same, f"{target} {name}: values differ"
