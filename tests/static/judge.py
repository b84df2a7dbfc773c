"""The judges of `nonzero optimize --static` (issue 26, item 4), run in .venv-static
(requirements/static.txt): OpenVINO's verdict on whether a model has data-dependent shapes, the
same model run on ONNX Runtime, OpenVINO CPU and IREE llvm-cpu, and the hook that runs the CLI.
The output contract (trimming to `<name>_count`, comparing) is in contract.py, re-exported here.
Imports no pytest. docs/static.md, "How it is judged", says how each part works."""

import functools
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

from contract import compare_static, count_outputs, trimmed  # noqa: F401 (re-exported)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "static"
CLI = pathlib.Path(os.environ.get("NONZERO_CLI", ROOT / "target/release/nonzero"))
# IREE's CPU target: `host` compiles for this machine's CPU. The vmfb cache key includes the
# flags, the IREE version, the host CPU's name and flags, and the model's bytes, so a cached
# module never outlives what made it (nor moves to a CPU that lacks its instructions).
IREE_FLAGS = ["--iree-llvmcpu-target-cpu=host"]
# The opset the IREE importer is given at least: older models are upgraded first with
# onnx.version_converter, as `iree-import-onnx --opset-version 17` does. IREE 3.13 converts
# NonZero only from its opset-13 form: paddle2onnx's opset-11 NonZero fails to legalize
# ("failed to legalize operation 'torch.operator'") without the upgrade.
IREE_MIN_OPSET = 17
# Result only mirrors its producer's shape: never listed.
_MIRRORS = {"Result"}


def _telemetry_off():
    """OpenVINO's convert_model sends usage telemetry unless the user opted out (or CI=true): write
    the opt-out, as `opt_in_out --opt_out` does, without sending its event."""
    try:
        from openvino_telemetry.utils.opt_in_checker import ConsentCheckResult, OptInChecker
    except ImportError:
        return
    checker = OptInChecker()
    if checker.consent_file_base_dir() and not os.path.exists(checker.consent_file()):
        checker.update_result(ConsentCheckResult.DECLINED)


def openvino_model(path):
    import openvino as ov

    _telemetry_off()
    return ov.convert_model(str(path))


def _bodies(op):
    """The subgraphs of an If (then, else) or a Loop / TensorIterator (its body)."""
    kind = op.get_type_name()
    if kind == "If":
        return [("then", op.get_then_body()), ("else", op.get_else_body())]
    if kind in ("Loop", "TensorIterator"):
        return [("body", op.get_function())]
    return []


def _dynamic_ops(model, prefix, sources, followers, tainted_body):
    """Appends the dynamic ops of `model` and its bodies; returns how many are `model`'s own.
    An op is tainted when it is dynamic or an input comes from a tainted op (so a Broadcast whose
    static-shaped shape operand holds a data-dependent count is tainted through it). A dynamic
    op with no tainted input is a source; `tainted_body`: this body's Parameters are tainted
    (the outer op has a tainted input)."""
    own, tainted = 0, set()
    for op in model.get_ordered_ops():
        kind = op.get_type_name()
        name = prefix + op.get_friendly_name()
        fed = any(op.input_value(i).get_node().get_name() in tainted for i in range(op.get_input_size()))
        fed = fed or (tainted_body and kind == "Parameter")
        for label, body in _bodies(op):
            _dynamic_ops(body, f"{name}/{label}/", sources, followers, fed)
        dynamic = any(op.get_output_partial_shape(i).is_dynamic for i in range(op.get_output_size()))
        if dynamic or fed:
            tainted.add(op.get_name())
        if not dynamic or kind in _MIRRORS:
            continue
        (followers if fed else sources).append((kind, name))
        own += 1
    return own


def openvino_dynamic(path):
    """(sources, followers): the ops of the model (as openvino.convert_model makes it) with a
    dynamic output shape, as (op type, friendly name) in graph order. Sources are the first
    dynamic op on their path, fed by no dynamic op even through values (the data-dependent ones:
    NonZero, NonMaxSuppression, or an op whose shape operand a main-graph input fixes wrongly);
    followers are downstream of one. If, Loop and TensorIterator bodies are walked too, their
    ops named `<outer op>/then/<op>` (else, body). Results are left out (each repeats its
    producer)."""
    model = openvino_model(path)
    sources, followers = [], []
    main_graph = _dynamic_ops(model, "", sources, followers, False)
    # model.is_dynamic() looks at every op of the main graph (not inside bodies): the same verdict.
    assert model.is_dynamic() == (main_graph > 0), "the walk disagrees with model.is_dynamic()"
    return sources, followers


def openvino_verdict(path):
    """OpenVINO's verdict on a fixed-shape model: (is_dynamic, [(op type, friendly name)]),
    the list being openvino_dynamic's sources then its followers. is_dynamic is True if any op
    has a dynamic output, which includes dynamism that stays inside the graph (`x[mask] = v`,
    whose inputs and outputs are static), as `model.is_dynamic()` does for the main graph."""
    sources, followers = openvino_dynamic(path)
    return bool(sources or followers), sources + followers


def _outputs(path):
    model = onnx.load(str(path), load_external_data=False)
    return [o.name for o in model.graph.output]


def ort_dies(path, feeds):
    """True when running the model on `feeds` on ONNX Runtime kills the process (a signal), in a
    child process so that it does not kill this one."""
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(f"{tmp}/feeds.npz", **feeds)
        script = (f"import numpy as np, judge; f = dict(np.load({tmp + '/feeds.npz'!r})); "
                  f"judge.run_ort({str(path)!r}, f)")
        child = subprocess.run([sys.executable, "-c", script], cwd=pathlib.Path(__file__).parent,
                               capture_output=True, timeout=300)
    return child.returncode < 0


def run_ort(path, feeds, library=None, threads=2):
    """The model on ONNX Runtime's CPU provider (with the custom-op library at `library`, if
    given): {output name: array} in the graph's output order."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = threads
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if library is not None:
        so.register_custom_ops_library(str(library))
    session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


# Models OpenVINO's CPU plugin runs at f32 rather than its default (bf16 on a CPU with AMX, as
# here), by file name (the original, its fixed copy and its static form alike): VITS's
# durations are `ceil(exp(.))` of its network, and in bf16 they change the utterance's length
# itself (6240 samples where ONNX Runtime's original gives 6272), so nothing would compare.
OPENVINO_F32 = {"vits_ts17.onnx"}


@functools.lru_cache(maxsize=64)
def _openvino_compiled(path, stamp):
    import openvino as ov

    config = {"INFERENCE_PRECISION_HINT": "f32"} if pathlib.Path(path).name in OPENVINO_F32 else {}
    return ov.Core().compile_model(openvino_model(path), "CPU", config)


def run_openvino(path, feeds):
    """The model converted by openvino.convert_model and compiled for OpenVINO's CPU plugin:
    {output name: array} in the ONNX graph's output order. The compiled model is kept for the
    next call on the same file (same path, size and modification time), unless a call fails."""
    stat = os.stat(path)
    compiled = _openvino_compiled(str(path), (stat.st_size, stat.st_mtime_ns))
    try:
        result = compiled(dict(feeds))
    except Exception:
        # A compiled model whose inference failed (a dynamic model's Split given the wrong
        # length) fails every later call too: compile it afresh next time.
        _openvino_compiled.cache_clear()
        raise
    by_name = {}
    for port in compiled.outputs:
        for name in port.get_names():
            by_name[name] = np.array(result[port])
    return {name: by_name[name] for name in _outputs(path)}


def _iree_version():
    from importlib.metadata import version

    return f"{version('iree-base-compiler')}/{version('iree-base-runtime')}"


def iree_mlir(model):
    """The ONNX model imported to MLIR (torch-mlir's onnx dialect) by IREE's ONNX importer, as
    `iree-import-onnx` does it: shape inference with data propagation first, after an opset
    upgrade to IREE_MIN_OPSET for older models."""
    from iree.compiler.extras import onnx_importer
    from iree.compiler.ir import Context

    if model.opset_import and max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < IREE_MIN_OPSET:
        model = onnx.version_converter.convert_version(model, IREE_MIN_OPSET)
    model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm(assume_verified=True)


def _host_cpu():
    """What `--iree-llvmcpu-target-cpu=host` compiles for: the CPU's model name and flags."""
    try:
        info = pathlib.Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return "unknown"
    return "\n".join(l for l in info.splitlines() if l.startswith(("model name", "flags")))


class IreeError(Exception):
    """IREE could not import or compile a model; `line` is the first error line."""

    def __init__(self, text):
        super().__init__(text)
        self.line = first_error_line(text)


def first_error_line(text):
    """The first diagnostic of an iree-compile failure (`<loc>: error: <message>`, location and
    the target description that follows cut), else the text's first line."""
    for line in text.splitlines():
        if "error:" in line:
            message = line.split("error:", 1)[1].strip()
            return message.split("#hal.executable.target<", 1)[0].strip()
    return text.strip().splitlines()[0] if text.strip() else ""


def iree_compile(path):
    """The model compiled for IREE's llvm-cpu backend: the path of its .vmfb, cached under
    build/static/iree/ by the model's bytes, the flags and opset, IREE's version and the host
    CPU. A compile failure is cached too (`<key>.error`, iree-compile's diagnostics): both are
    deterministic for one key. Raises IreeError on an import or compile failure."""
    import iree.compiler

    data = pathlib.Path(path).read_bytes()
    recipe = json.dumps([IREE_FLAGS, IREE_MIN_OPSET, _iree_version(), _host_cpu()]).encode()
    key = hashlib.sha256(data + recipe).hexdigest()[:24]
    vmfb, error = BUILD / "iree" / f"{key}.vmfb", BUILD / "iree" / f"{key}.error"
    if vmfb.exists():
        return vmfb
    if error.exists():
        raise IreeError(error.read_text())
    vmfb.parent.mkdir(parents=True, exist_ok=True)
    try:
        mlir = iree_mlir(onnx.load_from_string(data))
        binary = iree.compiler.compile_str(
            mlir, input_type="onnx", target_backends=["llvm-cpu"], extra_args=IREE_FLAGS)
    except iree.compiler.CompilerToolError as e:
        _write(error, str(e).encode())
        raise IreeError(str(e)) from e
    except Exception as e:  # the importer's own errors (an op it has no conversion for)
        raise IreeError(f"import: {type(e).__name__}: {e}") from e
    _write(vmfb, binary)
    return vmfb


def iree_status(path):
    """iree_compile's outcome as the report writes it: "compiles (<s> s)" ("compiles (cached)"
    under 0.3 s), or "fails: <first error line>"."""
    start = time.monotonic()
    try:
        iree_compile(path)
    except IreeError as e:
        return f"fails: {e.line.replace('|', '/')}"
    seconds = time.monotonic() - start
    return "compiles (cached)" if seconds < 0.3 else f"compiles ({seconds:.1f} s)"


def _write(path, data):
    partial = path.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(path)


def run_iree(path, feeds):
    """The model compiled by iree_compile, run by iree.runtime on the local-task (CPU) device:
    {output name: array} in the graph's output order. Inputs are passed in the graph's input
    order (initializers that are also inputs are not passed)."""
    import iree.runtime as rt

    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    assert sorted(names) == sorted(feeds), (names, sorted(feeds))
    config = rt.Config("local-task")
    module = rt.VmModule.copy_buffer(config.vm_instance, iree_compile(path).read_bytes())
    context = rt.SystemContext(config=config, vm_modules=[module])
    functions = [f for f in module.function_names if f != "__init" and not f.endswith("$async")]
    assert len(functions) == 1, functions
    result = context.modules.module[functions[0]](*[feeds[n] for n in names])
    result = result if isinstance(result, (tuple, list)) else [result]
    outputs = [o.name for o in model.graph.output]
    assert len(result) == len(outputs), (len(result), outputs)
    return {name: np.asarray(r.to_host()) for name, r in zip(outputs, result)}


def static_model(path, out, input_shapes=None, capacity=None, allow_dynamic=False, extra_args=()):
    """Runs `target/release/nonzero optimize --static` (or $NONZERO_CLI) on the model at `path`,
    writing `out`: `input_shapes` maps input names to fixed shapes (one `--input-shape
    NAME=D0,D1,...` each; an empty shape is a scalar), `capacity` is `--capacity N`, or a dict of
    `--capacity NAME=N` (graph output -> N). Returns
    the report (`--report-json`) as a dict, with "returncode" and "stderr" (stdout and stderr)
    added; the model is written only when returncode is 0 (the CLI writes nothing when a node
    stays dynamic, unless allow_dynamic). The report's "static" part names each padded output's
    count output and padded axis ("count_outputs"); report_axes turns it into compare_static's
    `axes`. `extra_args` go to the CLI as they are (the deploy stage's `--target NAME`).
    test_exports_after.py runs every export through it."""
    args = [str(CLI), "optimize", "--static"]
    for name, dims in (input_shapes or {}).items():
        args += ["--input-shape", f"{name}=" + ",".join(str(int(d)) for d in dims)]
    if isinstance(capacity, dict):
        for name, n in capacity.items():
            args += ["--capacity", f"{name}={int(n)}"]
    elif capacity is not None:
        args += ["--capacity", str(int(capacity))]
    if allow_dynamic:
        args.append("--allow-dynamic")
    args += list(extra_args)
    with tempfile.TemporaryDirectory(prefix="nz-static-") as work:
        report_path = pathlib.Path(work) / "report.json"
        done = subprocess.run([*args, "--report-json", str(report_path), str(path), str(out)],
                              capture_output=True, text=True)
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
    report.update(returncode=done.returncode, stderr=done.stdout + done.stderr)
    return report


def report_axes(report):
    """{padded output name: padded axis} from static_model's report, for compare_static."""
    counts = report.get("static", {}).get("count_outputs", {})
    return {name: spec["axis"] for name, spec in counts.items()}


def fixed(path, shapes, out):
    """A copy of the model at `path` with each graph input named in `shapes` given that fixed
    shape (value_info and outputs as they were), written to `out`; returns `out`."""
    model = onnx.load(str(path))
    inputs = {i.name: i for i in model.graph.input}
    for name, dims in shapes.items():
        shape = inputs[name].type.tensor_type.shape
        assert len(shape.dim) == len(dims), (name, len(shape.dim), dims)
        for dim, size in zip(shape.dim, dims):
            dim.Clear()
            dim.dim_value = int(size)
    pathlib.Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))
    return pathlib.Path(out)
