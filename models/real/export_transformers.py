"""Exports architectures of the `transformers` package whose forward calls `nonzero`,
`torch.where(mask)` or boolean indexing, built from small configs with random weights (nothing
is downloaded), to ONNX (issue 19's real exports). The committed .onnx files mean CI needs no
torch.

    python3 -m venv .venv-export && .venv-export/bin/pip install -r requirements/export-models.txt
    .venv-export/bin/python models/real/export_transformers.py [NAME...] [--exporters ts17,dynamo18]

Where each model's NonZero comes from (transformers 5.23):
- vits: VitsModel, the stochastic duration predictor's rational-quadratic spline
  (`outputs[inside_interval_mask] = ...`, `inputs[inside_interval_mask]`). noise_scale and
  noise_scale_duration are 0, so the exported RandomNormalLike is multiplied by 0 and the output
  is deterministic.
- mixtral: MixtralForCausalLM, the sparse MoE block (`expert_hit = ....nonzero()`,
  `torch.where(expert_mask[i])`, `hidden_states[token_idx]`). Tracing unrolls the loop over the
  experts the example hit (all of them); inputs must also hit every expert.
- bart: BartForSequenceClassification (`hidden_states[eos_mask, :]`); every row of input_ids
  must hold the same number of eos tokens (id 2).
- longformer: LongformerModel with a global attention mask (`is_index_global_attn.nonzero()`).
  The trace keeps the example's one global token per row, and runs only with batch >= 2 and
  sequence >= 16 (smaller inputs fail in a Gather, on the built-in kernels too).
Writes `<name>_<exporter>.onnx` and this script's entries of manifest.json.
"""

import torch
from torch.export import Dim
from transformers import (BartConfig, BartForSequenceClassification, LongformerConfig, LongformerModel,
                          MixtralConfig, MixtralForCausalLM, VitsConfig, VitsModel)

import exportlib

VOCAB = 99
EOS = 2


def vits():
    config = VitsConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, ffn_dim=16,
                        flow_size=16, spectrogram_bins=20, upsample_initial_channel=16, upsample_rates=[8, 2],
                        upsample_kernel_sizes=[16, 4], resblock_kernel_sizes=[3, 7],
                        resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]], duration_predictor_filter_channels=16,
                        prior_encoder_num_flows=2, prior_encoder_num_wavenet_layers=2,
                        posterior_encoder_num_wavenet_layers=2, noise_scale=0.0, noise_scale_duration=0.0)
    return VitsModel(config), lambda out: (out.waveform, out.sequence_lengths), ["waveform", "sequence_lengths"]


def mixtral():
    config = MixtralConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                           max_position_embeddings=256, use_cache=False)
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # the loop with nonzero, not a fused kernel
    return MixtralForCausalLM(config), lambda out: (out.logits,), ["logits"]


def bart():
    config = BartConfig(vocab_size=VOCAB, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=8, decoder_ffn_dim=8, max_position_embeddings=256,
                        eos_token_id=EOS, pad_token_id=1, bos_token_id=0, num_labels=3, use_cache=False)
    config._attn_implementation = "eager"
    return BartForSequenceClassification(config), lambda out: (out.logits,), ["logits"]


def longformer():
    config = LongformerConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=37, attention_window=[4, 4], max_position_embeddings=512,
                              pad_token_id=1)
    return LongformerModel(config), lambda out: (out.last_hidden_state,), ["last_hidden_state"]


# name: (builder, description, example sequence length, global attention input?)
MODELS = {
    "vits": (vits, "transformers VitsModel (TTS), 2 layers, hidden 16, stochastic duration predictor", 12, False),
    "mixtral": (mixtral, "transformers MixtralForCausalLM, 2 layers, hidden 32, 4 experts top-2", 16, False),
    "bart": (bart, "transformers BartForSequenceClassification, 2+2 layers, d_model 16, 3 labels", 12, False),
    "longformer": (longformer, "transformers LongformerModel, 2 layers, hidden 32, window 4, global attention", 16, True),
}


class Flat(torch.nn.Module):
    """The model on (input_ids, attention_mask[, global_attention_mask]), its output object
    flattened to a tuple of tensors."""

    def __init__(self, model, pick):
        super().__init__()
        self.model, self.pick = model, pick

    def forward(self, input_ids, attention_mask, global_attention_mask=None):
        extra = {} if global_attention_mask is None else {"global_attention_mask": global_attention_mask}
        return self.pick(self.model(input_ids=input_ids, attention_mask=attention_mask, **extra))


def example(length, global_mask):
    """Two rows of token ids in [3, VOCAB), each ending with one eos; the first token of each row
    has global attention."""
    ids = torch.randint(3, VOCAB, (2, length))
    ids[:, -1] = EOS
    args = [ids, torch.ones_like(ids)]
    if global_mask:
        g = torch.zeros_like(ids)
        g[:, 0] = 1
        args.append(g)
    return tuple(args)


def main():
    args = exportlib.arguments(MODELS)
    entries = []
    for name in args.names:
        build, text, length, global_mask = MODELS[name]
        torch.manual_seed(0)
        model, pick, outputs = build()
        module = Flat(model.eval(), pick)
        inputs = example(length, global_mask)
        names = ["input_ids", "attention_mask", "global_attention_mask"][: len(inputs)]
        note = {n: "[batch, sequence] int64" for n in names}
        note["input_ids"] += f": ids in [3, {VOCAB}), one eos ({EOS}) ending each row"
        describe = {"model": text, "example_input": list(inputs[0].shape)}
        for exporter in args.exporters.split(","):
            if exporter == "ts17":
                dynamic = {n: {0: "batch", 1: "sequence"} for n in names}
                run = lambda path: exportlib.export_ts(module, inputs, path, names, outputs, dynamic)  # noqa: E731
            else:
                batch, sequence = Dim("batch", min=1, max=64), Dim("sequence", min=2, max=128)
                shapes = {n: {0: batch, 1: sequence} for n in names}
                run = lambda path: exportlib.export_dynamo(module, inputs, path, names, outputs, shapes)  # noqa: E731
            with torch.no_grad():
                entries.append(exportlib.record(name, exporter, describe, run, note))
    exportlib.write_manifest("transformers", entries)


if __name__ == "__main__":
    main()
