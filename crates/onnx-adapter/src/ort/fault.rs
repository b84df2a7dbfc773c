//! Fault injection for the reliability tests (cargo feature `fault-injection`, never in a shipped
//! library): a node whose name equals [`INJECT_PANIC_ENV`]'s value panics on an ONNX Runtime pool
//! thread at the start of every compute, which must reach the caller as an error status while the
//! process keeps running. The compute trampoline (`op_table.rs`) is the one place it fires, so
//! every op is covered and no kernel carries a branch for it.

use super::pool::OrtPool;
use nonzero_core::Executor;

/// The variable naming the node to break; read once per node, when its kernel is created.
pub const INJECT_PANIC_ENV: &str = "NONZERO_ORT_INJECT_PANIC";

/// Whether the node `node_name` must panic in compute.
pub fn armed(node_name: &str) -> bool {
    std::env::var(INJECT_PANIC_ENV).is_ok_and(|n| !n.is_empty() && n == node_name)
}

/// Panics inside a task on `pool` (the panic crosses the pool thread and comes back here).
pub fn fire(pool: &OrtPool<'_>) {
    pool.run(2, &|task| {
        assert!(task == 0, "panic injected by NONZERO_ORT_INJECT_PANIC")
    });
}
