//! Which toolchain the static model is for (`--target NAME`): the generic forms (the default,
//! the fastest on ONNX Runtime, OpenVINO and IREE), or the portable forms that NPU toolchains
//! take (docs/static.md, "Targets"). The output contract is the same for every target.

/// The toolchain a static model is written for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Target {
    /// ONNX Runtime, OpenVINO, IREE: coordinates by integer Div and Mod of a flat index, 1-D
    /// gathers as GatherElements, padding read at index -1.
    #[default]
    Generic,
    /// Qualcomm's QNN HTP (through ONNX Runtime's QNN execution provider).
    Qnn,
    /// LiteRT (TensorFlow Lite), through onnx2tf.
    Litert,
    /// Rockchip's RKNN (rknn-toolkit2).
    Rknn,
}

impl Target {
    pub const NAMES: [&'static str; 4] = ["generic", "qnn", "litert", "rknn"];

    pub fn parse(name: &str) -> Option<Target> {
        match name {
            "generic" => Some(Target::Generic),
            "qnn" => Some(Target::Qnn),
            "litert" => Some(Target::Litert),
            "rknn" => Some(Target::Rknn),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Target::NAMES[self as usize]
    }

    /// Whether the portable forms are written (every target but the generic one).
    pub fn portable(self) -> bool {
        self != Target::Generic
    }

    /// The report's line: what the target got, and why.
    pub fn why(self) -> Option<String> {
        let (gathers, toolchain) = match self {
            Target::Generic => return None,
            Target::Qnn => ("Gather for 1-D gathers, not GatherElements; the model's own OneHots as Equal and Where, and GatherNDs at constant indices as Gathers", "QNN HTP takes no OneHot or GatherND, computes integer arithmetic in fp16 (exact only to 2048), reads a negative gather index wrongly, fails on a Transpose of int64 data, and QNN refuses GatherElements on rank-1 tensors"),
            Target::Litert => ("an int32 CumSum; Splits as Slices; integer Clips as Max and Min; transposed coordinates gathered by rows of a transposed grid; a Where of integers with its operands expanded to its shape; a ScatterND at computed indices as a ScatterElements of rows; a GELU's rank-0 divisor as a [1] tensor; a mask flattened before its zero test", "onnx2tf's flatbuffer_direct backend miscompiles an int64 CumSum, rejects negative gather indices, leaves a Split's parts without fixed shapes, writes a Where of integers as SELECT, which takes no broadcast, and a ScatterND with reduction=add as a custom op, and its tf_converter backend drops a square result's Transpose, fails on a ScatterND whose indices are not constant, fuses a GELU into LiteRT's builtin only on a divisor of shape [1] (FlexErf otherwise), and with -kat flattens an elementwise op's result on a rank-3 input in NWC order"),
            Target::Rknn => ("Gather for 1-D gathers, not GatherElements; a Split, not a Slice, for the compacted positions; the count as a ReduceSum (up to 2048 mask elements saturated at the capacity by a float Min); up to 2048 mask elements the positions in float arithmetic (MatMul, Relu), not CumSum and ScatterElements, and the coordinates a MatMul of the same one-hot rows, not a Gather of the grid; one gather per data tensor and axis (the others' indices concatenated, then a Split); an empty selection's float sum made +0 by adding a signed zero, not by a Where; a masked write's index into its update list capped at the list's end", "rknn-toolkit2's converter fails on the generic forms' 1-D Slices (a Gather of the wrong length, then IndexError in its gather fusion) and on the count's Slice and Reshape to a scalar, merges gathers of one tensor without comparing their indices, dies on a Where at a whole reduction's one element, folds constants by running the model on random inputs (where a list of updates runs out), and runs integer work on the chip's CPU, float work on the NPU (float16: exact to 2048)"),
        };
        Some(format!(
            "{}: coordinates gathered from constant per-axis index grids at the compacted positions (no integer Div or Mod); gather indices never negative (padding points at a pad slot; outputs keep -1 past the count); a Transpose of the coordinates before their cast to int64; {gathers}; because {toolchain}",
            self.name()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn names_round_trip() {
        for name in Target::NAMES {
            assert_eq!(Target::parse(name).map(Target::name), Some(name));
        }
        assert_eq!(Target::parse("cuda"), None);
        assert!(!Target::Generic.portable() && Target::Qnn.portable());
        assert_eq!(Target::Generic.why(), None);
    }
}
