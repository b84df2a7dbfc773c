#!/usr/bin/env python3
"""`scripts/run-models --ray N [MODEL...]`: the models through `nonzero_ort.ray.map_model` (Ray
Data, one ONNX Runtime session with the library per worker) on a local cluster of N one-CPU
nodes, or on an existing cluster (`--address`, the wheel shipped to its workers in a runtime_env).

Each model gets `--rows` seeded input sets: row 0 is its test_data_set_0 when it has one, the
others random (half zeros) in the shapes of that set, or of the model's inputs with every symbolic
dimension drawn from 1..6; an integer input that indexes a table (a Gather's indices: token ids
into an embedding) is drawn within the table, as `nonzero run` does. `--inputs FILE.npz` gives
every row instead (`np.savez(FILE, NAME=array, ...)`, one array per input), for models whose
inputs follow rules no graph shows. Every row that comes back is compared exactly (dtype, shape, bytes)
with a single-process run with the library, and with ONNX Runtime's built-in kernels where those
can run the model. One line per model; the exit status is 1 on any mismatch or missing row.
"""

import argparse
import glob
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402 (sets Ray's environment before ray is imported)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None):
    p = argparse.ArgumentParser(prog="scripts/run-models --ray N", description=__doc__.split("\n\n")[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--ray", type=int, metavar="N", dest="nodes", help="a local cluster of N one-CPU nodes")
    where.add_argument("--address", help="an existing cluster (ray://... or HOST:PORT)")
    p.add_argument("--rows", type=int, default=64, help="seeded input sets per model (default 64)")
    p.add_argument("--wheel", help="the nonzero_ort wheel shipped to an existing cluster's workers")
    p.add_argument("--concurrency", type=int, help="map_batches workers (default: N, or 2 with --address)")
    p.add_argument("--inputs", metavar="FILE.npz", help="every row's inputs from this .npz (np.savez), not random ones")
    p.add_argument("models", nargs="*", help=".onnx files or case folders (default: models/*/ with test_data_set_0)")
    args = p.parse_args(argv)
    if args.nodes is not None and args.nodes < 1:
        p.error(f"--ray N needs N >= 1, got {args.nodes}")
    if args.rows < 1:
        p.error(f"--rows needs at least 1, got {args.rows}")
    models = find_models(args.models)
    given = read_inputs(p, args.inputs) if args.inputs else None
    cases = [(name, path, make_rows(path, args.rows, given)) for name, path in models]

    if not args.address:
        cluster.use_loopback()
    import logging

    import ray.data
    from nonzero_ort.ray import map_model

    logging.getLogger("ray.data").setLevel(logging.WARNING)

    start = time.time()
    if args.address:
        if not args.wheel or not os.path.isfile(args.wheel):
            p.error("--address needs --wheel PATH (scripts/run-models passes the built wheel)")
        context = cluster.existing_cluster(args.address, runtime_env={"py_modules": [os.path.abspath(args.wheel)]})
        concurrency = args.concurrency or 2
    else:
        context = cluster.local_cluster(args.nodes)
        concurrency = args.concurrency or args.nodes
    failures = 0
    with context:
        data_context = ray.data.DataContext.get_current()
        # Every worker of the pool up before the first batch, so that the rows spread over the
        # nodes (the first worker up would otherwise take all of a small job).
        data_context.wait_for_min_actors_s = 120
        print(f"cluster up in {time.time() - start:.1f} s: {len(ray.nodes())} node(s), "
              f"{int(ray.cluster_resources().get('CPU', 0))} CPU(s), {concurrency} worker(s)", flush=True)
        if args.address:
            print(f"workers import nonzero_ort from {worker_package(ray)}", flush=True)
        for name, path, rows in cases:
            failures += run_case(name, path, rows, concurrency, ray, map_model, ship_bytes=bool(args.address))
    print(f"{len(cases) - failures}/{len(cases)} models equal on Ray ({time.time() - start:.1f} s)")
    return 1 if failures else 0


def worker_package(ray):
    """Where a worker of the cluster imports nonzero_ort from (the shipped wheel's runtime_env)."""

    @ray.remote(num_cpus=0)
    def where():
        import nonzero_ort

        return nonzero_ort.__file__

    return ray.get(where.remote(), timeout=300)


def find_models(given):
    if not given:
        folders = sorted(d for d in glob.glob(os.path.join(ROOT, "models", "*"))
                         if os.path.isfile(os.path.join(d, "model.onnx")) and os.path.isdir(os.path.join(d, "test_data_set_0")))
        return [(os.path.basename(d), os.path.join(d, "model.onnx")) for d in folders]
    found = []
    for item in given:
        path = os.path.join(item, "model.onnx") if os.path.isdir(item) else item
        if not os.path.isfile(path):
            raise SystemExit(f"run-models --ray: no model at {item!r} (give .onnx files or folders with model.onnx)")
        found.append((os.path.relpath(path, ROOT) if path.startswith(ROOT) else path, path))
    return found


def read_inputs(parser, path):
    """The arrays of an .npz, by name."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except (OSError, ValueError) as e:
        parser.error(f"--inputs {path}: {e}")


def make_rows(path, count, given=None):
    """`count` input sets, each {input name: array}: copies of `given` when given."""
    import onnx
    from onnx import numpy_helper

    from nonzero_ort.ray.session import ORT_DTYPES

    model = onnx.load(path, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    dtypes = {i.name: ORT_DTYPES[f"tensor({_type_name(i.type.tensor_type.elem_type)})"] for i in inputs}
    if given is not None:
        names = [i.name for i in inputs]
        if sorted(given) != sorted(names):
            raise SystemExit(f"run-models --ray: --inputs has the arrays {sorted(given)}, {path} the inputs {names}")
        for name in names:
            if given[name].dtype != dtypes[name]:
                raise SystemExit(f"run-models --ray: --inputs array {name} is {given[name].dtype}, "
                                 f"the input is {dtypes[name]}")
        return [dict(given) for _ in range(count)]
    bounds = index_bounds(model.graph)
    first = None
    data_set = os.path.join(os.path.dirname(path), "test_data_set_0")
    if os.path.isdir(data_set):
        first = {}
        for i, vi in enumerate(inputs):
            tensor = onnx.TensorProto()
            with open(os.path.join(data_set, f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            first[vi.name] = numpy_helper.to_array(tensor)
    rows = [first] if first is not None else []
    rng = np.random.default_rng(0x5EED)
    while len(rows) < count:
        size = int(rng.integers(1, 7))
        row = {}
        for vi in inputs:
            if first is not None:
                shape = first[vi.name].shape
            else:
                shape = tuple(d.dim_value if d.HasField("dim_value") else size for d in vi.type.tensor_type.shape.dim)
            if vi.name in bounds and dtypes[vi.name].kind in "iu":
                row[vi.name] = rng.integers(0, max(bounds[vi.name], 1), shape).astype(dtypes[vi.name])
            else:
                row[vi.name] = random_array(rng, dtypes[vi.name], shape)
        rows.append(row)
    return rows


# As crates/ort-runner/src/indices.rs: ops whose first input's values reach their output
# unchanged, and the ops whose second input indexes the first along `axis`.
PASS_THROUGH = {"Cast", "CastLike", "Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand",
                "Transpose", "Tile", "Slice"}
GATHERS = {"Gather", "GatherElements"}


def index_bounds(graph):
    """{input name: size of the table it indexes} for the inputs that reach a Gather's indices
    over an initializer or Constant, directly or through PASS_THROUGH ops (the smallest table)."""
    dims = {t.name: list(t.dims) for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            dims.update({n.output[0]: list(a.t.dims) for a in n.attribute if a.name == "value" and a.HasField("t")})
    readers = {}
    for n in graph.node:
        for slot, name in enumerate(n.input):
            readers.setdefault(name, []).append((n, slot))
    bounds = {}
    for vi in graph.input:
        todo, seen = [vi.name], set()
        while todo and vi.name not in dims:
            name = todo.pop()
            seen.add(name)
            for n, slot in readers.get(name, []):
                if n.domain not in ("", "ai.onnx"):
                    continue
                if n.op_type in PASS_THROUGH and slot == 0:
                    todo.extend(o for o in n.output[:1] if o not in seen)
                elif n.op_type in GATHERS and slot == 1 and n.input[0] in dims:
                    table = dims[n.input[0]]
                    axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
                    axis = axis + len(table) if axis < 0 else axis
                    if 0 <= axis < len(table):
                        bounds[vi.name] = min(bounds.get(vi.name, table[axis]), table[axis])
    return bounds


def _type_name(code):
    from onnx import helper

    name = helper.tensor_dtype_to_np_dtype(code).name
    return {"float32": "float", "float64": "double", "bool": "bool", "str": "string", "object": "string"}.get(name, name)


def random_array(rng, dtype, shape):
    zero = rng.random(shape) < 0.5
    if dtype.kind == "b":
        return ~zero
    if dtype.kind == "U":
        return np.where(zero, "", np.char.add("s", rng.integers(0, 100, shape).astype(str)))
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -50
        values = rng.integers(low, 50, shape).astype(dtype)
    else:
        values = rng.standard_normal(shape).astype(dtype)
    values[zero] = 0
    return values


def run_case(name, path, rows, concurrency, ray, map_model, ship_bytes):
    from nonzero_ort.ray import make_session

    input_names = list(rows[0])
    with_library = make_session(path)
    output_names = [o.name for o in with_library.get_outputs()]
    expected = [with_library.run(output_names, row) for row in rows]
    builtin_note, builtin_bad = compare_builtin(path, rows, expected, output_names, make_session)
    ds = ray.data.from_items(
        [{"row": i, **{f"in_{k}": row[n] for k, n in enumerate(input_names)}} for i, row in enumerate(rows)],
        override_num_blocks=max(2, 2 * concurrency),
    )
    start = time.time()
    out = map_model(
        ds, open(path, "rb").read() if ship_bytes else path, concurrency=concurrency, batch_size=8,
        input_columns=[f"in_{k}" for k in range(len(input_names))],
        output_columns=[f"out_{k}" for k in range(len(output_names))], keep_columns=["row"], worker_column="worker",
    ).take_all()
    seconds = time.time() - start
    seen, bad = {}, []
    workers = {int(record["worker"]) for record in out}
    for record in out:
        i = int(record["row"])
        seen[i] = seen.get(i, 0) + 1
        got = [np.asarray(record[f"out_{k}"]) for k in range(len(output_names))]
        if not all(same(g, e) for g, e in zip(got, expected[i])):
            bad.append(i)
    missing = [i for i in range(len(rows)) if seen.get(i, 0) != 1]
    ok = not bad and not missing and not builtin_bad
    detail = f"rows missing or repeated: {missing[:5]} " if missing else ""
    detail += f"rows differing: {bad[:5]} " if bad else ""
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(rows)} rows on Ray in {seconds:.1f} s, "
          f"{len(out)} back from {len(workers)} worker(s), equal to one process: {'yes' if not bad and not missing else 'NO'}; "
          f"built-in: {builtin_note} {detail}".rstrip(), flush=True)
    return 0 if ok else 1


def compare_builtin(path, rows, expected, output_names, make_session):
    """("equal", False), ("DIFFERENT", True) or ("n/a (why)", False)."""
    try:
        builtin = make_session(path, library=False)
    except Exception as e:  # the built-in kernels cannot load this model
        return f"n/a ({_first_line(e)})", False
    try:
        got = [builtin.run(output_names, row) for row in rows]
    except Exception as e:
        return f"n/a (run: {_first_line(e)})", False
    if all(same(g, e) for gs, es in zip(got, expected) for g, e in zip(gs, es)):
        return "equal", False
    return "DIFFERENT", True


def _first_line(e):
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text.replace("[ONNXRuntimeError] : ", "")[:100]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "UO":
        return bool(np.all(a == b))
    return a.tobytes() == b.tobytes()


if __name__ == "__main__":
    sys.exit(main())
