"""Issue 25, item 6: a hypothesis generator of the graphs exporters write around NonZero, for
test_optimize_differential.py. Each strategy draws one chain of models/real/README.md's table
("The chains the exporters wrote around NonZero") with its inputs: random shapes (sizes 0 and 1
included), element types, densities (empty and all-true masks included), opsets, constants as
initializers or Constant nodes, and dims declared as numbers, as shared names (torch), named
apart (tf2onnx's `unk__41`: every dynamic dim its own name) or unnamed. With dims named apart or
unnamed, the mask may be shorter or longer than the data it selects from: the original's
Gather/GatherND runs whenever every selected coordinate is in range, and fails otherwise (a
longer mask has its entries past the data's end cleared, or not). Models are built with
onnx.helper; only onnx-free strategies are used. Imports no pytest and no onnxruntime."""

import itertools

import numpy as np
import onnx
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto as T, helper, numpy_helper

ELEM = {"float32": T.FLOAT, "float16": T.FLOAT16, "float64": T.DOUBLE, "int64": T.INT64,
        "int32": T.INT32, "uint8": T.UINT8, "bool": T.BOOL}
DATA_DTYPES = tuple(ELEM)
# ONNX Runtime has no bool Add, and 1.17 no uint8 Add.
ADD_DTYPES = ("float32", "float16", "float64", "int64", "int32")
# The mask (NonZero's input): every type ONNX Runtime's built-in NonZero takes (double is not one;
# float16 goes through a Cast it inserts). Bool is what exporters write; the others are left with
# `mask-not-bool` where a gather reads them.
MASK_DTYPES = ("bool",) * 5 + ("uint8", "int32", "int64", "float32", "float16")
# Squeeze/Unsqueeze/ReduceSum take axes as an attribute before 13; ScatterND has `reduction` from
# 16. GatherND, ScatterND and Slice's inputs need 11: chains without them start at NonZero's 9,
# where BooleanMask's fallback is Compress. 20 is the newest that ONNX Runtime 1.17 loads.
OPSETS = (11, 13, 17, 18, 20)
OLD_OPSETS = (9, 10) + OPSETS
NAMINGS = ("static", "shared", "apart", "unknown")
DENSITIES = ("random", "random", "none", "all")
# Non-zero values per mask type (NaN is non-zero, -0.0 is zero).
NONZERO_VALUES = {"float": [1.0, -2.5, float("inf"), float("nan")], "int": [1, -1, 7], "uint8": [1, 255]}


class Chain:
    """A generated model and its feeds. `readers` are the names of the nodes that read the
    coordinates (gathers, scatters): each must be fused away or accounted for in the report;
    `coordinate_outputs` are graph outputs that are the coordinates themselves; `scatter` is
    the masked write's ScatterND node, if any."""

    def __init__(self, kind, model, feeds, readers, coordinate_outputs=(), scatter=""):
        self.kind, self.model, self.feeds = kind, model, feeds
        self.readers, self.coordinate_outputs, self.scatter = tuple(readers), tuple(coordinate_outputs), scatter

    def text(self):
        """The model as ONNX text (onnx.parser.parse_model reads it back) and the feeds as Python
        (their exact bits, then their values), to reproduce a failure by hand."""
        feeds = "\n".join(f"{k} = np.frombuffer(bytes.fromhex('{v.tobytes().hex()}'), '{v.dtype}')"
                          f".reshape({v.shape})  # {v.tolist()}" for k, v in self.feeds.items())
        return f"{onnx.printer.to_text(self.model)}\n{feeds}"

    def __repr__(self):
        return f"Chain({self.kind}):\n{self.text()}"

    def _repr_pretty_(self, printer, cycle):  # what hypothesis prints for a failing example
        printer.text(repr(self))


def elements(dtype):
    """Any value of the type: floats with NaN, infinities, -0.0 and subnormals."""
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("float"):
        return st.floats(width=int(dtype[5:]))
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max))


def mask_values(dtype):
    if dtype == "bool":
        return [True]
    if dtype.startswith("float"):
        return NONZERO_VALUES["float"]
    return NONZERO_VALUES["uint8" if dtype == "uint8" else "int"]


class Builder:
    """One model: draws its opset, dim naming and constant style, and collects nodes, inputs,
    initializers, outputs and feeds."""

    def __init__(self, draw, mismatch_ok=True, opsets=OPSETS):
        self.draw = draw
        self.opset = draw(st.sampled_from(opsets))
        # IR 7 is raised to 8 by the rewrite (functions need it); 1.17 loads IR 9 at most.
        self.ir = 9 if self.opset >= 19 else draw(st.sampled_from([7, 8])) if self.opset <= 13 else 8
        self.naming = draw(st.sampled_from(NAMINGS))
        # A mask whose sizes differ from the data's contradicts shared names or numbers.
        self.mismatch = mismatch_ok and self.naming in ("apart", "unknown") and draw(st.booleans())
        self.constants_as_nodes = draw(st.booleans())
        self.unk = itertools.count(draw(st.integers(0, 90)))
        self.nodes, self.inputs, self.inits, self.outputs, self.feeds = [], [], [], [], {}
        self.shared = {}  # role -> its size, for shared naming

    # ---- graph pieces ----
    def node(self, op, inputs, out, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{out}", **attrs))
        return out

    def const(self, name, values, scalar=False):
        """An int64 constant: an initializer or a Constant node."""
        a = np.array(values, dtype=np.int64).reshape(() if scalar else (-1,))
        if self.constants_as_nodes:
            return self.node("Constant", [], name, value=numpy_helper.from_array(a, name))
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def axes_op(self, op, x, out, axes, **attrs):
        """Squeeze/Unsqueeze/ReduceSum with its axes as the opset wants them."""
        if self.opset < 13:
            return self.node(op, [x], out, axes=axes, **attrs)
        return self.node(op, [x, self.const(out + "_axes", axes)], out, **attrs)

    def transpose(self, nz, out="t"):
        """tf2onnx writes no perm (the default reverses the axes); the others write [1, 0]."""
        if self.draw(st.booleans()):
            return self.node("Transpose", [nz], out)
        return self.node("Transpose", [nz], out, perm=[1, 0])

    def dims(self, shape, roles):
        out = []
        for size, role in zip(shape, roles):
            if self.naming == "static":
                out.append(size)
            elif self.naming == "shared":
                # Equal roles share a name only where their sizes are equal (a broadcast 1 is not).
                name = role if self.shared.setdefault(role, size) == size else f"{role}_{size}"
                out.append(name)
            elif self.naming == "apart":
                out.append(f"unk__{next(self.unk)}")
            else:
                out.append(None)
        return out

    def add_input(self, name, array, roles):
        elem = ELEM[str(array.dtype)]
        self.inputs.append(helper.make_tensor_value_info(name, elem, self.dims(array.shape, roles)))
        self.feeds[name] = array
        return name

    def data(self, name, dtype, shape, roles):
        return self.add_input(name, self.draw(hnp.arrays(np.dtype(dtype), tuple(shape), elements=elements(dtype))), roles)

    def mask(self, name, dtype, shape, roles, inside=None, data=()):
        """A mask of the density drawn; `inside` (the data's leading sizes) clears, if drawn, the
        entries past the data's end, so that every selected coordinate is in range. They are
        always cleared when the data (any tensor of `data` shapes) is empty: ONNX Runtime
        1.17.3's GatherND then reads past it (garbage, or a segmentation fault) instead of
        failing, and 1.31.1 runs when the slices it reads are empty."""
        density = self.draw(st.sampled_from(DENSITIES))
        shape = tuple(shape)
        if density == "none":
            m = np.zeros(shape, dtype)
        elif density == "all":
            m = self.draw(hnp.arrays(np.dtype(dtype), shape, elements=st.sampled_from(mask_values(dtype))))
        else:
            values = [False, True] if dtype == "bool" else [0, -0.0, *mask_values(dtype)] if dtype.startswith("float") else [0, *mask_values(dtype)]
            m = self.draw(hnp.arrays(np.dtype(dtype), shape, elements=st.sampled_from(values)))
        if inside is not None and (0 in [d for shape in data for d in shape] or self.draw(st.booleans())):
            for axis, size in enumerate(inside):
                index = [slice(None)] * len(shape)
                index[axis] = slice(size, None)
                m[tuple(index)] = 0
        return self.add_input(name, m, roles)

    def output(self, name, dtype):
        self.outputs.append(helper.make_tensor_value_info(name, ELEM[dtype], None))

    def chain(self, kind, readers, coordinate_outputs=(), scatter=""):
        graph = helper.make_graph(self.nodes, kind, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)], ir_version=self.ir)
        if self.draw(st.integers(0, 3)) == 0:  # value_info as exporters write it (onnx's inference)
            model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        return Chain(kind, model, self.feeds, readers, coordinate_outputs, scatter)

    # ---- sizes ----
    def sizes(self, n, low=0, high=3):
        return [self.draw(st.integers(low, high)) for _ in range(n)]

    def mask_sizes(self, data_sizes):
        """The mask's sizes: the data's, or (dims named apart) shorter or longer on each axis."""
        if not self.mismatch:
            return list(data_sizes)
        return [max(0, s + self.draw(st.sampled_from([0, -1, 1, 2]))) for s in data_sizes]


@st.composite
def gather_nd(draw):
    """x[m]: NonZero(m) -> Transpose -> GatherND(x) (torch, tf2onnx), with an Identity between
    Transpose and GatherND as paddle2onnx writes it; the coordinates may also be gathered from
    a second tensor, or be a graph output too."""
    b = Builder(draw)
    k, trail = draw(st.integers(1, 3)), b.sizes(draw(st.integers(0, 2)))
    dtype, mask_dtype = draw(st.sampled_from(DATA_DTYPES)), draw(st.sampled_from(MASK_DTYPES))
    lead = b.sizes(k)
    extra = draw(st.sampled_from(["none", "none", "second", "output"]))
    trail2 = b.sizes(draw(st.integers(0, 1)))
    b.mask("m", mask_dtype, b.mask_sizes(lead), [f"n{i}" for i in range(k)], inside=lead,
           data=[lead + trail] + ([lead + trail2] if extra == "second" else []))
    b.data("x", dtype, lead + trail, [f"n{i}" for i in range(k)] + [f"t{i}" for i in range(len(trail))])
    t = b.transpose(b.node("NonZero", ["m"], "nz"))
    if draw(st.booleans()):
        t = b.node("Identity", [t], "t_identity")
    b.node("GatherND", ["x", t], "y")
    b.output("y", dtype)
    readers, outputs = ["GatherND_y"], []
    if extra == "second":  # boxes[m] and scores[m] from one NonZero (detection post-processing)
        dtype2 = draw(st.sampled_from(DATA_DTYPES))
        b.data("z", dtype2, lead + trail2, [f"n{i}" for i in range(k)] + [f"u{i}" for i in range(len(trail2))])
        b.node("GatherND", ["z", t], "y2")
        b.output("y2", dtype2)
        readers.append("GatherND_y2")
    elif extra == "output":  # the coordinates are also a graph output
        b.output(t, "int64")
        outputs.append(t)
    return b.chain("gather_nd", readers, coordinate_outputs=outputs)


@st.composite
def gather_column(draw):
    """NonZero(m) -> Transpose (with or without perm) -> Squeeze([1]) / Reshape([-1]) / both ->
    Gather(axis=0) of x (torch index_select, tf2onnx boolean_mask, paddle2onnx gather). A 2-D
    mask goes through Reshape(m, [-1]) first, and x through Reshape(x, [-1, ...]), as tf2onnx
    writes boolean_mask of a 2-D mask."""
    b = Builder(draw, opsets=OLD_OPSETS)
    rank = draw(st.integers(1, 2))
    # Reshape(x, [-1, ...]) cannot infer -1 beside a 0.
    trail = b.sizes(draw(st.integers(0, 2)), low=rank - 1)
    dtype, mask_dtype = draw(st.sampled_from(DATA_DTYPES)), draw(st.sampled_from(MASK_DTYPES))
    lead = b.sizes(rank)
    roles = [f"n{i}" for i in range(rank)]
    b.mask("m", mask_dtype, b.mask_sizes(lead), roles, inside=lead, data=[lead + trail])
    b.data("x", dtype, lead + trail, roles + [f"t{i}" for i in range(len(trail))])
    m, x = "m", "x"
    if rank == 2:
        m = b.node("Reshape", ["m", b.const("flat", [-1])], "m_flat")
        x = b.node("Reshape", ["x", b.const("rows", [-1] + trail)], "x_rows")
    t = b.transpose(b.node("NonZero", [m], "nz"))
    step = draw(st.sampled_from(["squeeze", "reshape", "squeeze_reshape"]))
    column = t
    if step.startswith("squeeze"):
        column = b.axes_op("Squeeze", column, "column", [1])
    if step.endswith("reshape"):
        column = b.node("Reshape", [column, b.const("column_shape", [-1])], "column_flat")
    b.node("Gather", [x, column], "y", axis=0)
    b.output("y", dtype)
    return b.chain("gather_column", ["Gather_y"])


@st.composite
def column_read(draw):
    """A column of the coordinates picked by Gather: NonZero -> Gather(axis 0, i) (no
    Transpose), or NonZero -> Transpose -> Gather(axis 1, i) (the MoE router's token and slot),
    then Gather(axis=0) of x by it; the column is a graph output too."""
    b = Builder(draw, opsets=OLD_OPSETS)
    k = draw(st.integers(1, 3))
    i = draw(st.integers(0, k - 1))
    dtype, mask_dtype = draw(st.sampled_from(DATA_DTYPES)), draw(st.sampled_from(MASK_DTYPES))
    sizes, trail = b.sizes(k), b.sizes(draw(st.integers(0, 1)))
    roles = [f"n{j}" for j in range(k)]
    lead = sizes[i] if not b.mismatch else max(0, sizes[i] + draw(st.sampled_from([0, -1, 1])))
    b.mask("m", mask_dtype, sizes, roles, inside=sizes[:i] + [lead] + sizes[i + 1:], data=[[lead] + trail])
    b.data("x", dtype, [lead] + trail, [roles[i]] + [f"t{j}" for j in range(len(trail))])
    nz = b.node("NonZero", ["m"], "nz")
    index = b.const("i", i, scalar=True)
    if draw(st.booleans()):
        b.node("Gather", [nz, index], "column", axis=0)
    else:
        b.node("Gather", [b.transpose(nz), index], "column", axis=1)
    b.node("Gather", ["x", "column"], "y", axis=0)
    b.output("y", dtype)
    b.output("column", "int64")
    return b.chain("column_read", ["Gather_y"], coordinate_outputs=["column"])


@st.composite
def coordinates_output(draw):
    """torch.nonzero, tf.where, paddle.nonzero: NonZero -> Transpose as a graph output."""
    b = Builder(draw, mismatch_ok=False, opsets=OLD_OPSETS)
    shape = b.sizes(draw(st.integers(1, 4)))
    b.mask("m", draw(st.sampled_from(MASK_DTYPES)), shape, [f"n{i}" for i in range(len(shape))])
    b.transpose(b.node("NonZero", ["m"], "nz"), "coordinates")
    b.output("coordinates", "int64")
    return b.chain("coordinates_output", [], coordinate_outputs=["coordinates"])


def count(b, t):
    """nnz as a [1] tensor, read from the coordinates' shape as both torch exporters write it."""
    if b.draw(st.booleans()):  # TorchScript: a scalar Gather, then Unsqueeze
        g = b.node("Gather", [b.node("Shape", [t], "t_shape"), b.const("zero", 0, scalar=True)], "nnz0", axis=0)
        return b.axes_op("Unsqueeze", g, "nnz", [0])
    return b.node("Gather", [b.node("Shape", [t], "t_shape"), b.const("zero1", [0])], "nnz", axis=0)


def scatter(b, dtype, t, updates):
    attrs = {"reduction": "none"} if b.opset >= 16 and b.draw(st.booleans()) else {}
    b.node("ScatterND", ["x", t, updates], "y", **attrs)
    b.output("y", dtype)


@st.composite
def masked_scatter(draw):
    """x.masked_scatter(m, s): NonZero(m) (dynamo), or NonZero(Expand(m, Shape(x)))
    (TorchScript) -> Transpose -> ScatterND(x, ., Slice(Reshape(s, [-1]), 0, nnz)). s may hold
    fewer elements than nnz: then the original's ScatterND fails. The mask given whole may be
    shorter or longer than x (dims named apart)."""
    b = Builder(draw)
    dtype = draw(st.sampled_from(DATA_DTYPES))
    shape = b.sizes(draw(st.integers(1, 3)))
    roles = [f"n{i}" for i in range(len(shape))]
    b.data("x", dtype, shape, roles)
    if draw(st.booleans()):
        m = b.mask("m", "bool", b.mask_sizes(shape), roles, inside=shape, data=[shape])
    else:  # a mask that Expand broadcasts to x's shape
        small = [s if draw(st.booleans()) else 1 for s in shape]
        b.mask("m", "bool", small, roles)
        m = b.node("Expand", ["m", b.node("Shape", ["x"], "x_shape")], "m_full")
    size = max(0, int(np.prod(shape)) + draw(st.sampled_from([0, 0, -1, -3, 2])))
    b.data("s", dtype, [size], ["s0"])
    t = b.transpose(b.node("NonZero", [m], "nz"))
    flat = b.node("Reshape", ["s", b.const("flat", [-1])], "s_flat")
    updates = b.node("Slice", [flat, b.const("start", [0]), count(b, t), b.const("axis0", [0])], "updates")
    scatter(b, dtype, t, updates)
    return b.chain("masked_scatter", ["ScatterND_y"], scatter="ScatterND_y")


@st.composite
def masked_fill(draw):
    """y[m] = v with m of x's leading shape [n] and v of its trailing shape: Unsqueeze(m) ->
    Expand(Shape(x)) -> NonZero -> Transpose -> ScatterND(x, ., updates), the updates either
    Reshape(Expand(v, [ReduceSum(m), ...]), [-1]) (dynamo) or Slice(Reshape(v, [-1]), 0, nnz)
    (TorchScript, which fails in the original when v is shorter than nnz)."""
    b = Builder(draw, mismatch_ok=False)
    dtype = draw(st.sampled_from(DATA_DTYPES))
    n, trail = b.sizes(1), b.sizes(draw(st.integers(0, 2)))
    troles = [f"t{i}" for i in range(len(trail))]
    b.data("x", dtype, n + trail, ["n0"] + troles)
    b.mask("m", "bool", n, ["n0"])
    v_shape = draw(st.sampled_from([trail, [1] * len(trail), []]))
    b.data("v", dtype, v_shape, troles[len(troles) - len(v_shape):])
    m = "m"
    if trail:
        m = b.axes_op("Unsqueeze", "m", "m_unsqueezed", list(range(1, 1 + len(trail))))
        m = b.node("Expand", [m, b.node("Shape", ["x"], "x_shape")], "m_full")
    t = b.transpose(b.node("NonZero", [m], "nz"))
    if draw(st.booleans()):
        flags = b.node("Cast", [b.node("Reshape", ["m", b.const("flat", [-1])], "m_flat")], "m_int", to=T.INT64)
        total = b.node("ReduceSum", [flags], "m_count", keepdims=1)
        if trail:
            rest = b.node("Slice", [b.node("Shape", ["x"], "x_shape2"), b.const("one", [1]), b.const("end", [len(trail) + 1]), b.const("axis0", [0])], "x_rest")
            total = b.node("Concat", [total, rest], "fill_shape", axis=0)
        updates = b.node("Reshape", [b.node("Expand", ["v", total], "v_full"), b.const("flat2", [-1])], "updates")
    else:
        flat = b.node("Reshape", ["v", b.const("flat2", [-1])], "v_flat")
        updates = b.node("Slice", [flat, b.const("start", [0]), count(b, t), b.const("axis0s", [0])], "updates")
    scatter(b, dtype, t, updates)
    return b.chain("masked_fill", ["ScatterND_y"], scatter="ScatterND_y")


@st.composite
def masked_add(draw):
    """y[m] += v: NonZero(m) -> Transpose -> GatherND(x) -> Add(v) -> ScatterND(x, ., sum)."""
    b = Builder(draw)
    dtype = draw(st.sampled_from(ADD_DTYPES))
    k, trail = draw(st.integers(1, 2)), b.sizes(draw(st.integers(0, 1)))
    lead, troles = b.sizes(k), [f"t{i}" for i in range(len(trail))]
    roles = [f"n{i}" for i in range(k)]
    b.mask("m", "bool", b.mask_sizes(lead), roles, inside=lead, data=[lead + trail])
    b.data("x", dtype, lead + trail, roles + troles)
    v_shape = draw(st.sampled_from([trail, [1] * len(trail), []]))
    b.data("v", dtype, v_shape, troles[len(troles) - len(v_shape):])
    t = b.transpose(b.node("NonZero", ["m"], "nz"))
    picked = b.node("GatherND", ["x", t], "picked")
    scatter(b, dtype, t, b.node("Add", [picked, "v"], "sums"))
    return b.chain("masked_add", ["GatherND_picked", "ScatterND_y"], scatter="ScatterND_y")


STRATEGIES = {s.__name__: s for s in (gather_nd, gather_column, column_read, coordinates_output,
                                        masked_scatter, masked_fill, masked_add)}


def _columns():
    """x[torch.where(c)] taken apart into columns (chain_strategies_columns.py, which imports
    this module's Builder)."""
    from chain_strategies_columns import where_tuple

    return where_tuple


STRATEGIES["where_tuple"] = _columns()
