//! How a padded axis's length follows from the Range's along the way: each Conv and
//! ConvTranspose along it changes it by ONNX's output-size rule. The same steps give the count
//! (at run time, in the graph) and the padded length (the capacity's, here).

use crate::emit::Emitter;

/// One change of length, `n -> out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `scale * n + offset` (a stride-1 Conv: `n + pads - k_eff + 1`; a ConvTranspose:
    /// `stride * (n - 1) + output_padding + k_eff - pads`).
    Affine { scale: i64, offset: i64 },
    /// `floor((n + offset) / stride) + 1` (a strided Conv, `offset = pads - k_eff`).
    Strided { offset: i64, stride: i64 },
}

/// The steps from the Range's length to one tensor's, normalised (consecutive affine steps
/// merged, the identity dropped) so that two tensors of equal lengths compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Steps(Vec<StepKey>);

/// [`Step`] as a hashable key (the same fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StepKey {
    strided: bool,
    a: i64,
    b: i64,
}

impl Steps {
    /// These steps, then `step`. `None` where merging would overflow.
    pub fn then(&self, step: Step) -> Option<Steps> {
        let mut keys = self.0.clone();
        let key = match step {
            Step::Affine { scale, offset } => StepKey {
                strided: false,
                a: scale,
                b: offset,
            },
            Step::Strided { offset, stride } => StepKey {
                strided: true,
                a: stride,
                b: offset,
            },
        };
        match keys.last_mut() {
            // (s2 * (s1 * n + o1) + o2) = s1 s2 n + (s2 o1 + o2)
            Some(last) if !last.strided && !key.strided => {
                last.a = last.a.checked_mul(key.a)?;
                last.b = key.a.checked_mul(last.b)?.checked_add(key.b)?;
            }
            _ => keys.push(key),
        }
        keys.retain(|k| k.strided || (k.a, k.b) != (1, 0));
        Some(Steps(keys))
    }

    /// The length after these steps from `n`; `None` on overflow or a length below 0.
    pub fn eval(&self, n: i64) -> Option<i64> {
        self.0.iter().try_fold(n, |n, k| {
            let out = if k.strided {
                n.checked_add(k.b)?.div_euclid(k.a).checked_add(1)?
            } else {
                k.a.checked_mul(n)?.checked_add(k.b)?
            };
            (out >= 0).then_some(out)
        })
    }

    /// The smallest length `n >= 1` of the Range whose length after these steps is at least
    /// `target` (the lengths grow with `n`); `None` past `limit`.
    pub fn least_for(&self, target: i64, limit: i64) -> Option<i64> {
        let reaches = |n: i64| self.eval(n).is_some_and(|len| len >= target);
        let mut high = 1i64;
        while !reaches(high) {
            high = high
                .checked_mul(2)
                .filter(|&h| h <= limit.saturating_mul(2))?;
        }
        let mut low = 0i64; // never reaches (or 0, below every n tried)
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if reaches(mid) {
                high = mid;
            } else {
                low = mid;
            }
        }
        (high <= limit).then_some(high)
    }

    /// Writes these steps on the int64 scalar `count` (clamped at 0 after each: a length).
    pub fn emit(&self, e: &mut Emitter, count: &str) -> String {
        let zero = e.scalar(0);
        self.0.iter().fold(count.to_string(), |n, k| {
            let (a, b) = (e.scalar(k.a), e.scalar(k.b));
            let out = if k.strided {
                // floor division of a possibly negative n + b: ONNX's Div truncates.
                let shifted = e.binary("Add", &n, &b);
                let quotient = floor_div(e, &shifted, &a);
                let one = e.scalar(1);
                e.binary("Add", &quotient, &one)
            } else {
                let scaled = e.binary("Mul", &n, &a);
                e.binary("Add", &scaled, &b)
            };
            at_least_zero(e, &out, &zero)
        })
    }
}

/// `max(x, 0)` for int64 `x`: Max before opset 12 takes no int64, so a Where of a comparison.
fn at_least_zero(e: &mut Emitter, x: &str, zero: &str) -> String {
    if e.opset() >= 12 {
        return e.binary("Max", x, zero);
    }
    let below = e.binary("Less", x, zero);
    e.where_(&below, zero, x)
}

/// `floor(x / d)` for int64 `x` and a positive constant `d`: ONNX's integer Mod takes the
/// divisor's sign, so `x - x mod d` is a multiple of `d` at or below `x`.
fn floor_div(e: &mut Emitter, x: &str, d: &str) -> String {
    let remainder = e.op("Mod", &[x, d], vec![crate::emit::int_attr("fmod", 0)]);
    let exact = e.binary("Sub", x, &remainder);
    e.binary("Div", &exact, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_steps_merge_and_the_identity_goes() {
        let same = Steps::default()
            .then(Step::Affine {
                scale: 1,
                offset: 0,
            })
            .unwrap();
        assert_eq!(same, Steps::default());
        // x8 (ConvTranspose k16 s8 p4+4), then x2 (k4 s2 p1+1): x16.
        let up = Steps::default()
            .then(Step::Affine {
                scale: 8,
                offset: 0,
            })
            .unwrap()
            .then(Step::Affine {
                scale: 2,
                offset: 0,
            })
            .unwrap();
        assert_eq!(up.eval(5), Some(80));
        assert_eq!(up.least_for(81, 1000), Some(6));
        assert_eq!(up.least_for(80, 1000), Some(5));
        assert_eq!(up.least_for(16_001, 1000), None);
    }

    #[test]
    fn a_strided_step_floors() {
        // Conv k3 s2 p1+1: floor((n + 2 - 3) / 2) + 1
        let down = Steps::default()
            .then(Step::Strided {
                offset: -1,
                stride: 2,
            })
            .unwrap();
        assert_eq!(
            (1..=6).map(|n| down.eval(n).unwrap()).collect::<Vec<_>>(),
            [1, 1, 2, 2, 3, 3]
        );
        assert_eq!(down.least_for(3, 100), Some(5));
        let overflowing = Steps::default()
            .then(Step::Affine {
                scale: i64::MAX,
                offset: 0,
            })
            .unwrap();
        assert_eq!(overflowing.eval(2), None);
    }
}
