"""Issue 25, item 1 b and c, for the differential tests: `x[torch.where(c)]` with a k-D c (k 2
or 3) as the torch exporters take the coordinates apart into columns and put them back
(models/real/README.md's chains). chain_strategies.STRATEGIES includes it.

- dynamo: each column `Slice(t, [i], [i+1], axes=[1]) -> Squeeze([1])` or
  `Gather(t, i, axis=1)`, then `Unsqueeze([-1])`; `Concat(axis=-1)` of every column in order;
  `GatherND(x, .)`.
- TorchScript: `Split(t, axis=1)` into one-column pieces, `Squeeze([1])` each; the linear index
  `Add(c_j, Mul(index, Gather(Shape(x), j)))`; `Gather(Flatten(x, axis=k), ., axis=0)`; then
  `Reshape(., Concat([-1], Shape(x)[k:]))` and `Reshape(., Concat(Shape(index), Shape(x)[k:]))`.

The mask may be shorter or longer than x where the dims are named apart (chain_strategies'
`mismatch`): dynamo's GatherND then fails exactly where a coordinate is out of range; the linear
index runs while it stays inside the flattened x."""

from hypothesis import strategies as st

from chain_strategies import DATA_DTYPES, Builder


def where_tuple(draw):
    b = Builder(draw)
    k = draw(st.integers(2, 3))
    dtype, form = draw(st.sampled_from(DATA_DTYPES)), draw(st.sampled_from(["dynamo", "torchscript"]))
    # TorchScript's Reshape(., [-1] + trail) cannot infer -1 beside a 0, and onnx.reference
    # cannot reshape its empty Gather to [-1]: sizes from 1 there.
    low = int(form == "torchscript")
    lead, trail = b.sizes(k, low=low), b.sizes(draw(st.integers(0, 1)), low=low)
    roles = [f"n{i}" for i in range(k)]
    b.mask("c", "bool", b.mask_sizes(lead), roles, inside=lead, data=[lead + trail])
    b.data("x", dtype, lead + trail, roles + [f"t{i}" for i in range(len(trail))])
    t = b.transpose(b.node("NonZero", ["c"], "nz"))
    if form == "dynamo":
        columns = []
        for i in range(k):
            if draw(st.booleans()):
                s = b.node("Slice", [t, b.const(f"s{i}", [i]), b.const(f"e{i}", [i + 1]), b.const(f"a{i}", [1])], f"slice{i}")
                col = b.axes_op("Squeeze", s, f"col{i}", [1])
            else:
                col = b.node("Gather", [t, b.const(f"i{i}", i, scalar=True)], f"col{i}", axis=1)
            columns.append(b.axes_op("Unsqueeze", col, f"un{i}", [-1]))
        b.node("Concat", columns, "idx", axis=-1)
        b.node("GatherND", ["x", "idx"], "y")
        readers = ["GatherND_y"]
    else:
        pieces = [f"piece{i}" for i in range(k)]
        if b.opset >= 13:
            b.nodes.append(b_split(b, t, pieces, [b.const("ones", [1] * k)]))
        else:
            b.nodes.append(b_split(b, t, pieces, [], split=[1] * k))
        cols = [b.axes_op("Squeeze", p, f"col{i}", [1]) for i, p in enumerate(pieces)]
        shape = b.node("Shape", ["x"], "x_shape")
        index = cols[0]
        for j in range(1, k):
            size = b.node("Gather", [shape, b.const(f"d{j}", j, scalar=True)], f"size{j}", axis=0)
            scaled = b.node("Mul", [index, size], f"scaled{j}")
            index = b.node("Add", [cols[j], scaled], f"index{j}")
        flat = b.node("Flatten", ["x"], "flat", axis=k)
        picked = b.node("Gather", [flat, index], "picked", axis=0)
        tail = b.node("Slice", [shape, b.const("k", [k]), b.const("end", [1 << 62])], "tail")
        first = b.node("Concat", [b.const("minus1", [-1]), tail], "first_shape", axis=0)
        rows = b.node("Reshape", [picked, first], "rows")
        count = b.node("Shape", [index], "count")
        b.node("Reshape", [rows, b.node("Concat", [count, tail], "final_shape", axis=0)], "y")
        readers = ["Gather_picked"]
    b.output("y", dtype)
    return b.chain("where_tuple", readers)


def b_split(b, t, pieces, inputs, **attrs):
    from onnx import helper

    return helper.make_node("Split", [t, *inputs], pieces, name="Split_pieces", axis=1, **attrs)


where_tuple = st.composite(where_tuple)
