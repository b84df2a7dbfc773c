"""Issue 36, item 2: `nonzero_ort.optimize`'s static-mode arguments in Python's words.

`input_shapes` takes sequences of integers, as `operator.index` takes them (NumPy integers
included), never a bool, a float or a string ("453" is not [4, 5, 3]); `capacity` an integer or a
dict from graph output names to integers. A wrong type is a TypeError, a size below 0 or a
capacity below 1 a ValueError, a value past int64 an OverflowError, each naming the argument and
the value; never the JSON transport's words. Run in the wheel's fresh venv (conftest.py).
"""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models/exported/x_mask_ts17.onnx"

ERRORS = """
import json, sys
import numpy as np
import nonzero_ort

good = {"input_0": [4, 5, 3], "input_1": [4, 5]}
cases = [
    {"input_shapes": {"input_0": "453", "input_1": [4, 5]}},
    {"input_shapes": {"input_0": b"453", "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [4.7, 5, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [4, 5.0, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [True, 5, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [np.bool_(True), 5, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": ["4", 5, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": 4, "input_1": [4, 5]}},
    {"input_shapes": {"input_0": {4, 5, 3}, "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [4, -5, 3], "input_1": [4, 5]}},
    {"input_shapes": {"input_0": [2**70, 5, 3], "input_1": [4, 5]}},
    {"input_shapes": {4: [4, 5, 3]}},
    {"input_shapes": [("input_0", [4, 5, 3])]},
    {"input_shapes": good, "capacity": 2**70},
    {"input_shapes": good, "capacity": 4.0},
    {"input_shapes": good, "capacity": "7"},
    {"input_shapes": good, "capacity": True},
    {"input_shapes": good, "capacity": 0},
    {"input_shapes": good, "capacity": -1},
    {"input_shapes": good, "capacity": {"4": 2.5}},
    {"input_shapes": good, "capacity": {"4": 0}},
    {"input_shapes": good, "capacity": {"4": 2**64}},
    {"input_shapes": good, "capacity": {4: 3}},
    {"input_shapes": good, "capacity": {"nope": 3}},
]
errors = []
for kwargs in cases:
    try:
        nonzero_ort.optimize(sys.argv[1], static=True, **kwargs)
        errors.append(None)
    except Exception as e:
        errors.append([type(e).__name__, str(e)])
print(json.dumps({"errors": errors, "np_true": repr(np.True_)}))
"""

P = "nonzero_ort.optimize: "
EXPECTED = [
    ["TypeError", P + "input_shapes['input_0'] must be a sequence of ints, got '453'"],
    ["TypeError", P + "input_shapes['input_0'] must be a sequence of ints, got b'453'"],
    ["TypeError", P + "input_shapes['input_0'][0] must be an int, got 4.7"],
    ["TypeError", P + "input_shapes['input_0'][1] must be an int, got 5.0"],
    ["TypeError", P + "input_shapes['input_0'][0] must be an int, got True"],
    ["TypeError", P + "input_shapes['input_0'][0] must be an int, got {np_true}"],
    ["TypeError", P + "input_shapes['input_0'][0] must be an int, got '4'"],
    ["TypeError", P + "input_shapes['input_0'] must be a sequence of ints, got 4"],
    ["TypeError", P + "input_shapes['input_0'] must be a sequence of ints, got {3, 4, 5}"],
    ["ValueError", P + "input_shapes['input_0'][1] must be 0 or more, got -5"],
    ["OverflowError", P + "input_shapes['input_0'][0] is 1180591620717411303424, past int64 (at most 9223372036854775807)"],
    ["TypeError", P + "input_shapes keys are input names (str), got 4"],
    ["TypeError", P + "input_shapes must be a dict from input names to sequences of ints, got [('input_0', [4, 5, 3])]"],
    ["OverflowError", P + "capacity is 1180591620717411303424, past int64 (at most 9223372036854775807)"],
    ["TypeError", P + "capacity must be an int, a dict from graph output names to ints, or None, got 4.0"],
    ["TypeError", P + "capacity must be an int, a dict from graph output names to ints, or None, got '7'"],
    ["TypeError", P + "capacity must be an int, a dict from graph output names to ints, or None, got True"],
    ["ValueError", P + "capacity must be at least 1, got 0"],
    ["ValueError", P + "capacity must be at least 1, got -1"],
    ["TypeError", P + "capacity['4'] must be an int, got 2.5"],
    ["ValueError", P + "capacity['4'] must be at least 1, got 0"],
    ["OverflowError", P + "capacity['4'] is 18446744073709551616, past int64 (at most 9223372036854775807)"],
    ["TypeError", P + "capacity keys are graph output names (str), got 4"],
    ["ValueError", P + "static mode: a capacity for 'nope', but the main graph has no output named 'nope' (its outputs: '4')"],
]


def test_static_arguments_are_refused_in_pythons_words(venv):
    got = venv.json(ERRORS, MODEL)
    # NumPy 2 writes np.True_, NumPy 1 (the ONNX Runtime 1.17 pins) True.
    expected = [[kind, text.replace("{np_true}", got["np_true"])] for kind, text in EXPECTED]
    assert len(got["errors"]) == len(expected)
    for g, want in zip(got["errors"], expected):
        assert g == want


def test_a_capacity_per_output(venv):
    """`capacity={"4": 3}` caps the selection that reaches the output '4': the same model as
    `capacity=3` (it is the only output), and the report names it."""
    got = venv.json("""
import json, sys
import nonzero_ort
shapes = {"input_0": [4, 5, 3], "input_1": [4, 5]}
named, report = nonzero_ort.optimize(sys.argv[1], static=True, capacity={"4": 3}, input_shapes=shapes, report=True)
one = nonzero_ort.optimize(sys.argv[1], static=True, capacity=3, input_shapes=shapes)
print(json.dumps([named == one, report["static"]["output_capacities"], report["static"]["capacity"]]))
""", MODEL)
    assert got == [True, {"4": 3}, None]


def test_numpy_integers_are_integers(venv, tmp_path):
    """NumPy integers and arrays of them give the same model as Python ints, byte for byte."""
    got = venv.json("""
import json, sys
import numpy as np
import nonzero_ort
plain = nonzero_ort.optimize(sys.argv[1], static=True, capacity=7,
                             input_shapes={"input_0": [4, 5, 3], "input_1": (4, 5)})
numpy = nonzero_ort.optimize(sys.argv[1], static=True, capacity=np.int64(7),
                             input_shapes={"input_0": np.array([4, 5, 3]), "input_1": [np.int32(4), np.uint8(5)]})
print(json.dumps(plain == numpy and len(plain) > 0))
""", MODEL)
    assert got is True


def test_a_target(venv):
    """`target="qnn"` is `--target qnn` (issue 38): the report says what the target got; "generic"
    and "cpu" give the default model byte for byte; an unknown name is a ValueError, and a static
    target without static=True the Rust side's refusal."""
    got = venv.json("""
import json, sys
import nonzero_ort
shapes = {"input_0": [4, 5, 3], "input_1": [4, 5]}
plain = nonzero_ort.optimize(sys.argv[1], static=True, input_shapes=shapes)
generic = nonzero_ort.optimize(sys.argv[1], static=True, input_shapes=shapes, target="generic")
cpu = nonzero_ort.optimize(sys.argv[1], static=True, input_shapes=shapes, target="cpu")
qnn, report = nonzero_ort.optimize(sys.argv[1], static=True, input_shapes=shapes, target="qnn", report=True)
kinds = [r["kind"] for r in report["static"]["rewrites"]]
errors = []
for kwargs in ({"static": True, "target": "tpu"}, {"target": "qnn"}):
    try:
        nonzero_ort.optimize(sys.argv[1], **kwargs)
    except ValueError as e:
        errors.append(str(e))
print(json.dumps([plain == generic == cpu, qnn != plain, kinds[0], errors]))
""", MODEL)
    assert got[:3] == [True, True, "target"]
    assert got[3][0] == ("nonzero_ort.optimize: target must be one of ['cpu', 'cuda', 'generic', 'qnn', 'litert', "
                         "'rknn'], got 'tpu'")
    assert "target (--target) applies only with static (--static)" in got[3][1], got[3][1]
