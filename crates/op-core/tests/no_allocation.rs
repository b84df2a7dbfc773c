//! Below the parallel threshold the kernel allocates nothing: counting, writing the ONNX output
//! and building the layout (rank up to 8) run without touching the heap. A counting global
//! allocator counts the allocations of the thread that measures and of rayon's workers (where
//! the Rayon executor would send work), not those of the test harness or of the other test,
//! which run at the same time on threads of their own. The two tests measure one at a time.

use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::{Counted, Layout, Rayon, Sequential};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

struct Counting;

/// Held by each test: the counter is shared, so two measurements must not overlap.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set while this thread runs the closure of [`allocations`]. Const-initialised and without
    /// a destructor, so reading it allocates nothing and works at any point of a thread's life.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

/// Whether an allocation on this thread counts: the measuring thread's, and rayon's workers'.
fn counts() -> bool {
    MEASURING.get() || rayon::current_thread_index().is_some()
}

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        if counts() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        if counts() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `dealloc`; the caller guarantees `new_size` is valid.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` (and by rayon's workers meanwhile).
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    MEASURING.set(true);
    f();
    MEASURING.set(false);
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

fn run(data: &[f32], sizes: &[usize], strides: Option<&[usize]>, out: &mut [i64]) -> usize {
    let layout = match strides {
        Some(strides) => Layout::strided(sizes, strides).unwrap(),
        None => Layout::packed(sizes).unwrap(),
    };
    let counted = Counted::count(data, &layout, &Sequential).unwrap();
    let nnz = counted.nnz();
    let len = counted.rank() * nnz;
    counted
        .write_onnx(data, &mut out[..len], &Sequential)
        .unwrap();
    // Rayon's executor takes the same inline path below the threshold.
    let counted = Counted::count(data, &layout, &Rayon).unwrap();
    counted.write_onnx(data, &mut out[..len], &Rayon).unwrap();
    nnz
}

#[test]
fn the_sequential_path_does_not_allocate() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Every input is built before counting starts.
    let n = PARALLEL_THRESHOLD - 1;
    let data: Vec<f32> = (0..n).map(|i| (i % 3 == 0) as u8 as f32).collect();
    let expected_nnz = data.iter().filter(|&&x| x != 0.0).count();
    let mut out = vec![0i64; 8 * n];
    // Warm up: rayon's pool and the instruction-set detection allocate once, on first use.
    run(&data, &[n], None, &mut out);

    /// Sizes, strides (`None`: packed) and element count.
    type Case<'a> = (&'a [usize], Option<&'a [usize]>, usize);
    let cases: [Case; 6] = [
        (&[1], None, 1),
        (&[13], None, 13),
        (&[1 << 10], None, 1 << 10),
        (&[n], None, n),
        (&[2, 3, 1, 4, 5, 1, 2, 3], None, 720),
        // A transposed view (not packed): walked row by row.
        (&[16, 32], Some(&[1, 16]), 512),
    ];
    for (sizes, strides, numel) in cases {
        let data = &data[..numel];
        let mut nnz = 0;
        let made = allocations(|| nnz = run(data, sizes, strides, &mut out));
        assert_eq!(made, 0, "{sizes:?} strides {strides:?}: {made} allocations");
        assert_eq!(nnz, data.iter().filter(|&&x| x != 0.0).count());
    }
    let mut nnz = 0;
    assert_eq!(allocations(|| nnz = run(&data, &[n], None, &mut out)), 0);
    assert_eq!(nnz, expected_nnz);
    // The check itself can fail: a rank-9 layout no longer fits inline and does allocate.
    let nine = [1usize; 9];
    assert!(
        allocations(|| {
            run(&data[..1], &nine, None, &mut out);
        }) > 0
    );
}

#[test]
fn the_one_pass_path_does_not_allocate() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data: Vec<f32> = (0..110).map(|i| (i % 3 == 0) as u8 as f32).collect();
    let src = nonzero_core::NumericSlice::new(&data);
    let mut out = vec![0i64; 3 * 110];
    let mut done = false;
    let made = allocations(|| {
        done = src
            .nonzero_one_pass(&[1, 1, 110], |[rank, nnz]| {
                Ok::<_, ()>(&mut out[..rank * nnz])
            })
            .unwrap();
    });
    assert!(done, "a [1, 1, 110] mask is the one-pass path's");
    assert_eq!(made, 0, "{made} allocations");
    assert_eq!(
        &out[74..74 + 37],
        &(0..110).step_by(3).collect::<Vec<i64>>()[..]
    );
}
