"""RKNN's known faults (rknn-toolkit2 2.5.0 for rk3588, its simulator; the deploy_rknn stage,
test_rknn.py), as expected.py's FAULTS entries: strict xfails, each with its reason. Imports
nothing."""

RKNN_SLICE = ("rknn-toolkit2 fails on the generic form's count, a Slice of the running count's last element "
              "reshaped to a scalar ('Got invalid dimensions for input: .../slice-rs' while it folds constants; "
              "--target rknn takes a ReduceSum)")
RKNN_GATHER_FUSE = ("rknn-toolkit2 rewrites the generic form's 1-D Slice of the compacted positions into a Gather of "
                    "the wrong length, then fails in its own rule _p_fuse_gather_gather_reshape (IndexError; "
                    "--target rknn takes a Split)")
RKNN_TP_IN_MESH = ("rknn-toolkit2 fails in its rule _p_reduce_tp_in_mesh (IndexError) on the generic form's "
                   "coordinates by Div and Mod (--target rknn gathers them from a grid)")
RKNN_IF = ("rknn-toolkit2 takes no If: its checker reads a body's use of an outer tensor as a graph out of "
           "topological order (a toolchain limit; --target rknn flattens an If of fixed-shape branches into Wheres)")
RKNN_LOOP = ("rknn-toolkit2 takes no Loop ('will cause the graph to be a dynamic graph', or an invalid model once "
             "it has rewritten the Loop): a toolchain limit; the generic form's NMS is a Loop (--target rknn unrolls it, and "
             "writes out a Loop of a constant trip count over fixed-shape work)")
RKNN_HANG = ("rknn-toolkit2's build of BART ts17 runs past 300 s in its rule passes (killed; dynamo18's builds). Given "
             "3600 s (NONZERO_RKNN_TIMEOUT_S, 2026-12-07, beside other jobs) both forms still ran. It is the model's own "
             "network: the original cut before its NonZero (input dims fixed, 838 nodes, nothing of --static in it) "
             "hangs the same way, silent after the rule cvt_and_to_fp_mul on the encoder's attention mask (killed at "
             "400 s), and so does the rknn form cut there; the rknn form's encoder alone builds in 1.3 s, its decoder "
             "alone in 1.5 s, and its tail from the last hidden state (33 nodes: the compaction and the classification "
             "head) in 0.4 s and runs equal (2026-12-07)")
RKNN_FOLD_INPUTS = ("rknn-toolkit2 folds constants by running the model on inputs of its own, where the mask selects "
                    "more elements than the update list holds: the original fails there too (an out-of-range gather; "
                    "TorchScript's export of x[m] = v lists v once, valid for one selected row). --target rknn caps "
                    "the gather's index at the list's end (writes.rs), and builds")
RKNN_SCALAR_INPUT = ("rknn-toolkit2's simulator cannot read a rank-0 graph input (IndexError in get_input_img), given "
                     "as it is or as [1] (--target rknn declares it [1], reshaped to a scalar inside)")


# torchvision's detectors, when deploy_rknn runs with NONZERO_DEPLOY_ALL=1 (measured 2026-12-05
# and, FCOS and SSDlite with NONZERO_RKNN_TIMEOUT_S=2400, 2026-12-06).
RKNN_DETECTOR_MESH = ("rknn-toolkit2 fails in its rule _p_reduce_tp_in_mesh (IndexError, after 85 s) on Faster R-CNN's "
                      "rknn form; the graph up to box_roi_pool (the RPN's unrolled NMS included) builds (630 s), and so "
                      "does the part from box_head to the second NMS alone (2 s): only their join fails (not narrowed "
                      "further)")
# Builds that pass given longer than the judge's default limit (NONZERO_RKNN_TIMEOUT_S, 300 s):
# {("rknn", form, model id): seconds its build and four runs took}, measured 2026-12-06 beside
# another job (a quiet machine takes about half). RetinaNet's rknn form then runs equal within
# fp16 on every mask, 2,286 of its 4,241 ops on the NPU.
SLOW_BUILDS = {("rknn", "rknn", "real/retinanet_ts17.onnx"): 2890}
RKNN_DETECTOR_FP16 = ("rknn-toolkit2 builds FCOS's rknn form (21 minutes) and its simulator runs it, in float16: other "
                      "boxes survive NMS than on ONNX Runtime CPU (178 of 400 box values differ on random input), as "
                      "on QNN HTP (expected.HTP_DETECTORS). Its tail alone, cut where the network ends, builds (19 "
                      "minutes) and runs exactly: labels, counts and scores (test_tail_on_rknn)")
RKNN_DETECTOR_MEMORY = ("rknn-toolkit2's build of SSDlite's rknn form (17,161 nodes) outgrows the machine's 24 GiB: "
                        "the kernel's OOM killer ended it at 21 GB resident, 25 minutes into its rule passes")


def slow_build(key, timeout_s):
    """Why `key` (as FAULTS's) fails within `timeout_s` seconds, where its build takes longer."""
    took = SLOW_BUILDS.get(key, 0)
    if took > timeout_s:
        return (f"rknn-toolkit2 builds {key[2]}'s {key[1]} form and runs it equal, in {took} s: past "
                f"NONZERO_RKNN_TIMEOUT_S={timeout_s} (killed)")
    return None


def faults(mask_nms, nms_picks):
    """{("rknn", form, model id): why}; `mask_nms` and `nms_picks` are expected.py's lists of
    the mask-then-NMS exports and the hand-made NMS models (their generic form's NMS is a Loop)."""
    out = {}
    reasons = {
        RKNN_SLICE: ["exported/argwhere_dynamo18.onnx", "exported/detection_postprocess_dynamo18.onnx",
                     "exported/detection_postprocess_ts17.onnx", "exported/masked_select_ts17.onnx",
                     "exported/nonzero_as_tuple_dynamo18.onnx", "exported/nonzero_as_tuple_ts17.onnx",
                     "exported/nonzero_dynamo18.onnx", "exported/nonzero_ts17.onnx", "handmade/nonzero_3000",
                     "handmade/x_mask_2x10x128", "paddle2onnx/nonzero_paddle2onnx.onnx", "real/bart_dynamo18.onnx",
                     "tf2onnx/boolean_mask_axis1_tf2onnx.onnx", "tf2onnx/masked_count_mean_tf2onnx.onnx",
                     "tf2onnx/where_coordinates_tf2onnx.onnx"]
        + [f"torch_patterns/{_name}_{_exporter}.onnx" for _exporter in ("dynamo18", "ts17")
           for _name in ("masked_all", "masked_any", "masked_prod", "masked_scatter", "moe_router", "where_tuple_same_shape")],
        RKNN_GATHER_FUSE: ["exported/boxes_scores_dynamo18.onnx", "exported/boxes_scores_ts17.onnx",
                           "exported/where_index_dynamo18.onnx", "exported/where_index_ts17.onnx",
                           "exported/x_mask_dynamo18.onnx", "exported/x_mask_ts17.onnx", "handmade/x_mask_8x320",
                           "paddle2onnx/nonzero_gather_nd_paddle2onnx.onnx", "paddle2onnx/nonzero_gather_paddle2onnx.onnx",
                           "paddle2onnx/x_mask_2d_paddle2onnx.onnx", "paddle2onnx/x_mask_paddle2onnx.onnx",
                           "tf2onnx/boolean_mask_2d_tf2onnx.onnx", "tf2onnx/boolean_mask_tf2onnx.onnx",
                           "tf2onnx/where_gather_nd_tf2onnx.onnx"]
        + [f"torch_patterns/{_name}_{_exporter}.onnx" for _exporter in ("dynamo18", "ts17")
           for _name in ("if_select", "nonzero_index_select", "where_tuple")],
        RKNN_TP_IN_MESH: ["handmade/nonzero_8x320", "tf2onnx/masked_reduce_sum_tf2onnx.onnx"],
        RKNN_LOOP: mask_nms + nms_picks,
    }
    for _why, _models in reasons.items():
        for _model in _models:
            out["rknn", "generic", _model] = _why
    # The rknn form flattens these Ifs into Wheres (emit-static's fixed/ifs.rs).
    for _model in [f"torch_patterns/{_name}_{_exporter}.onnx" for _name in ("if_mask_add", "if_masked_scatter")
                   for _exporter in ("dynamo18", "ts17")]:
        out["rknn", "generic", _model] = RKNN_IF
    for _model in ("torch_patterns/loop_count_ts17.onnx", "torch_patterns/loop_masked_write_ts17.onnx"):
        out["rknn", "generic", _model] = RKNN_LOOP
    for _form in ("generic", "rknn"):
        out["rknn", _form, "real/bart_ts17.onnx"] = RKNN_HANG
    out["rknn", "generic", "torch_patterns/mask_assign_ts17.onnx"] = RKNN_FOLD_INPUTS
    out["rknn", "generic", "handmade/mask_assign_8x320"] = RKNN_SCALAR_INPUT
    for _name in ("faster_rcnn", "retinanet", "fcos", "ssdlite320"):
        out["rknn", "generic", f"real/{_name}_ts17.onnx"] = RKNN_LOOP
    out["rknn", "rknn", "real/faster_rcnn_ts17.onnx"] = RKNN_DETECTOR_MESH
    out["rknn", "rknn", "real/ssdlite320_ts17.onnx"] = RKNN_DETECTOR_MEMORY
    out["rknn", "rknn", "real/fcos_ts17.onnx"] = RKNN_DETECTOR_FP16
    return out
