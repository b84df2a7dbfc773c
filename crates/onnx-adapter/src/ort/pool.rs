//! Runs op-core's tasks on the session's intra-op thread pool (`KernelContext_ParallelFor`), so
//! that `intra_op_num_threads` bounds this kernel as it bounds ONNX Runtime's own.

use super::api::Api;
use super::status::catch_panic;
use nonzero_core::Executor;
use ort_sys::OrtKernelContext;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

/// Upper bound used to size the task list: ONNX Runtime does not expose its pool's size to
/// custom ops, and extra tasks on a smaller pool only cost a queue push each.
const ASSUMED_POOL_THREADS: usize = 16;

/// The pool of one compute call (`'a`).
pub struct OrtPool<'a> {
    api: Api,
    context: *const OrtKernelContext,
    call: PhantomData<&'a ()>,
}

// SAFETY: the kernel context outlives the compute call that owns this value, and
// KernelContext_ParallelFor is called with it from the compute thread only; pool threads never
// touch the context.
unsafe impl Sync for OrtPool<'_> {}

impl OrtPool<'_> {
    /// # Safety
    /// `context` must be the live kernel context of the current compute call, lasting for `'a`.
    pub(super) unsafe fn new<'a>(api: Api, context: *const OrtKernelContext) -> OrtPool<'a> {
        OrtPool {
            api,
            context,
            call: PhantomData,
        }
    }
}

struct Job<'a> {
    task: &'a (dyn Fn(usize) + Sync),
    panicked: AtomicBool,
}

/// Called by ONNX Runtime's pool threads. A panic must not unwind into C++: it is caught here
/// and raised again on the calling thread after the pool returns.
unsafe extern "C" fn run_task(job: *mut c_void, index: usize) {
    // SAFETY: `job` is the `Job` passed to KernelContext_ParallelFor below, alive for the call.
    let job = unsafe { &*(job as *const Job<'_>) };
    if catch_panic(|| (job.task)(index)).is_err() {
        job.panicked.store(true, Ordering::SeqCst);
    }
}

impl Executor for OrtPool<'_> {
    fn parallelism(&self) -> usize {
        ASSUMED_POOL_THREADS
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        let job = Job {
            task,
            panicked: AtomicBool::new(false),
        };
        // SAFETY: the context is the live kernel context; `job` outlives the call, which returns
        // only after every task has finished. num_batch 0 lets the pool schedule each task.
        let status = unsafe {
            (self.api.table().KernelContext_ParallelFor)(
                self.context,
                run_task,
                tasks,
                0,
                &job as *const Job<'_> as *mut c_void,
            )
        };
        if self.api.check(status).is_err() {
            // The pool refused the work before starting any of it: do it here instead.
            (0..tasks).for_each(task);
        }
        if job.panicked.load(Ordering::SeqCst) {
            panic!("a task panicked on an ONNX Runtime pool thread");
        }
    }
}
