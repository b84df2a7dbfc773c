"""The nonzero-ort wheel as a user gets it: installed with pip into a fresh virtual environment
(see conftest.py), never imported from this checkout."""

import json
import pathlib
import re
import subprocess
import zipfile

import pytest

from conftest import ORT_PINNED
from doc_blocks import blocks

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
README = ROOT / "python/README.md"
# Case IO shared with the end-to-end suite (tests/python/onnx_cases.py), passed to the fresh venv.
SHARED = ROOT / "tests/python"
KEY = "custom_op.NonZero.device"

# A NonZero model built in the environment (opset 13, float input), and what it must return.
MODEL_SRC = """
import numpy as np
from onnx import TensorProto, helper
graph = helper.make_graph(
    [helper.make_node("NonZero", ["x"], ["y"])], "nonzero",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])],
)
MODEL = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()
X = np.array([[1, 0, 2], [0, 3, 0]], dtype=np.float32)
EXPECTED = np.array([[0, 0, 1], [0, 2, 1]], dtype=np.int64)

def check(sess):
    (y,) = sess.run(None, {"x": X})
    assert y.dtype == EXPECTED.dtype and y.shape == EXPECTED.shape and (y == EXPECTED).all(), y
"""


def test_wheel_carries_the_library_with_a_linux_tag(wheel, venv):
    names = zipfile.ZipFile(wheel).namelist()
    assert "nonzero_ort/__init__.py" in names, names
    assert "nonzero_ort/_nonzero_ort.abi3.so" in names, names
    # One wheel for every CPython >= 3.8 on the machine of the interpreter it was installed for
    # (x86_64, or aarch64 under qemu-user): the library has no Python ABI.
    machine = venv.json("import json, platform; print(json.dumps(platform.machine()))")
    assert machine in ("x86_64", "aarch64"), machine
    tag = rf"nonzero_ort-0\.1\.0-cp38-abi3-(manylinux_\d+_\d+|linux)_{machine}\.whl"
    assert re.fullmatch(tag, wheel.name), (wheel.name, machine)


def test_import_does_not_import_onnxruntime(venv):
    out = venv.json(
        "import json, sys, nonzero_ort\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'numpy', 'onnx'))))"
    )
    assert out == [], f"import nonzero_ort imported {out}"
    # ...and neither does using it without a SessionOptions.
    out = venv.json(
        "import json, sys, nonzero_ort\n"
        "nonzero_ort.get_library_path()\n"
        "try:\n"
        "    nonzero_ort.register(object())\n"
        "except TypeError:\n"
        "    pass\n"
        "print(json.dumps('onnxruntime' in sys.modules))"
    )
    assert out is False


def test_library_path_is_inside_site_packages(venv):
    info = venv.json(
        "import json, os, sysconfig, nonzero_ort\n"
        "p = nonzero_ort.get_library_path()\n"
        "print(json.dumps({'path': p, 'isabs': os.path.isabs(p), 'isfile': os.path.isfile(p),\n"
        "                  'platlib': sysconfig.get_paths()['platlib'], 'package': nonzero_ort.__file__}))"
    )
    path = pathlib.Path(info["path"])
    assert info["isabs"] and info["isfile"], info
    assert path.name == "_nonzero_ort.abi3.so", info
    assert path.parent == pathlib.Path(info["platlib"]) / "nonzero_ort", info
    assert path.is_relative_to(venv.root), info
    assert not path.is_relative_to(ROOT), f"the library resolved into the checkout: {path}"
    assert pathlib.Path(info["package"]).parent == path.parent, info
    # It is the ONNX Runtime custom-op library: it exports the entry point ORT looks up.
    assert venv.json(
        "import ctypes, json, nonzero_ort\n"
        "lib = ctypes.CDLL(nonzero_ort.get_library_path())\n"
        "print(json.dumps(hasattr(lib, 'RegisterCustomOps')))"
    ) is True


def test_version_matches_the_workspace(venv, workspace_version):
    got = venv.json(
        "import json, importlib.metadata, nonzero_ort\n"
        "print(json.dumps([nonzero_ort.__version__, importlib.metadata.version('nonzero-ort')]))"
    )
    assert got == [workspace_version, workspace_version] == ["0.1.0", "0.1.0"]


def readme_example():
    """The README's first python block, and the output its trailing `# ` comment promises. (The
    docs stage, tests/docs, runs every block of the README and the docs with the same reader.)"""
    found = [b for b in blocks(README) if b.kind == "python"]
    assert found, "python/README.md has no python block"
    block = found[0].text
    assert block.startswith(
        "import onnxruntime as ort, nonzero_ort\n"
        "so = ort.SessionOptions()\n"
        "so.register_custom_ops_library(nonzero_ort.get_library_path())\n"
    ), block
    lines = block.rstrip("\n").split("\n")
    tail = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    assert tail, "the README example does not show its output"
    return block, "\n".join(tail) + "\n"


def test_readme_example_as_written(venv):
    block, expected = readme_example()
    script = venv.scratch / "readme_example.py"
    script.write_text(block)
    out = venv.run([script]).stdout
    assert out == expected


def test_register_runs_a_model_and_sets_the_device(venv):
    venv.code(
        MODEL_SRC
        + f"""
import onnxruntime as ort, nonzero_ort
for device, want in [(None, "cpu"), ("cpu", "cpu"), ("gpu", "gpu"), (" GPU ", "gpu"), ("Cpu", "cpu")]:
    so = ort.SessionOptions()
    args = () if device is None else (device,)
    assert nonzero_ort.register(so, *args) is so
    assert so.get_session_config_entry({KEY!r}) == want, (device, so.get_session_config_entry({KEY!r}))
# The default device, end to end (the GPU needs a Vulkan device; docs/gpu.md has its tests).
so = nonzero_ort.register(ort.SessionOptions())
check(ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"]))
so = ort.SessionOptions()
nonzero_ort.register(so, device="cpu")
check(ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"]))
print("ok")
"""
    )


BAD_OPTIONS = [
    "None",
    "'session options'",
    "{}",
    "ort.SessionOptions",  # the class, not an instance
    "ort.RunOptions()",
]


@pytest.mark.parametrize("bad", BAD_OPTIONS)
def test_register_rejects_what_is_not_session_options(venv, bad):
    out = venv.json(
        f"""
import json, onnxruntime as ort, nonzero_ort
try:
    nonzero_ort.register({bad})
except TypeError as e:
    print(json.dumps(str(e)))
else:
    raise SystemExit("no TypeError")
"""
    )
    assert "expected an onnxruntime.SessionOptions" in out, out


@pytest.mark.parametrize("bad", ["'cuda'", "''", "'gpu0'", "None", "1", "b'cpu'"])
def test_register_rejects_unknown_devices_and_leaves_the_options_alone(venv, bad):
    out = venv.json(
        f"""
import json, onnxruntime as ort, nonzero_ort
so = ort.SessionOptions()
try:
    nonzero_ort.register(so, device={bad})
except ValueError as e:
    msg = str(e)
else:
    raise SystemExit("no ValueError")
try:
    so.get_session_config_entry({KEY!r})
except RuntimeError:
    untouched = True
else:
    untouched = False
print(json.dumps([msg, untouched]))
"""
    )
    msg, untouched = out
    assert "unknown device" in msg and "'cpu'" in msg and "'gpu'" in msg, msg
    assert untouched, "a rejected register() still set the device entry"


def test_bundled_models(venv, models):
    assert len(models) >= 6, models
    out = venv.json((HERE / "installed_cases.py").read_text(), str(SHARED), *models)
    assert out["compared"] == [m.name for m in models]
    assert pathlib.Path(out["library"]).is_relative_to(venv.root), out


def test_conformance_sample(venv, conformance_sample):
    out = venv.json((HERE / "installed_cases.py").read_text(), str(SHARED), *conformance_sample)
    assert out["compared"] == [c.name for c in conformance_sample]
    assert out["ort"] == ORT_PINNED, out


OPTIMIZE_SOURCE = """
import json, pathlib, sys
import nonzero_ort
out = pathlib.Path(sys.argv[1])
results = {}
for p in map(pathlib.Path, sys.argv[2:]):
    by_path = nonzero_ort.optimize(p)
    assert nonzero_ort.optimize(str(p)) == by_path
    assert nonzero_ort.optimize(p.read_bytes()) == by_path
    assert nonzero_ort.optimize(bytearray(p.read_bytes())) == by_path
    rewritten, report = nonzero_ort.optimize(p, report=True)
    assert rewritten == by_path
    (out / (p.name + ".json")).write_text(json.dumps(report))
    unchanged, cuda = nonzero_ort.optimize(p, report=True, provider="cuda")
    assert unchanged == p.read_bytes() and "nothing rewritten" in cuda["note"]
    assert nonzero_ort.optimize(p, nonzero_domain=True) == by_path  # no NonZero is left here
    (out / p.name).write_bytes(by_path)
    results[p.name] = len(by_path)
print(json.dumps(results))
"""


def test_optimize_is_the_cli_rewriter(venv, tmp_path):
    """nonzero_ort.optimize (the Rust crate in the wheel's library, through ctypes) gives
    byte for byte what `nonzero optimize` writes, for bytes, str and PathLike arguments, and
    with report=True the report `--report-json` writes."""
    cli = ROOT / "target/release/nonzero"
    models = sorted((ROOT / "models/exported").glob("*.onnx"))
    assert len(models) >= 16
    got = venv.json(OPTIMIZE_SOURCE, tmp_path, *models)
    assert sorted(got) == [m.name for m in models]
    for m in models:
        want = tmp_path / ("cli_" + m.name)
        report = tmp_path / ("cli_" + m.name + ".json")
        subprocess.run([str(cli), "optimize", str(m), str(want), "--report-json", str(report)],
                       check=True, capture_output=True)
        assert (tmp_path / m.name).read_bytes() == want.read_bytes(), m.name
        assert json.loads((tmp_path / (m.name + ".json")).read_text()) == json.loads(report.read_text())
        assert (tmp_path / m.name).read_bytes() != m.read_bytes(), f"{m.name} was not rewritten"


def test_optimize_refuses_what_is_not_a_model(venv):
    got = venv.json("""
import json, nonzero_ort
out = []
for bad in (b"", b"not a model\\xff\\xff", 42):
    try:
        nonzero_ort.optimize(bad)
        out.append(None)
    except (ValueError, TypeError) as e:
        out.append([type(e).__name__, str(e)])
print(json.dumps(out))
""")
    assert got[0] == ["ValueError", "nonzero_ort.optimize: not an ONNX model: the ModelProto has no ir_version (a truncated file, or not a model)"]
    assert got[1][0] == "ValueError" and got[1][1].startswith("nonzero_ort.optimize: not an ONNX model: the bytes do not decode")
    assert got[2] == ["TypeError", "nonzero_ort.optimize: expected bytes or a path, got builtins.int"]


def test_optimize_refuses_an_invalid_model_as_the_cli_does(venv, tmp_path):
    """Issue 29: a node input nothing defines. The Python API raises ValueError with the CLI's
    message, and neither writes anything."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
         helper.make_node("Transpose", ["ghost"], ["y"], perm=[1, 0], name="transpose")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    got = venv.json("""
import json, sys, nonzero_ort
try:
    nonzero_ort.optimize(sys.argv[1])
    print(json.dumps(None))
except ValueError as e:
    print(json.dumps(str(e)))
""", bad)
    why = ("invalid model, nothing rewritten: main: node transpose (Transpose) reads 'ghost', which is "
           "not a graph input, an initializer, a node's output or an outer-scope name")
    assert got == "nonzero_ort.optimize: " + why
    out = tmp_path / "out.onnx"
    proc = subprocess.run([str(ROOT / "target/release/nonzero"), "optimize", str(bad), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and why in proc.stderr and not out.exists(), proc.stderr


def test_optimize_static_is_the_cli_static_mode(venv, tmp_path):
    """Issue 26: nonzero_ort.optimize(static=True, input_shapes=..., capacity=...) gives byte for
    byte what `nonzero optimize --static` writes, with the report's `static` key; a symbolic size
    left and a bad argument are refused by name."""
    model = ROOT / "models/exported/x_mask_ts17.onnx"
    got = venv.json("""
import json, sys, nonzero_ort
out, report = nonzero_ort.optimize(sys.argv[1], static=True, report=True, capacity=7,
                                   input_shapes={"input_0": [4, 5, 3], "input_1": (4, 5)})
open(sys.argv[2], "wb").write(out)
errors = []
for kwargs in ({"static": True}, {"capacity": 3}, {"static": True, "capacity": 0},
               {"static": True, "input_shapes": {"input_0": "4,5"}}, {"static": "yes"}):
    try:
        nonzero_ort.optimize(sys.argv[1], **kwargs)
        errors.append(None)
    except (ValueError, TypeError) as e:
        errors.append([type(e).__name__, str(e)])
print(json.dumps({"static": report["static"], "errors": errors}))
""", model, tmp_path / "py.onnx")
    assert got["static"]["count_outputs"] == {"4": {"count": "4_count", "axis": 0}}
    assert got["static"]["capacity"] == 7
    assert got["static"]["input_shapes"] == {"input_0": [4, 5, 3], "input_1": [4, 5]}
    cli_out = tmp_path / "cli.onnx"
    subprocess.run([str(ROOT / "target/release/nonzero"), "optimize", "--static", "--capacity", "7",
                    "--input-shape", "input_0=4,5,3", "--input-shape", "input_1=4,5", str(model), str(cli_out)],
                   check=True, capture_output=True)
    assert (tmp_path / "py.onnx").read_bytes() == cli_out.read_bytes()
    symbolic, stray, zero, not_ints, not_bool = got["errors"]
    assert symbolic[0] == "ValueError" and "input 'input_0' has symbolic sizes at axis 0 ('N')" in symbolic[1]
    assert stray[0] == "ValueError" and "capacity (--capacity) applies only with static" in stray[1]
    assert zero[0] == "ValueError" and "capacity must be at least 1, got 0" in zero[1]
    assert not_ints[0] == "TypeError" and "input_shapes['input_0'] must be a sequence of ints" in not_ints[1]
    assert not_bool == ["TypeError", "nonzero_ort.optimize: static must be True or False, got 'yes'"]


def test_register_with_the_nonzero_domain_only(venv):
    venv.code(
        """
import numpy as np, onnxruntime as ort, nonzero_ort
from onnx import TensorProto, helper

def model(domain):
    node = helper.make_node("NonZero", ["x"], ["y"], domain=domain)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)]
    return helper.make_model(graph, opset_imports=imports, ir_version=8).SerializeToString()

def nonzero_of_a_scalar(domain, **kwargs):
    so = nonzero_ort.register(ort.SessionOptions(), **kwargs)
    sess = ort.InferenceSession(model(domain), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.array(2.5, np.float32)})[0].shape

so = nonzero_ort.register(ort.SessionOptions(), onnx_domain=False)
assert so.get_session_config_entry(nonzero_ort.ONNX_DOMAIN_CONFIG_KEY) == "0"
# The library's NonZero gives [0, nnz] for a scalar; ONNX Runtime's own gives [1, nnz].
assert nonzero_of_a_scalar("") == (0, 1)
assert nonzero_of_a_scalar("", onnx_domain=False) == (1, 1)
assert nonzero_of_a_scalar("nonzero", onnx_domain=False) == (0, 1)
for bad in (0, "0", None):
    so = ort.SessionOptions()
    try:
        nonzero_ort.register(so, onnx_domain=bad)
    except TypeError as e:
        assert "onnx_domain must be True or False" in str(e), e
    else:
        raise SystemExit(f"no TypeError for {bad!r}")
    try:
        so.get_session_config_entry(nonzero_ort.ONNX_DOMAIN_CONFIG_KEY)
    except RuntimeError:
        pass
    else:
        raise SystemExit("a rejected register() still set the entry")
print("ok")
"""
    )
