//! `--max-memory`: the allocator counts the bytes the process holds, and the search's budget
//! reads the count (`scopecheck_explore::MemoryBound`), so that a search that would take the
//! machine's memory stops with an honest Unknown ("the memory bound was reached") instead of
//! being killed (a 10-thread store test took 4.1 GB before its bounds were asked inside a
//! leaf; a state space can still grow faster than any timeout).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes allocated and not yet freed, by every thread.
static HELD: AtomicU64 = AtomicU64::new(0);

/// An allocator that counts what `A` hands out and takes back.
pub struct Counting<A>(pub A);

// SAFETY: every call is passed on to `A` unchanged; the count is a side effect only.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            HELD.fetch_add(layout.size() as u64, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            HELD.fetch_add(layout.size() as u64, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size() as u64, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            HELD.fetch_add(new_size as u64, Ordering::Relaxed);
            HELD.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        }
        p
    }
}

/// The bytes the process holds on the heap now.
pub fn held() -> u64 {
    HELD.load(Ordering::Relaxed)
}

/// The default `--max-memory`: half the machine's memory (`MemTotal` in /proc/meminfo), so
/// that a check leaves the machine usable; none where that cannot be read.
pub fn default_limit() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 2)
}

/// A `--max-memory`: bytes, or a whole number with `K`, `M`, `G` or `T` (powers of 1024),
/// more than zero.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let bad = || format!("`{s}` is not a memory size (e.g. 512M, 4G, or bytes)");
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(bad()),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(format!("`{s}`: the memory bound must be more than zero"));
    }
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("4g"), Ok(4 << 30));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("0G").is_err());
        assert!(parse_bytes("4X").is_err());
        assert!(parse_bytes("G").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }

    #[test]
    fn the_count_follows_allocations() {
        // Other tests allocate and free at the same time: only what this one holds is sure.
        let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(64 << 20));
        assert!(held() >= 64 << 20, "{} bytes held", held());
        drop(v);
    }
}
