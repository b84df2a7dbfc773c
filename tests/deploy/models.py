"""The models the deploy stage judges (issue 38): every model the static stage makes fully static
(the exports of tests/static/exports.py that test_exports_after.py does not list as staying
dynamic), plus hand-made models whose masks and counts pass 2048 (HTP computes in fp16, exact in
integers only to 2048), each made static by the CLI in every form (`--target`), into
build/deploy/static/<form>/. Imports no pytest, no ONNX Runtime."""

import functools
import os
import pathlib
import sys
import zlib

import numpy as np
import onnx

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "static"))

import cases  # noqa: E402
import exports  # noqa: E402
import handmade  # noqa: E402
import judge  # noqa: E402

ROOT = judge.ROOT
BUILD = ROOT / "build" / "deploy"
# The forms: `generic` is the default (no --target); each other is `--target NAME`. CI judges
# each toolchain on the default form and its own; deploy_all on every form.
FORMS = ("generic", "qnn", "litert")
# Exports that stay partly dynamic under --static (test_exports_after.STAYS_DYNAMIC's keys,
# read from there): not judged here.
ALL = os.environ.get("NONZERO_DEPLOY_ALL") == "1"
FORMS_QNN = FORMS if ALL else ("generic", "qnn")
FORMS_LITERT = FORMS if ALL else ("generic", "litert")
# Real exports that --static makes fully static (issue 37 is making them so): two run in CI,
# the rest in `deploy_all`. Each is models/real's (or models/real/families') file name.
REAL_IN_CI = ("bart_ts17.onnx", "bart_dynamo18.onnx")
REAL_ALL = ("mixtral_ts17.onnx", "llava_ts17.onnx", "superpoint_dynamo18.onnx", "vits_ts17.onnx", "longformer_ts17.onnx",
            "faster_rcnn_ts17.onnx", "retinanet_ts17.onnx", "fcos_ts17.onnx", "ssdlite320_ts17.onnx")
# Hand-made models past 2048: (kind, mask shape, tail of x beyond the mask); and a detector's
# NMS in small past 128 boxes (the NPU forms' unrolled picks): ("nms", (boxes,), (picks,)). In
# deploy_all also RetinaNet's size, 50 picks over 390 boxes: tf_converter takes 13 minutes on
# its 350 GatherElements (once: conversions are cached), where 3 picks take 27 s.
WIDE = [("nonzero", (3000,), ()), ("nonzero", (8, 320), ()), ("x_mask", (8, 320), (3,)),
        ("x_mask", (2, 10, 128), ()), ("mask_assign", (8, 320), ()), ("nms", (140,), (3,))]
WIDE += [("nms", (390,), (50,))] if ALL else []
CASES = ("random", "none", "all", "one")


class Model:
    """One judged model: `id`, `original` (the dynamic model's path), `shapes` (fixed input
    shapes), `feeds(case)`: inputs with every float representable in fp16, and `capacity`: the
    `--capacity` the static stage gives it (exports.CAPACITIES), or None."""

    def __init__(self, ident, original, shapes, feeds, capacity=None):
        self.id, self.original, self.shapes, self._feeds = ident, original, shapes, feeds
        self.capacity = capacity

    def __repr__(self):
        return self.id

    def feeds(self, case):
        return {name: fp16_representable(v) for name, v in self._feeds(case).items()}


def fp16_representable(value):
    """Float32 values rounded to the nearest float16 (HTP computes floats in fp16)."""
    value = np.asarray(value)
    if value.dtype == np.float32:
        return value.astype(np.float16).astype(np.float32)
    return value


def _stays_dynamic():
    import ast

    source = (HERE.parent / "static" / "test_exports_after.py").read_text()
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "STAYS_DYNAMIC" for t in node.targets):
            keys = set()
            for key in node.value.keys:
                if key is None:  # the **{mask_nms ...} spread
                    continue
                keys.add(ast.literal_eval(key))
            return keys
    raise AssertionError("test_exports_after.py has no STAYS_DYNAMIC")


def _export_models():
    stays = _stays_dynamic()
    out = []
    for export in exports.exports():
        if export.id in stays:
            continue
        if export.id.startswith(("real/", "families/")):
            name = export.id.split("/", 1)[1]
            if name not in REAL_IN_CI + (REAL_ALL if ALL else ()):
                continue
        valid = [c for c in CASES if not cases.invalid(export, c)]
        out.append(Model(export.id, export.path, export.shapes,
                         functools.partial(_export_feeds, export, valid), export.capacity))
    return out


def _export_feeds(export, valid, case):
    return cases.feeds(export, case if case in valid else valid[0])


def real_model(name):
    """The Model of models/real's `name` (a file name), in CI and deploy_all alike."""
    export = next(e for e in exports.exports() if e.id == f"real/{name}")
    valid = [c for c in CASES if not cases.invalid(export, c)]
    return Model(export.id, export.path, export.shapes, functools.partial(_export_feeds, export, valid),
                 export.capacity)


def _wide_models():
    folder = BUILD / "handmade"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for kind, shape, tail in WIDE:
        model = {"nonzero": lambda: handmade.nonzero(shape), "x_mask": lambda: handmade.x_mask(shape, list(tail)),
                 "mask_assign": lambda: handmade.mask_assign(shape),
                 "nms": lambda: handmade.nms(shape[0], tail[0])}[kind]()
        ident = f"handmade/{kind}_{'x'.join(map(str, shape))}"
        path = folder / f"{ident.split('/')[1]}.onnx"
        data = model.SerializeToString()
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
        out.append(Model(ident, path, shapes, functools.partial(_wide_feeds, ident, kind, shapes)))
    return out


def _wide_feeds(ident, kind, shapes, case):
    rng = np.random.default_rng([zlib.crc32(ident.encode()), CASES.index(case)])
    if kind == "nms":
        return _nms_feeds(shapes["boxes"][1], case, rng)
    mask_shape = shapes["mask"] if "mask" in shapes else shapes["x"]
    if case == "one":
        m = np.zeros(mask_shape, bool)
        m.flat[rng.integers(m.size)] = True
    else:
        m = handmade.mask(mask_shape, case, rng)
    if kind == "nonzero":  # the values themselves: zeros of both signs where not selected
        x = rng.standard_normal(mask_shape).astype(np.float32) + np.float32(3.0)
        zero = np.where(rng.random(mask_shape) < 0.5, np.float32(0.0), np.float32(-0.0))
        return {"x": np.where(m, x, zero).astype(np.float32)}
    feeds = {"x": rng.standard_normal(shapes["x"]).astype(np.float32), "mask": m}
    if kind == "mask_assign":
        feeds["v"] = np.array(rng.standard_normal(), np.float32)
    return feeds


def _nms_feeds(n, case, rng):
    """Boxes on an integer grid (sides 1 to 24, corners 0 to 64: areas and unions exact in fp16)
    and distinct scores, multiples of 2^-10 above the 0.25 threshold and of 2^-11 below it (fp16
    values); `case` says which pass it: random (half), none, all, one."""
    corner = rng.integers(0, 41, (1, n, 2))
    boxes = np.concatenate([corner, corner + rng.integers(1, 25, (1, n, 2))], axis=2).astype(np.float32)
    passes = {"random": rng.random(n) < 0.5, "none": np.zeros(n, bool), "all": np.ones(n, bool),
              "one": np.arange(n) == rng.integers(n)}[case]
    rank = rng.permutation(n) + 1
    scores = np.where(passes, 0.25 + rank / 1024, 0.25 - rank / 2048).astype(np.float32)
    return {"boxes": boxes, "scores": scores.reshape(1, 1, n)}


@functools.lru_cache(maxsize=None)
def models():
    """Every judged model, in a stable order."""
    return _export_models() + _wide_models()


@functools.lru_cache(maxsize=None)
def static_form(model, form):
    """(report, path): the model through `nonzero optimize --static` in `form` at its fixed
    shapes (`--target NAME` for a form other than generic), written once per session."""
    out = BUILD / "static" / form / (model.id if model.id.endswith(".onnx") else model.id + ".onnx")
    out.parent.mkdir(parents=True, exist_ok=True)
    extra = [] if form == "generic" else ["--target", form]
    report = judge.static_model(model.original, out, model.shapes, capacity=model.capacity, extra_args=extra)
    assert report["returncode"] == 0, report["stderr"][:2000]
    assert not report["left_nodes"], f"{model.id}: not fully static: {report['left_nodes'][:3]}"
    return report, out


@functools.lru_cache(maxsize=None)
def fixed_original(model):
    """The original model with its inputs fixed to the static form's shapes (`model.shapes`),
    written once per session: the reference on QNN HTP (test_qnn.py). ONNX Runtime's QNN EP takes
    only nodes of fixed shapes, so with the export's dims left dynamic it takes almost none of
    the network (BART dynamo18: 9 of 256 nodes), and the reference would be CPU's own values;
    fixed, it takes the network, and the NonZero chain with what its dynamic shapes reach goes
    to the CPU EP (BART dynamo18: 218 on QNN, 6 on CPU), as issue 38 has the reference."""
    out = BUILD / "reference" / (model.id if model.id.endswith(".onnx") else model.id + ".onnx")
    return judge.fixed(model.original, model.shapes, out)


def node_count(path):
    return len(onnx.load(str(path), load_external_data=False).graph.node)


def as_declared(got, static_path):
    """A toolchain's outputs as the static ONNX model declares them (LiteRT's and RKNN's come
    back narrower): int32 back to int64, [1] back to a scalar. Returns (outputs, what was
    changed)."""
    declared = {o.name: o.type.tensor_type for o in onnx.load(str(static_path), load_external_data=False).graph.output}
    by_normal = {"".join(c for c in n.lower() if c.isalnum()): n for n in declared}
    out, notes = {}, set()
    for name, value in got.items():
        if name not in declared:  # onnx2tf's rewrite of the name (`Identity:0` -> `Identity__0`)
            name = by_normal["".join(c for c in name.lower() if c.isalnum())]
        value = np.asarray(value)
        kind = declared[name]
        rank = len(kind.shape.dim)
        if kind.elem_type == 7 and value.dtype == np.int32:  # TensorProto.INT64
            value, _ = value.astype(np.int64), notes.add("int64 outputs come back int32")
        if rank == 0 and value.shape == (1,):
            value, _ = value.reshape(()), notes.add("scalars come back [1]")
        out[name] = value
    return out, sorted(notes)
