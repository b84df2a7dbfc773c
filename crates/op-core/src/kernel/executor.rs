//! Where the kernel's parallel tasks run: inline, on rayon's pool, or on a host's pool (ONNX
//! Runtime's intra-op pool, implemented in the adapter crate).

/// Runs `tasks` independent tasks and returns when all have finished.
pub trait Executor: Sync {
    /// How many tasks can usefully run at once.
    fn parallelism(&self) -> usize;

    /// Calls `task(i)` once for each `i` in `0..tasks`, possibly concurrently.
    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync));
}

/// Runs every task on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sequential;

impl Executor for Sequential {
    fn parallelism(&self) -> usize {
        1
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..tasks).for_each(task);
    }
}

/// Runs tasks on rayon's current pool (the global one unless called inside `ThreadPool::install`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Rayon;

impl Executor for Rayon {
    fn parallelism(&self) -> usize {
        rayon::current_num_threads()
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        use rayon::prelude::*;
        (0..tasks).into_par_iter().for_each(task);
    }
}
