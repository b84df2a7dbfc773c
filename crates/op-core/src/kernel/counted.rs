//! The chunk plan and the two passes over it.

use super::walk::{Block, OneRow, Walk};
use super::{Executor, PARALLEL_THRESHOLD};
use crate::source::ZeroTest;
use crate::{Error, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Smallest chunk given to one task.
const MIN_TASK_ELEMENTS: usize = 1 << 16;
/// Tasks per unit of parallelism, so that uneven densities still balance.
const TASKS_PER_THREAD: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Chunk {
    start: usize,
    end: usize,
    count: usize,
}

/// How the flat index range is cut. Below [`PARALLEL_THRESHOLD`] (or on one thread) it is one
/// chunk, held inline: a small input allocates nothing on its way through the kernel.
#[derive(Debug)]
enum Plan {
    Single(Chunk),
    Split(Vec<Chunk>),
}

impl Plan {
    fn chunks(&self) -> &[Chunk] {
        match self {
            Plan::Single(chunk) => std::slice::from_ref(chunk),
            Plan::Split(chunks) => chunks,
        }
    }
}

/// The result of the first pass: how many non-zeros each chunk of the input holds.
#[derive(Debug)]
pub struct Counted {
    walk: Walk,
    plan: Plan,
    nnz: usize,
}

/// Number of tasks for `numel` elements on `exec`.
pub(crate) fn task_count(numel: usize, exec: &dyn Executor) -> usize {
    if numel < PARALLEL_THRESHOLD || exec.parallelism() <= 1 {
        return 1;
    }
    (exec.parallelism() * TASKS_PER_THREAD)
        .min(numel / MIN_TASK_ELEMENTS)
        .max(1)
}

impl Counted {
    /// First pass: validates that `src` covers `layout` and counts the non-zeros.
    #[inline]
    pub fn count<S: ZeroTest + ?Sized>(
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
    ) -> Result<Counted, Error> {
        Counted::count_chunks(src, layout, exec, task_count(layout.numel(), exec))
    }

    /// First pass split into exactly `tasks` chunks (at most one per element): tests and fuzzers
    /// put chunk boundaries anywhere with it. Not supported API (feature `test-support`).
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn count_in_tasks<S: ZeroTest + ?Sized>(
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
        tasks: usize,
    ) -> Result<Counted, Error> {
        Counted::count_chunks(src, layout, exec, tasks)
    }

    /// First pass over `tasks` chunks (clamped to one per element, at least one).
    ///
    /// The split case is out of line ([`Counted::count_split`]), so that what a small input runs
    /// stays small enough to inline.
    #[inline]
    pub(crate) fn count_chunks<S: ZeroTest + ?Sized>(
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
        let tasks = tasks.clamp(1, numel.max(1));
        if tasks == 1 {
            let count = walk.count(src, 0, numel);
            return Ok(Counted {
                walk,
                plan: Plan::Single(Chunk {
                    start: 0,
                    end: numel,
                    count,
                }),
                nnz: count,
            });
        }
        Ok(Counted::count_split(src, walk, numel, exec, tasks))
    }

    /// The first pass over `tasks > 1` chunks on `exec`.
    fn count_split<S: ZeroTest + ?Sized>(
        src: &S,
        walk: Walk,
        numel: usize,
        exec: &dyn Executor,
        tasks: usize,
    ) -> Counted {
        let bounds = |i: usize| (numel as u128 * i as u128 / tasks as u128) as usize;
        let counts: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
        exec.run(tasks, &|i: usize| {
            let n = walk.count(src, bounds(i), bounds(i + 1));
            counts[i].store(n, Ordering::Relaxed);
        });
        let chunks: Vec<Chunk> = counts
            .iter()
            .enumerate()
            .map(|(i, c)| Chunk {
                start: bounds(i),
                end: bounds(i + 1),
                count: c.load(Ordering::Relaxed),
            })
            .collect();
        Counted {
            nnz: chunks.iter().map(|c| c.count).sum(),
            walk,
            plan: Plan::Split(chunks),
        }
    }

    /// Number of non-zero elements.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Rank of the input.
    pub fn rank(&self) -> usize {
        self.walk.rank()
    }

    /// The opening check of every second pass: `out` holds exactly `rank * nnz` elements.
    pub(crate) fn check_output<T>(&self, out: &[T]) -> Result<(), Error> {
        let expected = self.rank() * self.nnz;
        if out.len() != expected {
            return Err(Error::OutputLengthMismatch {
                expected,
                actual: out.len(),
            });
        }
        Ok(())
    }

    /// True when the whole input is one chunk on the calling thread.
    pub(crate) fn is_single(&self) -> bool {
        matches!(self.plan, Plan::Single(_))
    }

    /// The whole input as one run on the calling thread, when it is one chunk and at most one
    /// dimension has a size other than 1: the second pass then compacts that run straight into
    /// the output, with no scratch block and no walk.
    pub(crate) fn one_row(&self) -> Option<OneRow> {
        match &self.plan {
            Plan::Single(chunk) => self.walk.one_row(chunk.start, chunk.end),
            Plan::Split(_) => None,
        }
    }

    /// Compacts `row` into `out`, which holds exactly this input's non-zero count.
    pub(crate) fn compact_row<S: ZeroTest + ?Sized>(
        &self,
        src: &S,
        row: OneRow,
        out: &mut [i64],
    ) -> Result<(), Error> {
        debug_assert_eq!(out.len(), self.nnz);
        // A coordinate is below the element count, so it fits i64 unchanged: the output row is
        // written as the usize indices compact_run produces.
        const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<i64>());
        let slots: &mut [usize] = bytemuck::cast_slice_mut(out);
        let found = src.compact_run(row.offset, row.len, row.stride, row.first_index, slots);
        if found != self.nnz {
            return Err(Error::SourceChanged {
                counted: self.nnz,
                found,
            });
        }
        Ok(())
    }

    /// Second pass: every chunk visits its non-zeros and hands them to its own writer.
    /// `writers` yields one writer per chunk, in order (the writer of the chunk's piece of
    /// [`Counted::split_output`]); the pieces are disjoint, so the writers can own disjoint
    /// `&mut` slices. A single chunk takes its writer without collecting anything.
    pub(crate) fn write<S, W>(
        &self,
        src: &S,
        exec: &dyn Executor,
        mut writers: impl Iterator<Item = W>,
    ) where
        S: ZeroTest + ?Sized,
        W: FnMut(Block<'_>) + Send,
    {
        let chunks = match &self.plan {
            Plan::Single(chunk) => {
                if let (true, Some(writer)) = (chunk.count > 0, writers.next()) {
                    self.walk.visit(src, chunk.start, chunk.end, writer);
                }
                return;
            }
            Plan::Split(chunks) => chunks,
        };
        let slots: Vec<Mutex<Option<W>>> = writers.map(|w| Mutex::new(Some(w))).collect();
        debug_assert_eq!(slots.len(), chunks.len());
        let write_chunk = |i: usize| {
            let chunk = chunks[i];
            if chunk.count == 0 {
                return;
            }
            // Each slot is taken by exactly one task: the lock is never contended.
            let taken = slots[i].lock().map(|mut s| s.take()).ok().flatten();
            if let Some(mut writer) = taken {
                self.walk.visit(src, chunk.start, chunk.end, &mut writer);
            }
        };
        exec.run(chunks.len(), &write_chunk);
    }

    /// Number of chunks (of writers [`Counted::write`] takes).
    pub(crate) fn chunk_count(&self) -> usize {
        self.plan.chunks().len()
    }

    /// Input ranges `start..end` (flat element indices) of the chunks, in order.
    pub(crate) fn spans(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.plan.chunks().iter().map(|c| c.start..c.end)
    }

    /// As [`Counted::spans`], each with the number of non-zeros before it.
    pub(crate) fn spans_with_ranks(
        &self,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, usize)> + '_ {
        let mut before = 0;
        self.plan.chunks().iter().map(move |c| {
            let first = before;
            before += c.count;
            (c.start..c.end, first)
        })
    }

    /// Cuts `out` into one piece per chunk, in order: each chunk's piece holds `width` slots per
    /// non-zero of the chunk, so that its writer owns them. `out` holds at least
    /// `width * nnz` slots (the rest is left out).
    pub(crate) fn split_output<'o, T>(
        &self,
        out: &'o mut [T],
        width: usize,
    ) -> impl Iterator<Item = &'o mut [T]> + use<'_, 'o, T> {
        let mut rest = out;
        self.plan.chunks().iter().map(move |chunk| {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(chunk.count * width);
            rest = tail;
            mine
        })
    }
}
