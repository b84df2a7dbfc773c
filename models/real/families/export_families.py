"""Exports real architectures from families that models/real had none of (issue 37, item 6),
built by `transformers` from small configs with random weights (nothing is downloaded), with both
of PyTorch's exporters, exactly as they write them (no shape inference, no clean-up):

- llava: LlavaForConditionalGeneration, a vision-language model (a CLIP vision tower, a
  projector, a Llama decoder). Its forward writes the image's features over the image tokens'
  embeddings with `inputs_embeds.masked_scatter(special_image_mask, image_features)`, which the
  TorchScript exporter writes as NonZero, Slice and ScatterND. One image and one row: the trace
  splits the features per image with the example's count (a Split of 1), so only batch 1 runs.
- superpoint: SuperPointForKeypointDetection, a keypoint detector and descriptor (the front of
  SuperPoint + LightGlue matchers). Its keypoints are `torch.nonzero(scores > threshold)`, then
  those away from the border (a second selection of the first), then each keypoint's descriptor
  sampled with grid_sample, written into outputs as long as the count.

CI never runs this: the .onnx files are committed.

    python3 -m venv .venv-export && .venv-export/bin/pip install -r requirements/export-models.txt
    .venv-export/bin/python models/real/families/export_families.py [NAME...]

Pinned: torch 2.15.0, transformers 5.23.0, onnx 1.23.2, onnxscript 0.7.2
(requirements/export-models.txt). TorchScript exporter at opset 17 (`ts17`) and dynamo exporter
at opset 18 (`dynamo18`). Each export must pass ONNX's checker and its strict shape inference
(the file is kept as written): TorchScript writes SuperPoint's MaxPool of an unbatched [1, H, W]
map with 2-D attributes, which ONNX Runtime refuses to load, and that failure is recorded.
Writes `<name>_<exporter>.onnx` and manifest.json (see models/real/patternlib.py; the input kinds
`image`, `ones` and `image_tokens:ID:N` are tests/python/real_patterns.py's).
"""

import os
import sys
import warnings

import onnx
import torch
from torch.export import Dim
from transformers import (CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration,
                          SuperPointConfig, SuperPointForKeypointDetection)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import exportlib  # noqa: E402
import patternlib  # noqa: E402

VOCAB, IMAGE_TOKEN = 99, 98
IMAGE_SIZE, PATCH = 32, 8
IMAGE_TOKENS = (IMAGE_SIZE // PATCH) ** 2  # one per patch (the CLS feature is dropped)
SCORE_GAIN = 100.0


class Llava(torch.nn.Module):
    def __init__(self):
        super().__init__()
        vision = CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  image_size=IMAGE_SIZE, patch_size=PATCH, projection_dim=16)
        text = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, use_cache=False)
        config = LlavaConfig(vision_config=vision, text_config=text, image_token_id=IMAGE_TOKEN,
                             vision_feature_layer=-2, vision_feature_select_strategy="default",
                             image_seq_length=IMAGE_TOKENS)
        config._attn_implementation = "eager"
        self.model = LlavaForConditionalGeneration(config)

    def forward(self, input_ids, attention_mask, pixel_values):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values,
                          use_cache=False).logits


class SuperPoint(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = SuperPointConfig(encoder_hidden_sizes=[8, 8, 16, 16], decoder_hidden_size=32,
                                  keypoint_decoder_dim=65, descriptor_decoder_dim=16, keypoint_threshold=0.0155,
                                  max_keypoints=-1, nms_radius=4, border_removal_distance=4)
        self.model = SuperPointForKeypointDetection(config)
        # transformers' initialisation (normal, std 0.02) makes the encoder's output vanish
        # (about 1e-8), so that every pixel scores alike: torch's own (Kaiming uniform) instead.
        # No biases and the score head scaled up, so that which pixels score above the threshold
        # depends on the image (a trained SuperPoint's scores do), not on the biases.
        for module in self.model.modules():
            if isinstance(module, torch.nn.Conv2d):
                module.reset_parameters()
                torch.nn.init.zeros_(module.bias)
        with torch.no_grad():
            self.model.keypoint_decoder.conv_score_b.weight.mul_(SCORE_GAIN)

    def forward(self, image):
        out = self.model(pixel_values=image)
        return out.keypoints, out.scores, out.descriptors, out.mask


def llava_example():
    ids = torch.randint(3, IMAGE_TOKEN, (1, 24))
    ids[0, 2:2 + IMAGE_TOKENS] = IMAGE_TOKEN
    return ids, torch.ones_like(ids), torch.rand(1, 3, IMAGE_SIZE, IMAGE_SIZE)


# name: (module, description, inputs, sizes, example, outputs)
MODELS = {
    "llava": (Llava, "transformers LlavaForConditionalGeneration: CLIP vision 2 layers, hidden 16, 32x32 image in "
              f"{IMAGE_TOKENS} patches; Llama 2 layers, hidden 32; masked_scatter of the image features",
              [{"name": "input_ids", "shape": [1, "sequence"], "dtype": "int64",
                "values": f"image_tokens:{IMAGE_TOKEN}:{IMAGE_TOKENS}"},
               {"name": "attention_mask", "shape": [1, "sequence"], "dtype": "int64", "values": "ones"},
               {"name": "pixel_values", "shape": [1, 3, IMAGE_SIZE, IMAGE_SIZE], "dtype": "float32",
                "values": "image"}],
              [{"sequence": 24}, {"sequence": 32}], llava_example, ["logits"]),
    "superpoint": (SuperPoint, "transformers SuperPointForKeypointDetection, encoder 8-8-16-16, descriptors of 16, "
                   "threshold 0.0155, nms radius 4, border 4, every keypoint kept; no biases, torch's init, score head x100",
                   [{"name": "image", "shape": [1, 1, "height", "width"], "dtype": "float32", "values": "image"}],
                   [{"height": 64, "width": 80}, {"height": 48, "width": 64}],
                   lambda: (torch.rand(1, 1, 64, 80),), ["keypoints", "scores", "descriptors", "mask"]),
}


def checked(path):
    """Fails where ONNX's strict shape inference does (what ONNX Runtime checks at load); the
    file stays as the exporter wrote it."""
    onnx.shape_inference.infer_shapes(onnx.load(path), check_type=True, strict_mode=True)


def main():
    warnings.filterwarnings("ignore")
    names = sys.argv[1:] or list(MODELS)
    versions = {"torch": torch.__version__, "transformers": __import__("transformers").__version__}
    entries = []
    for name in names:
        make, text, inputs, sizes, example, outputs = MODELS[name]
        torch.manual_seed(0)
        module = make().eval()
        args = example()
        in_names = [i["name"] for i in inputs]
        axes = {i["name"]: {a: s for a, s in enumerate(i["shape"]) if isinstance(s, str)} for i in inputs}
        dims = {"sequence": Dim("sequence", min=IMAGE_TOKENS + 1, max=128),
                "height": 8 * Dim("height_8", min=2, max=64), "width": 8 * Dim("width_8", min=2, max=64)}
        for exporter in ("ts17", "dynamo18"):
            if exporter == "ts17":
                def export(path):
                    exportlib.export_ts(module, args, path, in_names, outputs, axes)
                    checked(path)
            else:
                def export(path):
                    shapes = tuple({a: dims[d] for a, d in axes[n].items()} or None for n in in_names)
                    exportlib.export_dynamo(module, args, path, in_names, outputs, shapes)
                    checked(path)
            with torch.no_grad():
                entries.append(patternlib.record(HERE, name, exporter, versions, {"model": text}, inputs, sizes,
                                                 export, exportlib.describe_error))
    patternlib.write_manifest(HERE, entries)


if __name__ == "__main__":
    main()
