//! Fault injection for the reliability tests (cargo feature `fault-injection`, off in the shipped
//! library): a node whose name equals [`INJECT_PANIC_ENV`]'s value panics on an ONNX Runtime pool
//! thread during compute, which must reach the caller as an error status while the process keeps
//! running. Without the feature, nothing is read and [`armed`] is always false.

use nonzero_core::Executor;

/// The variable naming the node to break; read once per node, when its kernel is created.
#[cfg(feature = "fault-injection")]
pub const INJECT_PANIC_ENV: &str = "NONZERO_ORT_INJECT_PANIC";

/// Whether the node `node_name` must panic in compute.
pub fn armed(node_name: &str) -> bool {
    #[cfg(feature = "fault-injection")]
    return std::env::var(INJECT_PANIC_ENV).is_ok_and(|n| !n.is_empty() && n == node_name);
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = node_name;
        false
    }
}

/// Panics inside a task on `pool` (the panic crosses the pool thread and comes back here).
pub fn fire(pool: &dyn Executor) {
    pool.run(2, &|task| {
        assert!(task == 0, "panic injected by NONZERO_ORT_INJECT_PANIC")
    });
}
