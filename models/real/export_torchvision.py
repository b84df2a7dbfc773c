"""Exports torchvision's detection models, with random weights and torchvision's own
post-processing, to ONNX (issue 19's real exports). Small backbones and widths keep each file
under 20 MB; the committed .onnx files mean CI needs no torch.

    python3 -m venv .venv-export && .venv-export/bin/pip install -r requirements/export-models.txt
    .venv-export/bin/python models/real/export_torchvision.py [NAME...] [--exporters ts17,dynamo18]

Each model takes one image `image` [3, height, width] (float, 0..1; both sizes dynamic) and
returns torchvision's detection dict as outputs `boxes`, `scores`, `labels` (+ `masks` or
`keypoints`, `keypoints_scores`). Writes `<name>_<exporter>.onnx` and this script's entries of
manifest.json (what each model is, its NonZero count, or why its export failed).
"""

import torch
from torch.export import Dim
from torchvision.models import mobilenet_v3_small
from torchvision.models.detection import FCOS, FasterRCNN, KeypointRCNN, MaskRCNN, RetinaNet
from torchvision.models.detection import ssdlite320_mobilenet_v3_large
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.keypoint_rcnn import KeypointRCNNHeads, KeypointRCNNPredictor
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7

import exportlib

CHANNELS = 64  # FPN width: torchvision's default 256 puts the heads over 20 MB
NUM_CLASSES = 5
IMAGE = (3, 240, 320)  # the example image (height, width are dynamic in the export)
RCNN_SIZE = dict(min_size=224, max_size=320)


def small_fpn(extra_blocks):
    """MobileNetV3-Small's last two stages with an FPN of CHANNELS channels, as torchvision's
    mobilenet_backbone builds it, but narrower."""
    features = mobilenet_v3_small(weights=None).features
    stages = [0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)] + [len(features) - 1]
    returned = [len(stages) - 2, len(stages) - 1]
    return_layers = {str(stages[k]): str(v) for v, k in enumerate(returned)}
    in_channels = [features[stages[i]].out_channels for i in returned]
    return BackboneWithFPN(features, return_layers, in_channels, CHANNELS, extra_blocks=extra_blocks)


def anchors(levels, ratios):
    return AnchorGenerator(tuple((16 * 2**i,) for i in range(levels)), (ratios,) * levels)


def retinanet():
    # score_thresh below the classifier's prior (0.01) so that random weights still detect.
    return RetinaNet(small_fpn(LastLevelP6P7(CHANNELS, CHANNELS)), NUM_CLASSES, anchor_generator=anchors(4, (0.5, 1.0, 2.0)),
                     score_thresh=0.005, topk_candidates=100, detections_per_img=50, **RCNN_SIZE)


def fcos():
    return FCOS(small_fpn(LastLevelP6P7(CHANNELS, CHANNELS)), NUM_CLASSES, anchor_generator=anchors(4, (1.0,)),
                score_thresh=0.05, topk_candidates=100, detections_per_img=50, **RCNN_SIZE)


def ssdlite():
    # torchvision's own builder: MobileNetV3-Large (reduced tail), 320x320, 91 COCO classes.
    return ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=91)


def rcnn_parts():
    return dict(rpn_anchor_generator=anchors(3, (0.5, 1.0, 2.0)),
                box_head=TwoMLPHead(CHANNELS * 7 * 7, 128), box_predictor=FastRCNNPredictor(128, NUM_CLASSES),
                rpn_pre_nms_top_n_test=200, rpn_post_nms_top_n_test=50, box_detections_per_img=20, **RCNN_SIZE)


def faster_rcnn():
    return FasterRCNN(small_fpn(LastLevelMaxPool()), **rcnn_parts())


def mask_rcnn():
    return MaskRCNN(small_fpn(LastLevelMaxPool()), mask_head=MaskRCNNHeads(CHANNELS, [CHANNELS] * 2, 1),
                    mask_predictor=MaskRCNNPredictor(CHANNELS, CHANNELS, NUM_CLASSES), **rcnn_parts())


def keypoint_rcnn():
    return KeypointRCNN(small_fpn(LastLevelMaxPool()), keypoint_head=KeypointRCNNHeads(CHANNELS, [CHANNELS] * 2),
                        keypoint_predictor=KeypointRCNNPredictor(CHANNELS, 17), **rcnn_parts())


# name: (builder, outputs beyond boxes/scores/labels, description)
MODELS = {
    "ssdlite320": (ssdlite, (), "torchvision ssdlite320_mobilenet_v3_large, 91 classes"),
    "retinanet": (retinanet, (), f"torchvision RetinaNet, MobileNetV3-Small + FPN({CHANNELS}) P6P7, {NUM_CLASSES} classes"),
    "fcos": (fcos, (), f"torchvision FCOS, MobileNetV3-Small + FPN({CHANNELS}) P6P7, {NUM_CLASSES} classes"),
    "faster_rcnn": (faster_rcnn, (), f"torchvision FasterRCNN, MobileNetV3-Small + FPN({CHANNELS}), {NUM_CLASSES} classes"),
    "mask_rcnn": (mask_rcnn, ("masks",), f"torchvision MaskRCNN, MobileNetV3-Small + FPN({CHANNELS}), {NUM_CLASSES} classes"),
    "keypoint_rcnn": (keypoint_rcnn, ("keypoints", "keypoints_scores"),
                      f"torchvision KeypointRCNN, MobileNetV3-Small + FPN({CHANNELS}), 17 keypoints"),
}


class OneImage(torch.nn.Module):
    """A detector on one image tensor, its dict flattened to a tuple (the dynamo exporter takes
    neither lists of images nor dicts)."""

    def __init__(self, model, keys):
        super().__init__()
        self.model, self.keys = model, keys

    def forward(self, image):
        result = self.model([image])[0]
        return tuple(result[k] for k in self.keys)


def main():
    args = exportlib.arguments(MODELS)
    entries = []
    for name in args.names:
        build, extra, text = MODELS[name]
        outputs = ["boxes", "scores", "labels", *extra]
        torch.manual_seed(0)
        model = OneImage(build().eval(), outputs)
        image = torch.rand(IMAGE)
        describe = {"model": text, "example_image": list(IMAGE)}
        note = {"image": "[3, height, width] float32 in [0, 1]"}
        for exporter in args.exporters.split(","):
            if exporter == "ts17":
                dynamic = {"image": {1: "height", 2: "width"}, **{o: {0: "detections"} for o in outputs}}
                run = lambda path: exportlib.export_ts(model, (image,), path, ["image"], outputs, dynamic)  # noqa: E731
            else:
                shapes = {"image": {1: Dim("height", min=64, max=1024), 2: Dim("width", min=64, max=1024)}}
                run = lambda path: exportlib.export_dynamo(model, (image,), path, ["image"], outputs, shapes)  # noqa: E731
            with torch.no_grad():
                entries.append(exportlib.record(name, exporter, describe, run, note))
    exportlib.write_manifest("torchvision", entries)


if __name__ == "__main__":
    main()
