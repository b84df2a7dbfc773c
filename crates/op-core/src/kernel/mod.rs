//! The two-pass CPU kernel: count non-zeros per chunk in parallel, then let each chunk write its
//! coordinates at its own offset. Scratch memory is one small block per task plus one counter per
//! chunk; nothing grows with the input.

// Their public items are re-exported at the crate root, their one public path.
#[cfg(target_arch = "x86_64")]
mod avx512;
pub(crate) mod counted;
pub(crate) mod executor;
mod one_pass;
mod owned;
mod portable;
pub(crate) mod simd;
mod walk;

pub(crate) use counted::{task_count, Counted};
pub(crate) use executor::{Executor, Rayon};
pub(crate) use one_pass::{one_pass, Order};
pub use one_pass::{one_pass_dim, ONE_PASS_MAX};
pub(crate) use owned::run_owned;
pub(crate) use walk::Block;

/// Inputs with fewer elements run on the calling thread: waking threads costs more than it saves.
pub const PARALLEL_THRESHOLD: usize = 1 << 17;
