//! Memory the runner's forks do not copy: one region, mapped on first use and marked
//! `MADV_WIPEONFORK` (a child gets it empty), that `talc` serves to whatever is allocated
//! inside `unforked::hold` (the parsed matrix and the compiled canary search, most of the
//! runner's memory); every other allocation is the system allocator's.
//!
//! Every case forks the runner to start the candidate, and a fork costs in proportion to the
//! memory mapped: the kernel copies each page's entry, every page the parent writes afterwards
//! takes a copy-on-write fault, and the child's exec tears the copy down again. Natively that
//! was about 1.5 ms of a 4 ms case with the 9 MB the matrix and the canary search hold. The
//! child between fork and exec touches only what `Command` prepared before the fork (argv,
//! envp, the `pre_exec` closure), all of it outside the region, so it never reads the pages
//! the fork left empty. `MADV_DONTFORK` is the fallback for kernels before 4.14. qemu-user
//! accepts both and honours neither (its fork copies the region like any memory), so the
//! advice is trusted only once a forked child has been seen to find the region empty; where it
//! is not, the region is given back and everything is allocated as before.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use talc::{ErrOnOom, Span, Talc};

/// Address space reserved for the region (`MAP_NORESERVE`: only pages used are memory). The
/// matrix and the canary search need a few tens of megabytes at their peak; anything beyond
/// the region is served by the system allocator instead.
const REGION_BYTES: usize = 256 << 20;

/// The region's first byte (0 until mapped) and its end.
static REGION_START: AtomicUsize = AtomicUsize::new(0);
static REGION_END: AtomicUsize = AtomicUsize::new(0);
/// Set once mapping the region failed or its advice was not honoured: never tried again (the
/// check costs a fork).
static REGION_REFUSED: AtomicBool = AtomicBool::new(false);
static REGION: Mutex<Talc<ErrOnOom>> = Mutex::new(Talc::new(ErrOnOom));

thread_local! {
    /// Whether this thread's allocations go to the region (inside `hold`).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// The runner's global allocator: the region inside `hold`, the system's everywhere else;
/// a block is freed or resized by whichever allocator its address belongs to.
pub struct RunnerAllocator;

/// Runs `build` with this thread's allocations in the region, so that what it builds (and
/// keeps) is not copied by the forks that follow. If the region cannot be mapped, `build`
/// runs on the system allocator, as it would without this module.
pub fn hold<T>(build: impl FnOnce() -> T) -> T {
    /// Puts the thread's previous setting back however `build` ends (an unwinding panic
    /// included), so nothing after it lands in the region by mistake.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let was = self.0;
            let _ = HOLDING.try_with(|h| h.set(was));
        }
    }
    let mapped = map_region();
    let _restore = Restore(HOLDING.with(|h| h.replace(mapped)));
    build()
}

/// Whether `ptr` lies in the region (false before it is mapped).
pub fn in_region(ptr: *const u8) -> bool {
    let start = REGION_START.load(Ordering::Acquire);
    let at = ptr as usize;
    start != 0 && at >= start && at < REGION_END.load(Ordering::Acquire)
}

/// Maps and claims the region once; false if that failed (the first time, or before).
fn map_region() -> bool {
    if REGION_START.load(Ordering::Acquire) != 0 {
        return true;
    }
    let mut talc = REGION.lock().unwrap_or_else(|e| e.into_inner());
    if REGION_START.load(Ordering::Acquire) != 0 {
        return true;
    }
    if REGION_REFUSED.load(Ordering::Acquire) || !establish(&mut talc) {
        REGION_REFUSED.store(true, Ordering::Release);
        return false;
    }
    true
}

/// Maps the region, checks its advice and hands it to `talc`; false (nothing left mapped
/// that anyone uses) when any step fails.
fn establish(talc: &mut Talc<ErrOnOom>) -> bool {
    // SAFETY: a fresh private anonymous mapping nothing else refers to; advised before use.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            REGION_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return false;
    }
    // SAFETY: advice on the mapping just made. Without it the region would be an ordinary
    // mapping, which defeats its purpose: it is given back.
    let advised = [libc::MADV_WIPEONFORK, libc::MADV_DONTFORK]
        .into_iter()
        .any(|advice| unsafe { libc::madvise(base, REGION_BYTES, advice) } == 0);
    if !advised || !a_fork_leaves_it_empty(base.cast()) {
        // SAFETY: unmapping the mapping just made, used by no one.
        unsafe { libc::munmap(base, REGION_BYTES) };
        return false;
    }
    // SAFETY: the mapping is valid for reads and writes, used by no one else, and stays
    // mapped for the life of the process.
    if unsafe { talc.claim(Span::from_base_size(base.cast(), REGION_BYTES)) }.is_err() {
        return false;
    }
    REGION_END.store(base as usize + REGION_BYTES, Ordering::Release);
    REGION_START.store(base as usize, Ordering::Release);
    true
}

/// Whether a forked child finds the page at `page` empty (wiped: it reads zero where this
/// process wrote one) or not mapped at all: what the advice promises, checked once, since
/// qemu-user accepts the advice and copies the page anyway. The child only calls `mincore`,
/// reads the page and calls `_exit`.
fn a_fork_leaves_it_empty(page: *mut u8) -> bool {
    // SAFETY: `page` is the first byte of a private anonymous mapping of ours, not in use.
    unsafe { std::ptr::write_volatile(page, 1) };
    // SAFETY: the child calls only async-signal-safe functions and touches only `page`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return false;
    }
    if pid == 0 {
        let mut resident = 0u8;
        // SAFETY: mincore on one page; fails with ENOMEM where nothing is mapped.
        let r = unsafe { libc::mincore(page.cast(), 1, &mut resident) };
        let unmapped =
            r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM);
        // SAFETY: the page is mapped (mincore said so) and a u8 read needs no alignment.
        let wiped = r == 0 && unsafe { std::ptr::read_volatile(page) } == 0;
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(if unmapped || wiped { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for the child just forked, retried if a signal interrupts it.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
    // SAFETY: the page is ours; the allocator's metadata will be written over it.
    unsafe { std::ptr::write_volatile(page, 0) };
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn holding() -> bool {
    HOLDING.try_with(Cell::get).unwrap_or(false)
}

/// A block of the region, or None when it is full.
///
/// # Safety
/// `layout` has a non-zero size (as `GlobalAlloc` guarantees).
unsafe fn region_alloc(layout: Layout) -> Option<*mut u8> {
    let mut talc = REGION.lock().unwrap_or_else(|e| e.into_inner());
    talc.malloc(layout).ok().map(NonNull::as_ptr)
}

unsafe impl GlobalAlloc for RunnerAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if holding() {
            if let Some(ptr) = region_alloc(layout) {
                return ptr;
            }
        }
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_region(ptr) {
            let mut talc = REGION.lock().unwrap_or_else(|e| e.into_inner());
            talc.free(NonNull::new_unchecked(ptr), layout);
        } else {
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if in_region(ptr) {
            let mut talc = REGION.lock().unwrap_or_else(|e| e.into_inner());
            let block = NonNull::new_unchecked(ptr);
            if new_size <= layout.size() {
                talc.shrink(block, layout, new_size);
                return ptr;
            }
            if let Ok(grown) = talc.grow(block, layout, new_size) {
                return grown.as_ptr();
            }
            drop(talc);
            // The region is full: the block moves to the system allocator.
            let moved = System.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !moved.is_null() {
                moved.copy_from_nonoverlapping(ptr, layout.size());
                self.dealloc(ptr, layout);
            }
            return moved;
        }
        if holding() {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            if let Some(moved) = region_alloc(new_layout) {
                moved.copy_from_nonoverlapping(ptr, layout.size().min(new_size));
                System.dealloc(ptr, layout);
                return moved;
            }
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[cfg(test)]
#[global_allocator]
static TESTED: RunnerAllocator = RunnerAllocator;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_built_inside_hold_lives_in_the_region_and_nothing_else_does() {
        let outside = vec![1u8; 4096];
        let (inside, text) = hold(|| (vec![2u8; 4096], "kept".repeat(1000)));
        assert!(in_region(inside.as_ptr()), "allocated inside hold");
        assert!(in_region(text.as_ptr()));
        assert!(!in_region(outside.as_ptr()), "allocated outside hold");
        // Grown outside hold, a region block stays in the region (or moves out whole) and
        // keeps its contents; a system block grown inside hold moves in.
        let mut grown = inside;
        grown.extend(std::iter::repeat_n(3u8, 1 << 20));
        assert_eq!(&grown[..4096], &[2u8; 4096][..]);
        assert_eq!(grown[4096 + 12345], 3);
        let mut moved_in = outside;
        hold(|| moved_in.extend(std::iter::repeat_n(4u8, 1 << 16)));
        assert!(in_region(moved_in.as_ptr()));
        assert_eq!(&moved_in[..4096], &[1u8; 4096][..]);
        // Freed blocks are reused: a thousand rounds of a megabyte never fill the region.
        for _ in 0..1000 {
            let block = hold(|| vec![5u8; 1 << 20]);
            assert!(in_region(block.as_ptr()));
        }
    }

    /// A private anonymous page, advised with `advice` unless it is None.
    fn page(advice: Option<libc::c_int>) -> *mut u8 {
        // SAFETY: a fresh mapping nothing else uses (left mapped: a page per test).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        if let Some(a) = advice {
            assert_eq!(unsafe { libc::madvise(p, 4096, a) }, 0);
        }
        p.cast()
    }

    #[test]
    fn the_advice_is_trusted_only_where_a_forked_child_finds_the_page_empty() {
        // What qemu-user does with the advice (accepts it, copies the page anyway) looks, to
        // the check, like no advice at all: the child finds the parent's byte.
        assert!(!a_fork_leaves_it_empty(page(None)));
        assert!(a_fork_leaves_it_empty(page(Some(libc::MADV_WIPEONFORK))));
        assert!(a_fork_leaves_it_empty(page(Some(libc::MADV_DONTFORK))));
    }

    #[test]
    fn a_panic_inside_hold_leaves_later_allocations_outside_the_region() {
        let caught = std::panic::catch_unwind(|| hold(|| panic!("build failed")));
        assert!(caught.is_err());
        let after = vec![9u8; 4096];
        assert!(!in_region(after.as_ptr()), "allocated after the panic");
    }

    #[test]
    fn a_fork_does_not_copy_the_region_and_the_child_still_execs() {
        let held = hold(|| vec![7u8; 1 << 20]);
        assert!(in_region(held.as_ptr()));
        let at = held.as_ptr() as usize + 100;
        let page = at & !4095;
        // SAFETY: the child only calls mincore, reads the region and calls _exit
        // (async-signal-safe), touching nothing of the parent's heap.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            // Wiped (it reads zero where the parent has 7) or, with MADV_DONTFORK, not mapped
            // at all (mincore fails with ENOMEM): either way the parent's bytes were not copied.
            let mut resident = 0u8;
            let r = unsafe { libc::mincore(page as *mut libc::c_void, 4096, &mut resident) };
            let unmapped =
                r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM);
            let wiped = r == 0 && unsafe { std::ptr::read_volatile(at as *const u8) } == 0;
            unsafe { libc::_exit(if unmapped || wiped { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "child status {status}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "the forked child still had the region's bytes"
        );
        // In the parent the region is intact.
        assert!(held.iter().all(|&b| b == 7));
        // And a program started the usual way (fork, then exec) runs and reports back.
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", "echo started"])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"started\n");
    }
}
