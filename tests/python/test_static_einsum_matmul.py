"""Issue 38: under `--static --target qnn`, a two-operand Einsum of batch letters, one contracted
letter and one free letter per operand is written as Transpose, MatMul and Transpose
(crates/emit-static/src/qnn/einsum_matmul.rs), because QNN HTP takes no Einsum whose batch letters
are not leading (Longformer's `blhd,bshd->blhs`). An Einsum already in a batched MatMul's form
(`bcxd,bcyd->bcxy`) stays, as do other forms and the other targets. The rewritten model must
equal ONNX Runtime's Einsum on the same inputs (the same dot products; 1e-6 relative for the
order of their terms)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import session
from static_cases import static_model

SHAPES = {"blhd,bshd->blhs": ([2, 5, 3, 4], [2, 6, 3, 4]), "bcxd,bcyd->bcxy": ([2, 3, 5, 4], [2, 3, 6, 4]),
          "lhd,hsd->shl": ([5, 3, 4], [3, 6, 4]), "bij,bjk->bik": ([2, 5, 4], [2, 4, 6]),
          "bld,bsd->b": ([2, 5, 4], [2, 6, 4])}
REWRITTEN = {"blhd,bshd->blhs", "lhd,hsd->shl"}


def einsum_model(equation):
    a, b = SHAPES[equation]
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation=equation)
    graph = helper.make_graph(
        [node], "einsum",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, a), helper.make_tensor_value_info("b", TensorProto.FLOAT, b)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("target", ["qnn", "generic"])
@pytest.mark.parametrize("equation", sorted(SHAPES))
def test_an_einsum_for_qnn_is_a_matmul_where_its_batch_letters_do_not_lead(equation, target):
    model = einsum_model(equation)
    static, _ = static_model(model, *([] if target == "generic" else ["--target", target]))
    ops = [n.op_type for n in static.graph.node]
    if target == "qnn" and equation in REWRITTEN:
        assert "Einsum" not in ops and ops.count("MatMul") == 1, ops
    else:
        assert ops == ["Einsum"], ops
    rng = np.random.default_rng(9)
    a, b = SHAPES[equation]
    feeds = {"a": rng.standard_normal(a).astype(np.float32), "b": rng.standard_normal(b).astype(np.float32)}
    (want,) = session(model, library=False).run(None, feeds)
    (got,) = session(static, library=False).run(None, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
