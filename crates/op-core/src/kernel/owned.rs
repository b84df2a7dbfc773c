//! Running one task per owned item (typically a disjoint `&mut` piece of an output) on an
//! [`Executor`], whose tasks only receive their index.

use super::Executor;
use std::sync::Mutex;

/// Calls `task(i, item_i)` once per item, possibly concurrently; one task runs inline.
pub(crate) fn run_owned<T: Send>(
    exec: &dyn Executor,
    items: Vec<T>,
    task: impl Fn(usize, T) + Sync,
) {
    match items.len() {
        0 => {}
        1 => {
            if let Some(item) = items.into_iter().next() {
                task(0, item);
            }
        }
        n => {
            let slots: Vec<Mutex<Option<T>>> =
                items.into_iter().map(|w| Mutex::new(Some(w))).collect();
            exec.run(n, &|i| {
                // Each slot is taken by exactly one task: the lock is never contended.
                let taken = slots[i].lock().map(|mut s| s.take()).ok().flatten();
                if let Some(item) = taken {
                    task(i, item);
                }
            });
        }
    }
}
