//! What a run produced, and how outputs are judged: bit-exact against expected ones, or against
//! ORT's built-in kernel with its one known difference.

use nonzero_harness::{Tensor, TensorData};

/// The outcome for one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every output equals the expected one (bit-exact).
    Match,
    /// At least one output differs; the text says which.
    Mismatch(String),
    /// No expected output: ran, and either matched ORT's built-in kernel (`Some(true)`), differed
    /// from it (`Some(false)`) or the built-in could not run the model (`None`).
    NoExpected {
        builtin_equal: Option<bool>,
        note: String,
    },
    /// The model could not be run.
    Error(String),
    /// Not runnable through this path, for a stated reason (e.g. NUL characters in string inputs).
    Skipped(String),
}

impl Status {
    /// `true` when the outputs were checked and are right: equal to the expected ones, or (a
    /// model without expected outputs) equal to ONNX Runtime's built-in kernel's.
    pub fn is_match(&self) -> bool {
        matches!(
            self,
            Status::Match
                | Status::NoExpected {
                    builtin_equal: Some(true),
                    ..
                }
        )
    }

    /// `true` for outcomes that should fail the command.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Status::Mismatch(_)
                | Status::Error(_)
                | Status::NoExpected {
                    builtin_equal: Some(false),
                    ..
                }
        )
    }
}

/// What running one case (or bare model) produced.
#[derive(Debug, Clone)]
pub struct Report {
    pub name: String,
    pub inputs: Vec<(String, Tensor)>,
    pub outputs: Vec<(String, Tensor)>,
    pub expected: Vec<(String, Tensor)>,
    pub status: Status,
}

/// Compares outputs with expected ones by name (or position), bit-exact.
pub fn compare(outputs: &[(String, Tensor)], expected: &[(String, Tensor)]) -> Status {
    for (i, (name, want)) in expected.iter().enumerate() {
        let got = outputs
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| outputs.get(i));
        match got {
            None => return Status::Mismatch(format!("missing output {name}")),
            Some((_, got)) if !got.same_as(want) => {
                return Status::Mismatch(format!(
                    "{name}: got {}, expected {}",
                    got.describe(8),
                    want.describe(8)
                ))
            }
            _ => {}
        }
    }
    Status::Match
}

/// ORT's built-in NonZero returns `[1, nnz]` (all zeros) for a scalar input where ONNX says
/// `[0, nnz]`: `true` when that is the only difference between `ours` and `builtin`.
pub(crate) fn scalar_nonzero_difference(
    ours: &[(String, Tensor)],
    builtin: &[(String, Tensor)],
) -> bool {
    let mut any = false;
    for ((_, a), (_, b)) in ours.iter().zip(builtin) {
        if a.same_as(b) {
            continue;
        }
        let zeros = matches!(&b.data, TensorData::Int64(v) if v.iter().all(|&x| x == 0));
        if a.shape.len() == 2 && a.shape[0] == 0 && b.shape == [1, a.shape[1]] && zeros {
            any = true;
        } else {
            return false;
        }
    }
    any && ours.len() == builtin.len()
}
