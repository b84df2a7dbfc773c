"""ONNX's own backend test vector for NonZero (test_nonzero_example), written in ONNX's layout
(model.onnx + test_data_set_0/*.pb) and run from disk with the library loaded."""

import numpy as np
import onnx
from onnx import numpy_helper

from conftest import assert_exact, backend_node_cases, load_case, run_case_model


def test_onnx_backend_vectors(tmp_path):
    cases = [c for c in backend_node_cases() if c.name.startswith("test_nonzero")]
    assert [c.name for c in cases] == ["test_nonzero_example"]
    for case in cases:
        d = tmp_path / case.name
        (d / "test_data_set_0").mkdir(parents=True)
        onnx.save(case.model, str(d / "model.onnx"))
        for i, (inputs, outputs) in enumerate(case.data_sets):
            for j, x in enumerate(inputs):
                onnx.save_tensor(numpy_helper.from_array(x, case.model.graph.input[j].name), str(d / f"test_data_set_{i}/input_{j}.pb"))
            for j, y in enumerate(outputs):
                onnx.save_tensor(numpy_helper.from_array(y, case.model.graph.output[j].name), str(d / f"test_data_set_{i}/output_{j}.pb"))
        model, inputs, expected = load_case(d)
        (got,) = run_case_model(model, inputs)
        assert_exact(got, expected[0].astype(np.int64), case.name)
        assert_exact(got, np.array([[0, 1, 1], [0, 0, 1]], dtype=np.int64), "the ONNX text's expected output")
