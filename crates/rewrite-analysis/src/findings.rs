//! What the analysis and the proofs found, as plain data: the facts a proven chain relies on,
//! why a NonZero or gather was left, and who reads the coordinates. The targets and the driver's
//! report carry these values; nothing here knows a target.

/// One fact a rewrite relied on, checkable against run-time shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// `tensor` has this rank.
    Rank { tensor: String, rank: usize },
    /// `tensor` is bool.
    Bool { tensor: String },
    /// Axis `axis` of `tensor` has the size of axis `other_axis` of `other` (both `size`).
    SameSize {
        tensor: String,
        axis: usize,
        other: String,
        other_axis: usize,
        size: String,
    },
    /// The sizes of `tensor` and the leading ones of `other` are compared at run time (the
    /// guarded form: fused where they agree, the original where not).
    CheckedAtRunTime { tensor: String, other: String },
}

/// Why a NonZero (or the gather after it) was left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    UnknownRank,
    ScalarInput,
    NotTransposed,
    OtherReaders,
    MaskNotBool,
    SizesNotProven,
    Conflict,
    Provider,
    /// ONNX defines no NonZero at the graph's opset, or it is newer than the rewriter knows.
    UnknownOpset,
    /// A gather of ArgWhere's coordinates that no pattern fuses (`crate::readers`).
    GatherNotFused,
    /// Static mode: the opset lacks CumSum and ScatterElements (before 11).
    OpsetTooOld,
    /// Static mode: a reader of the padded coordinates is not padding-safe.
    PaddingUnsafe,
    /// Static mode: an op whose output size depends on its input values.
    DataDependent,
    /// Static mode: a shape operand computed from tensor values.
    ValueDependentShape,
    /// Static mode: the mask's shape is not fixed (it depends on a result left dynamic, or on
    /// an op the inference does not cover); or, with nothing else left dynamic, a graph output
    /// or `value_info` is declared without a fixed shape that the inference proves.
    ShapeNotFixed,
}

impl Reason {
    /// A stable name for machines.
    pub fn code(self) -> &'static str {
        match self {
            Reason::UnknownRank => "unknown-rank",
            Reason::ScalarInput => "scalar-input",
            Reason::NotTransposed => "not-transposed",
            Reason::OtherReaders => "other-readers",
            Reason::MaskNotBool => "mask-not-bool",
            Reason::SizesNotProven => "sizes-not-proven",
            Reason::Conflict => "value-info-conflict",
            Reason::Provider => "provider",
            Reason::UnknownOpset => "unknown-opset",
            Reason::GatherNotFused => "gather-not-fused",
            Reason::OpsetTooOld => "opset-too-old",
            Reason::PaddingUnsafe => "padding-unsafe",
            Reason::DataDependent => "data-dependent",
            Reason::ValueDependentShape => "value-dependent-shape",
            Reason::ShapeNotFixed => "shape-not-fixed",
        }
    }

    /// What failed, for people.
    pub fn text(self) -> &'static str {
        match self {
            Reason::UnknownRank => "the input's rank is not proven",
            Reason::ScalarInput => "the input is a scalar (ONNX Runtime's NonZero gives [1, nnz] there, ArgWhere [nnz, 0])",
            Reason::NotTransposed => "its output is not read by a Transpose(perm=[1,0])",
            Reason::OtherReaders => "its output has readers besides the Transpose that became ArgWhere",
            Reason::MaskNotBool => "the gather was kept: the mask is not proven bool",
            Reason::SizesNotProven => "the gather was kept: data's leading sizes are not proven the mask's",
            Reason::Conflict => "a declared value_info disagrees with the inference; neither is trusted",
            Reason::Provider => "the chosen execution provider runs nothing of the nonzero domain",
            Reason::UnknownOpset => "the graph's ai.onnx opset defines no NonZero that this rewriter knows",
            Reason::GatherNotFused => "the gather of the coordinates stays: no pattern fuses this chain",
            Reason::OpsetTooOld => "static mode needs CumSum and ScatterElements (opset 11); the opset is never raised",
            Reason::PaddingUnsafe => "static mode: a reader of the padded result is not padding-safe",
            Reason::DataDependent => "static mode: the output size depends on tensor values",
            Reason::ValueDependentShape => "static mode: a shape operand is computed from tensor values",
            Reason::ShapeNotFixed => {
                "static mode: a shape is not fixed (a mask's, or a declared output's or value_info's)"
            }
        }
    }
}

/// A NonZero, GatherND or Gather that a proof failed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub graph: String,
    pub node: String,
    pub op: String,
    pub reason: Reason,
    /// The shapes as far as known, or what disagreed.
    pub detail: String,
}

/// A reader that needs an ArgWhere's coordinates themselves (`crate::readers`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedCoordinates {
    pub graph: String,
    /// The ArgWhere whose coordinates are read.
    pub argwhere: String,
    /// The reading node, or `the graph's outputs`.
    pub reader: String,
    /// Its op type (`output` for a graph output).
    pub op: String,
}
