//! The padding of a tensor whose count follows from a compaction's by steps
//! ([`CountStep`]): the first L rows, each row made k, a TopK's run-time k.

use super::compact::{choose, Compacted};
use super::emit::Emitter;
use super::padding::CountStep;

impl Compacted {
    /// The padding of a tensor whose count follows from this one's by `steps` ([`CountStep`]):
    /// the first L rows only (`x[:L]`: the count is at most L, the padding cut there), or each
    /// row made k (`[C, k] -> [C * k]`: k times the count, each padding row k times).
    pub fn derived(&self, e: &mut Emitter, steps: Option<&Vec<CountStep>>) -> Compacted {
        let mut out = self.clone();
        for step in steps.into_iter().flatten() {
            out = match step {
                &CountStep::Limit(limit) if limit < out.capacity => {
                    let cap = e.scalar(limit);
                    let fits = e.binary("Less", &out.count, &cap);
                    Compacted {
                        count: choose(e, &fits, &out.count, &cap),
                        padding: e.slice1(&out.padding, 0, limit),
                        flat: e.slice1(&out.flat, 0, limit),
                        numel: out.numel,
                        capacity: limit,
                    }
                }
                CountStep::Limit(_) => out,
                &CountStep::Scale(k) => {
                    let times = e.scalar(k);
                    let repeat = |e: &mut Emitter, x: &str| {
                        let column = e.unsqueeze(x, &[1]);
                        let shape = e.ints(&[out.capacity, k]);
                        let spread = e.op("Expand", &[&column, &shape], vec![]);
                        e.reshape(&spread, &[out.capacity.saturating_mul(k)])
                    };
                    Compacted {
                        count: e.binary("Mul", &out.count, &times),
                        padding: repeat(e, &out.padding),
                        flat: repeat(e, &out.flat),
                        numel: out.numel,
                        capacity: out.capacity.saturating_mul(k),
                    }
                }
                CountStep::TopK(k, bound) => {
                    let rows = bound.map_or(out.capacity, |b| b.min(out.capacity));
                    let scalar = e.ints(&[]);
                    let k = e.op("Reshape", &[k, &scalar], vec![]);
                    let fits = e.binary("Less", &k, &out.count);
                    let count = choose(e, &fits, &k, &out.count);
                    let positions = e.range(rows);
                    let valid = e.binary("Less", &positions, &count);
                    Compacted {
                        count,
                        padding: e.op("Not", &[&valid], vec![]),
                        flat: e.slice1(&out.flat, 0, rows),
                        numel: out.numel,
                        capacity: rows,
                    }
                }
            };
        }
        out
    }
}
