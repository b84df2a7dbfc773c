"""Writes a copy of a model padded with a large initializer that the graph reads, for timing
`nonzero optimize` on big files (issue 25: the SSDlite export padded to 240 MiB).

    .venv/bin/python benches/padded_model.py models/real/ssdlite320_ts17.onnx build/ssdlite_240mib.onnx --mib 240

The padding is a float32 initializer `padding` of the size asked, added to a new graph output
`padded_sum = ReduceSum(padding)`, so no rewriter may drop it as unread.
"""

import argparse

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--mib", type=int, default=240)
    args = parser.parse_args()
    model = onnx.load(args.model)
    pad = np.random.default_rng(0).standard_normal(args.mib * 2**20 // 4).astype(np.float32)
    model.graph.initializer.append(numpy_helper.from_array(pad, "padding"))
    model.graph.node.append(helper.make_node("ReduceSum", ["padding"], ["padded_sum"], keepdims=0))
    model.graph.output.append(helper.make_tensor_value_info("padded_sum", onnx.TensorProto.FLOAT, []))
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
