//! The two-pass CPU kernel: count non-zeros per chunk in parallel, then let each chunk write its
//! coordinates at its own offset. Scratch memory is one small block per task plus one counter per
//! chunk; nothing grows with the input.

mod executor;
mod owned;
mod walk;

pub use executor::{Executor, Rayon, Sequential};
pub(crate) use owned::run_owned;
pub(crate) use walk::Block;
pub use walk::BLOCK;

use crate::source::ZeroTest;
use crate::{Error, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use walk::Walk;

/// Inputs with fewer elements run on the calling thread: waking threads costs more than it saves.
pub const PARALLEL_THRESHOLD: usize = 1 << 17;
/// Smallest chunk given to one task.
const MIN_TASK_ELEMENTS: usize = 1 << 16;
/// Tasks per unit of parallelism, so that uneven densities still balance.
const TASKS_PER_THREAD: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Chunk {
    start: usize,
    end: usize,
    /// Position of this chunk's first non-zero in the output.
    first: usize,
    count: usize,
}

/// The result of the first pass: how many non-zeros each chunk of the input holds.
#[derive(Debug)]
pub struct Counted {
    walk: Walk,
    chunks: Vec<Chunk>,
    nnz: usize,
}

/// Number of tasks for `numel` elements on `exec`.
pub fn task_count(numel: usize, exec: &dyn Executor) -> usize {
    if numel < PARALLEL_THRESHOLD || exec.parallelism() <= 1 {
        return 1;
    }
    (exec.parallelism() * TASKS_PER_THREAD)
        .min(numel / MIN_TASK_ELEMENTS)
        .max(1)
}

impl Counted {
    /// First pass: validates that `src` covers `layout` and counts the non-zeros.
    pub fn count<S: ZeroTest + ?Sized>(
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
    ) -> Result<Counted, Error> {
        Counted::count_in_tasks(src, layout, exec, task_count(layout.numel(), exec))
    }

    /// First pass split into exactly `tasks` chunks (at most one per element). [`Counted::count`]
    /// picks the number from the input size; tests use this to put chunk boundaries anywhere.
    pub fn count_in_tasks<S: ZeroTest + ?Sized>(
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
        tasks: usize,
    ) -> Result<Counted, Error> {
        let needed = layout.required_len()?;
        if src.len() < needed {
            return Err(Error::DataTooShort {
                needed,
                actual: src.len(),
            });
        }
        let walk = Walk::new(layout);
        let numel = layout.numel();
        let tasks = tasks.clamp(1, numel.max(1)) * (numel > 0) as usize;
        let bounds = |i: usize| (numel as u128 * i as u128 / tasks as u128) as usize;
        let counts: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
        let count_chunk = |i: usize| {
            let n = walk.count(src, bounds(i), bounds(i + 1));
            counts[i].store(n, Ordering::Relaxed);
        };
        if tasks == 1 {
            count_chunk(0);
        } else if tasks > 1 {
            exec.run(tasks, &count_chunk);
        }
        let mut first = 0;
        let chunks = counts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let count = c.load(Ordering::Relaxed);
                let chunk = Chunk {
                    start: bounds(i),
                    end: bounds(i + 1),
                    first,
                    count,
                };
                first += count;
                chunk
            })
            .collect();
        Ok(Counted {
            walk,
            chunks,
            nnz: first,
        })
    }

    /// Number of non-zero elements.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Rank of the input.
    pub fn rank(&self) -> usize {
        self.walk.rank()
    }

    /// Second pass: every chunk visits its non-zeros and hands them to its own writer.
    /// `split(first, count)` builds the writer of the output range `first..first + count`; the
    /// ranges are disjoint, so the writers can own disjoint `&mut` slices.
    pub(crate) fn write<S, W>(&self, src: &S, exec: &dyn Executor, writers: Vec<W>)
    where
        S: ZeroTest + ?Sized,
        W: FnMut(Block<'_>) + Send,
    {
        debug_assert_eq!(writers.len(), self.chunks.len());
        let slots: Vec<Mutex<Option<W>>> =
            writers.into_iter().map(|w| Mutex::new(Some(w))).collect();
        let write_chunk = |i: usize| {
            let chunk = self.chunks[i];
            if chunk.count == 0 {
                return;
            }
            // Each slot is taken by exactly one task: the lock is never contended.
            let taken = slots[i].lock().map(|mut s| s.take()).ok().flatten();
            if let Some(mut writer) = taken {
                self.walk.visit(src, chunk.start, chunk.end, &mut writer);
            }
        };
        match self.chunks.len() {
            0 => {}
            1 => write_chunk(0),
            n => exec.run(n, &write_chunk),
        }
    }

    /// Input ranges `start..end` (flat element indices) and output ranges `(first, count)` of the
    /// chunks, in order.
    pub(crate) fn spans(
        &self,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, usize, usize)> + '_ {
        self.chunks
            .iter()
            .map(|c| (c.start..c.end, c.first, c.count))
    }

    /// Output ranges `(first, count)` of the chunks, in order.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.chunks.iter().map(|c| (c.first, c.count))
    }
}
