"""Hand-built NonZero chains for `nonzero optimize`: dtypes, opsets 9-21, ranks 1-5, symbolic
dimensions, If/Loop bodies, a NonZero with two readers. Writes `<name>.onnx` and
`expected.json` (the op counts each model must have after the rewrite).

    .venv/bin/python models/rewrite-variants/generate.py
"""

import json
import os

import onnx
from onnx import TensorProto as T
from onnx import helper as h

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {}


def add(name, nodes, inputs, outputs, opset, expect, initializers=()):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="nonzero-variants")
    model.ir_version = 7 if opset <= 15 else 8 if opset <= 18 else 10
    onnx.checker.check_model(model, full_check=True)
    MODELS[name] = (model, expect)


def vi(name, elem, dims):
    return h.make_tensor_value_info(name, elem, dims)


def ints(name, values):
    return h.make_tensor(name, T.INT64, [len(values)], values)


def transpose(src, dst):
    return h.make_node("Transpose", [src], [dst], perm=[1, 0])


# ArgWhere over the element types ONNX Runtime's built-in NonZero takes (it has no double or
# int8 kernel, so the tests could not compare those with the built-in).
for elem, tag in [(T.FLOAT, "float"), (T.UINT8, "uint8"),
                  (T.INT32, "int32"), (T.INT64, "int64"), (T.BOOL, "bool"), (T.FLOAT16, "float16")]:
    add(f"argwhere_{tag}", [h.make_node("NonZero", ["x"], ["nz"]), transpose("nz", "y")],
        [vi("x", elem, ["N", 3])], [vi("y", T.INT64, [None, 2])], 13,
        {"ArgWhere": 1, "NonZero": 0, "Transpose": 0})

# x[mask] at ranks 1-5, mask rank = data rank and mask rank < data rank.
for rank in range(1, 6):
    dims = [f"d{i}" for i in range(rank)]
    for k in sorted({rank, max(1, rank - 2)}):
        add(f"boolean_mask_rank{rank}_mask{k}",
            [h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"),
             h.make_node("GatherND", ["x", "t"], ["y"])],
            [vi("x", T.FLOAT, dims), vi("m", T.BOOL, dims[:k])], [vi("y", T.FLOAT, [None] + dims[k:])], 17,
            {"BooleanMask": 1, "NonZero": 0, "Transpose": 0, "GatherND": 0})

# One chain per opset: GatherND (11+) and the Split -> Squeeze -> Gather column (9+).
for opset in (9, 11, 13, 17, 18, 21):
    squeeze_axes_input = opset >= 13
    split = (h.make_node("Split", ["t"], ["col"], axis=1) if opset < 18
             else h.make_node("Split", ["t"], ["col"], axis=1, num_outputs=1))
    squeeze = (h.make_node("Squeeze", ["col", "axes"], ["sq"]) if squeeze_axes_input
               else h.make_node("Squeeze", ["col"], ["sq"], axes=[1]))
    add(f"where_gather_opset{opset}",
        [h.make_node("Greater", ["s", "thr"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"),
         split, squeeze, h.make_node("Gather", ["b", "sq"], ["y"], axis=0)],
        [vi("s", T.FLOAT, ["N"]), vi("b", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, [None, 4])], opset,
        {"BooleanMask": 1, "NonZero": 0, "Transpose": 0, "Split": 0, "Squeeze": 0, "Gather": 0},
        [h.make_tensor("thr", T.FLOAT, [], [0.5])] + ([ints("axes", [1])] if squeeze_axes_input else []))
    if opset >= 11:
        add(f"x_mask_opset{opset}",
            [h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"), h.make_node("GatherND", ["x", "t"], ["y"])],
            [vi("x", T.INT32, [3, "M", 2]), vi("m", T.BOOL, [3, "M"])], [vi("y", T.INT32, [None, 2])], opset,
            {"BooleanMask": 1, "NonZero": 0, "Transpose": 0, "GatherND": 0})

# Static shapes and a mask made by Expand to a constant shape.
add("masked_select_expand_const",
    [h.make_node("Expand", ["m", "shape"], ["me"]), h.make_node("NonZero", ["me"], ["nz"]), transpose("nz", "t"),
     h.make_node("GatherND", ["x", "t"], ["y"])],
    [vi("x", T.DOUBLE, [4, 5]), vi("m", T.BOOL, [1, 5])], [vi("y", T.DOUBLE, [None])], 17,
    {"BooleanMask": 1, "NonZero": 0, "Transpose": 0, "GatherND": 0, "Expand": 1}, [ints("shape", [4, 5])])

# NonZero with two readers: its own output is a graph output too, so it stays.
add("two_readers",
    [h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"), h.make_node("GatherND", ["x", "t"], ["y"])],
    [vi("x", T.FLOAT, ["N", 3]), vi("m", T.BOOL, ["N", 3])],
    [vi("y", T.FLOAT, [None]), vi("nz", T.INT64, [2, None])], 13,
    {"BooleanMask": 1, "NonZero": 1, "Transpose": 0, "GatherND": 0})

# Unproven leading dimensions of a 1-D mask: the GatherND of its [nnz, 1] coordinates is the
# gather BooleanMaskAxis stands for (axis 0), whatever the sizes (patterns/mask_axis.rs).
add("unproven_dims",
    [h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"), h.make_node("GatherND", ["x", "t"], ["y"])],
    [vi("x", T.FLOAT, ["A", 3]), vi("m", T.BOOL, ["B"])], [vi("y", T.FLOAT, [None, 3])], 13,
    {"BooleanMaskAxis": 1, "ArgWhere": 0, "BooleanMask": 0, "NonZero": 0, "Transpose": 0, "GatherND": 0})

# Unproven leading dimensions of a 2-D mask (the first named apart, G and A, which the tests'
# symbol_size makes equal): If the sizes agree at run time, BooleanMask, else the gather of
# ArgWhere (patterns/guarded.rs).
add("unproven_dims_2d",
    [h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"), h.make_node("GatherND", ["x", "t"], ["y"])],
    [vi("x", T.FLOAT, ["A", "B", 3]), vi("m", T.BOOL, ["G", "B"])], [vi("y", T.FLOAT, [None, 3])], 13,
    {"If": 1, "ArgWhere": 1, "BooleanMask": 1, "NonZero": 0, "Transpose": 0, "GatherND": 1})


def argwhere_branch(name, src):
    return h.make_graph([h.make_node("NonZero", [src], [name + "_nz"]), transpose(name + "_nz", name)],
                        name, [], [vi(name, T.INT64, [None, 2])])


# If: a chain in each branch, reading the outer tensors.
add("if_branches",
    [h.make_node("If", ["c"], ["y"], then_branch=argwhere_branch("then_y", "x"),
                 else_branch=argwhere_branch("else_y", "z"))],
    [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3, 4]), vi("z", T.FLOAT, [5, 6])], [vi("y", T.INT64, [None, 2])], 13,
    {"ArgWhere": 2, "NonZero": 0, "Transpose": 0, "If": 1})

# Loop: the body masks the outer x by its own comparison, each iteration.
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Greater", ["x", "thr"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]), transpose("nz", "t"),
     h.make_node("GatherND", ["x", "t"], ["sel"]), h.make_node("Identity", ["acc_in"], ["acc_out"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in", T.FLOAT, [])],
    [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, []), vi("sel", T.FLOAT, [None])])
add("loop_body",
    [h.make_node("Loop", ["trip", "", "acc"], ["acc_final", "sels"], body=body)],
    [vi("x", T.FLOAT, ["N", 3]), vi("trip", T.INT64, []), vi("acc", T.FLOAT, [])],
    [vi("acc_final", T.FLOAT, []), vi("sels", T.FLOAT, [None, None])], 13,
    {"BooleanMask": 1, "NonZero": 0, "Transpose": 0, "GatherND": 0, "Loop": 1},
    [h.make_tensor("thr", T.FLOAT, [], [0.0])])


def main():
    expected = {}
    for name, (model, expect) in MODELS.items():
        onnx.save(model, os.path.join(HERE, f"{name}.onnx"))
        expected[f"{name}.onnx"] = expect
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(MODELS)} models to {HERE}")


if __name__ == "__main__":
    main()
