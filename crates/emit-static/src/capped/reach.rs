//! What the frames of a capped length reach ([`super::follow`]): the kind of each tensor
//! reached, and the flow's record of masked readers, padded outputs and padded tensors.

use super::length::Steps;
use nonzero_proto::onnx::NodeProto;

/// What a tensor computed from the frames holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Padded along `axis` of a rank-`rank` tensor; its length follows from the Range's by
    /// `steps`. The padding's values are unknown.
    Frames {
        axis: usize,
        rank: usize,
        steps: Steps,
    },
    /// Frames joined with `tail` real positions after them along `axis` (a Concat of the frames
    /// and tensors of fixed sizes there: Longformer's global slots' scores before the window's).
    /// The padding is the middle segment: positions from the length to the capacity's length.
    Joined {
        axis: usize,
        rank: usize,
        steps: Steps,
        tail: i64,
    },
    /// A shape vector (a Shape of such a tensor), the padded length at `entry`.
    ShapeOf { entry: usize, steps: Steps },
    /// The padded length as a scalar.
    Length { steps: Steps },
    /// A scalar computed from the length whose value does not depend on it: the difference of
    /// two lengths that differ by a constant (`(L + W) - L`, a joined axis's size less its
    /// frames'). It holds the same value in the original and at the capacity.
    Exact { value: i64 },
    /// Frames padded along `axis` flattened with the axes before it (of `outer` elements in
    /// all) into rows ([`super::linear`]).
    Merged {
        axis: usize,
        outer: i64,
        steps: Steps,
    },
    /// The tensor `of` times the length.
    Strided { of: String, steps: Steps },
    /// `low + high * length`: a linear index over frames merged with one axis before them.
    Linear {
        high: String,
        low: String,
        steps: Steps,
    },
}

impl Reach {
    /// Padded along `axis` of rank `rank`, with `tail` real positions after the padding.
    pub fn padded(axis: usize, rank: usize, steps: Steps, tail: i64) -> Reach {
        if tail == 0 {
            Reach::Frames { axis, rank, steps }
        } else {
            Reach::Joined {
                axis,
                rank,
                steps,
                tail,
            }
        }
    }
}

/// A reader that mixes along the padded axis: its input's padding is masked to `fill` first
/// (a Conv or ConvTranspose, a NonZero, each operand of a MatMul summing along it: zero or
/// false; a Softmax, LogSoftmax or ReduceMax:
/// the lowest value; a ReduceMin: the highest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked {
    /// The node's op, its first output (it is found by it), the input masked and its slot.
    pub op: String,
    pub output: String,
    pub input: String,
    pub slot: usize,
    pub axis: usize,
    pub rank: usize,
    pub steps: Steps,
    /// Real positions after the padding along `axis` (a [`Reach::Joined`] input), else 0.
    pub tail: i64,
    pub fill: Fill,
}

impl Masked {
    /// `node`'s input `slot`, padded along `axis` of rank `rank` by `steps`, masked to `fill`.
    pub fn of(
        node: &NodeProto,
        slot: usize,
        (axis, rank, steps): (usize, usize, &Steps),
        fill: Fill,
    ) -> Masked {
        Masked {
            op: node.op_type.clone().unwrap_or_default(),
            output: node.output[0].clone(),
            input: node.input[slot].clone(),
            slot,
            axis,
            rank,
            steps: steps.clone(),
            tail: 0,
            fill,
        }
    }

    /// The same reader, its input's padding followed by `tail` real positions.
    pub fn with_tail(self, tail: i64) -> Masked {
        Masked { tail, ..self }
    }
}

/// What a masked reader reads in the padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fill {
    Zero,
    Lowest,
    Highest,
}

/// A graph output padded along `axis`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub name: String,
    pub axis: usize,
    pub rank: usize,
    pub steps: Steps,
}

/// What the frames reach.
#[derive(Debug, Default)]
pub struct Flow {
    pub masked: Vec<Masked>,
    pub outputs: Vec<Output>,
    /// Every tensor padded along the frames: (name, its fixed sizes but the padded axis's,
    /// that axis, its steps); `None` where a size is not fixed.
    pub padded: Vec<(String, Option<Vec<i64>>, usize, Steps)>,
}
