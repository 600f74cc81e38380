//! Host participants: the `@host` threads of a test run as real CPU threads, concurrently with
//! the kernel, on the same pinned host and managed memory the device roles use.
//!
//! - [`run_role`] interprets one thread's IR on the memory of one instance, each register held
//!   as the IR's value: loads, stores and RMWs are `std::sync::atomic` operations on the
//!   location's word (its 64-bit cell for a 64-bit location) with the nearest Rust ordering,
//!   every fence is `fence(SeqCst)`, and every
//!   backward branch counts against the same iteration cap as on the GPU (a role past it stops
//!   with [`STATUS_CUT`]), so no host spin can hang either;
//! - [`Pinned`] and [`Managed`] own the driver allocations (`cuMemHostAlloc(DEVICEMAP)` with
//!   `cuMemHostGetDevicePointer`, and `cuMemAllocManaged`);
//! - [`HostPool`] keeps `workers` CPU threads per host role. For every launch each worker waits
//!   (bounded) for the kernel to announce the launch in the pacing word, then runs its role for
//!   each instance of its share of the launch, in instance order, so the workers of different
//!   roles meet on the same instances at about the same time, and writes the role's registers and
//!   status into the instance's record exactly as a device role does. The runner launches the
//!   collect kernel only once every worker is done with the launch.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::{result, sys};
use scopecheck_ir::{
    Address, Arithmetic, BinOp, BranchCond, InstrKind, IntType, LocId, Operand, Order, Program,
    RmwKind, RmwOp, Thread, ThreadId, Value,
};

use crate::codegen::{STATUS_CUT, STATUS_DONE};
use crate::driver::driver_err;
use crate::layout::{Buffer, Layout};
use crate::RunError;

/// Status word of a host role that computed a non-zero address index (`[x+r]` with `r != 0`):
/// it would leave its location, so the role stops. The collect kernel counts the instance among
/// those cut, as it does every status other than [`STATUS_DONE`].
pub const STATUS_BAD_ADDRESS: u32 = 3;
/// Default CPU threads per host role.
pub const DEFAULT_HOST_WORKERS: u32 = 4;
/// Most CPU threads per host role.
pub const MAX_HOST_WORKERS: u32 = 64;
/// Most attempts of the compare-and-swap loop that implements the RMWs `std::sync::atomic` has
/// no single instruction for (`inc`, `dec`, `min` and `max`); a role past it is cut.
pub const MAX_CAS_ATTEMPTS: u32 = 1 << 16;
/// How long a host role waits for a launch-order predecessor of its instance (a kernel thread
/// it runs after) before the instance counts as cut; the device's bound is
/// [`crate::codegen::ORDER_WAIT_NS`].
pub const ORDER_WAIT: Duration = Duration::from_millis(200);
/// Spins between two looks at the clock while a worker waits for the pacing word.
const SPINS_PER_CLOCK_READ: u32 = 256;
/// The pacing word's value before the first launch (launch numbers count from 0).
pub const GO_IDLE: u32 = u32::MAX;

/// Where a role's locations are, for one instance.
pub trait HostMemory {
    /// The word holding `loc`, or None when the location is not reachable from the host.
    fn word(&self, loc: LocId) -> Option<&AtomicU32>;
    /// The 64-bit cell holding a 64-bit `loc`, or None when it is not reachable from the host.
    fn wide(&self, _loc: LocId) -> Option<&AtomicU64> {
        None
    }
}

/// Plain memory for tests: one word per location.
impl HostMemory for [AtomicU32] {
    fn word(&self, loc: LocId) -> Option<&AtomicU32> {
        self.get(loc.0 as usize)
    }
}

/// The 32-bit word a value is computed as (the kernel's `imm`).
fn word(v: i64) -> u32 {
    v as i32 as u32
}

fn load_order(o: Order) -> Ordering {
    match o {
        Order::Weak | Order::Volatile | Order::Relaxed => Ordering::Relaxed,
        // A release load does not exist; acquire is the nearest stronger ordering.
        Order::Acquire | Order::Release | Order::AcqRel => Ordering::Acquire,
        Order::SeqCst => Ordering::SeqCst,
    }
}

fn store_order(o: Order) -> Ordering {
    match o {
        Order::Weak | Order::Volatile | Order::Relaxed => Ordering::Relaxed,
        // An acquire store does not exist; release is the nearest stronger ordering.
        Order::Acquire | Order::Release | Order::AcqRel => Ordering::Release,
        Order::SeqCst => Ordering::SeqCst,
    }
}

fn rmw_order(o: Order) -> Ordering {
    match o {
        Order::Weak | Order::Volatile | Order::Relaxed => Ordering::Relaxed,
        Order::Acquire => Ordering::Acquire,
        Order::Release => Ordering::Release,
        Order::AcqRel => Ordering::AcqRel,
        Order::SeqCst => Ordering::SeqCst,
    }
}

/// The ordering of a failed compare-and-swap (a read): never release.
fn failure_order(o: Ordering) -> Ordering {
    match o {
        Ordering::SeqCst => Ordering::SeqCst,
        Ordering::Acquire | Ordering::AcqRel => Ordering::Acquire,
        _ => Ordering::Relaxed,
    }
}

/// A word as the value of the 32-bit type `ty` it stands for.
fn value_in(w: u32, ty: IntType) -> Value {
    ty.wrap(Value::from(w))
}

/// The word an RMW of type `ty` writes: the IR's meaning of the PTX instruction
/// ([`RmwOp::apply`]) on 32-bit words.
fn apply(op: RmwOp, ty: IntType, old: u32, v: u32) -> u32 {
    word(op.apply(ty, value_in(old, ty), value_in(v, ty)))
}

/// The 64-bit cell an RMW of 64-bit type `ty` writes.
fn apply64(op: RmwOp, ty: IntType, old: u64, v: u64) -> u64 {
    op.apply(ty, old as Value, v as Value) as u64
}

/// `a op b` in type `ty` as the generated PTX computes it: the IR's PTX arithmetic
/// ([`BinOp::eval`] with [`Arithmetic::Ptx`]), which wraps the operands to `ty` first. Where
/// the model has no defined value (division by zero, C's signed overflow and wild shifts) it
/// reports a fault; the value here (0 for a division by zero) is only what the role carries
/// on with.
fn binary(op: BinOp, ty: IntType, a: Value, b: Value) -> Value {
    op.eval(ty, Arithmetic::Ptx, a, b).unwrap_or(0)
}

/// An atomic read-modify-write of `w` with `ord`; `(a, b)` are the read operands (a CAS's
/// expected and new values, or an operation's operand and 0), in the cell's width. Returns the
/// old contents, or `None` when a compare-and-swap loop ran out of attempts. One body for the
/// 32-bit words and the 64-bit cells.
macro_rules! rmw_fn {
    ($name:ident, $atomic:ty, $word:ty, $apply:ident) => {
        fn $name(
            w: &$atomic,
            kind: RmwKind,
            ty: IntType,
            ord: Ordering,
            (a, b): ($word, $word),
        ) -> Option<$word> {
            Some(match kind {
                RmwKind::Cas { .. } => match w.compare_exchange(a, b, ord, failure_order(ord)) {
                    Ok(v) | Err(v) => v,
                },
                RmwKind::Op(op, _) => {
                    let v = a;
                    match op {
                        // A float's add is no integer add of its bits: the loop below.
                        RmwOp::Add if !ty.float => w.fetch_add(v, ord),
                        RmwOp::Sub if !ty.float => w.fetch_sub(v, ord),
                        RmwOp::Exch => w.swap(v, ord),
                        RmwOp::And => w.fetch_and(v, ord),
                        RmwOp::Or => w.fetch_or(v, ord),
                        RmwOp::Xor => w.fetch_xor(v, ord),
                        RmwOp::Add
                        | RmwOp::Sub
                        | RmwOp::Inc
                        | RmwOp::Dec
                        | RmwOp::Min
                        | RmwOp::Max => {
                            let mut cur = w.load(Ordering::Relaxed);
                            let mut attempts = 0u32;
                            loop {
                                match w.compare_exchange_weak(
                                    cur,
                                    $apply(op, ty, cur, v),
                                    ord,
                                    Ordering::Relaxed,
                                ) {
                                    Ok(old) => break old,
                                    Err(now) => cur = now,
                                }
                                attempts += 1;
                                if attempts >= MAX_CAS_ATTEMPTS {
                                    return None;
                                }
                            }
                        }
                    }
                }
            })
        }
    };
}

rmw_fn!(rmw, AtomicU32, u32, apply);
rmw_fn!(rmw64, AtomicU64, u64, apply64);

/// A location's memory as a role reaches it: a 32-bit word or a 64-bit cell.
#[derive(Clone, Copy)]
enum Cell<'a> {
    W32(&'a AtomicU32),
    W64(&'a AtomicU64),
}

impl Cell<'_> {
    /// The value the cell holds, canonical in `ty`.
    fn load(self, ty: IntType, ord: Ordering) -> Value {
        match self {
            Cell::W32(w) => value_in(w.load(ord), ty),
            Cell::W64(w) => w.load(ord) as Value,
        }
    }

    fn store(self, v: Value, ord: Ordering) {
        match self {
            Cell::W32(w) => w.store(word(v), ord),
            Cell::W64(w) => w.store(v as u64, ord),
        }
    }

    /// An RMW of `kind` with operands `(a, b)` (values); the old value, canonical in `ty`.
    fn rmw(
        self,
        kind: RmwKind,
        ty: IntType,
        ord: Ordering,
        (a, b): (Value, Value),
    ) -> Option<Value> {
        match self {
            Cell::W32(w) => rmw(w, kind, ty, ord, (word(a), word(b))).map(|o| value_in(o, ty)),
            Cell::W64(w) => rmw64(w, kind, ty, ord, (a as u64, b as u64)).map(|o| o as Value),
        }
    }
}

/// Runs `thread`'s code once on `mem`, with `regs` (one value per register, as the IR holds
/// it: canonical in the type of the instruction that wrote it; set to the thread's initial
/// values here). A 32-bit access reaches its location's word, a 64-bit one its cell. Returns
/// the status word: [`STATUS_DONE`], [`STATUS_CUT`] when a backward branch was taken more
/// than `loop_cap` times or a compare-and-swap loop ran out of attempts, or
/// [`STATUS_BAD_ADDRESS`] when an address left its location or reached no host word.
pub fn run_role<M: HostMemory + ?Sized>(
    thread: &Thread,
    mem: &M,
    loop_cap: u32,
    regs: &mut [Value],
) -> u32 {
    regs.iter_mut().for_each(|r| *r = 0);
    for &(r, v) in &thread.init_regs {
        if let Some(slot) = regs.get_mut(r.0 as usize) {
            *slot = v;
        }
    }
    let read = |regs: &[Value], op: Operand| match op {
        Operand::Reg(r) => regs.get(r.0 as usize).copied().unwrap_or(0),
        Operand::Imm(v) => v,
    };
    // Layout::new refuses pointers and indices into arrays; an index into a location of its
    // own leaves it unless it is 0.
    let cell = |regs: &[Value], a: &Address, ty: IntType| -> Option<Cell> {
        let Address::Loc { loc, index } = *a else {
            return None;
        };
        if let Some(r) = index {
            if regs.get(r.0 as usize).copied().unwrap_or(0) != 0 {
                return None;
            }
        }
        if ty.bits == 64 {
            mem.wide(loc).map(Cell::W64)
        } else {
            mem.word(loc).map(Cell::W32)
        }
    };
    let set = |regs: &mut [Value], r: scopecheck_ir::RegId, v: Value| {
        if let Some(slot) = regs.get_mut(r.0 as usize) {
            *slot = v;
        }
    };
    let mut loops = 0u32;
    let mut pc = 0usize;
    while let Some(instr) = thread.code.get(pc) {
        pc += 1;
        match instr.kind {
            InstrKind::Load {
                dst,
                ref addr,
                order,
                ty,
                ..
            } => {
                let Some(c) = cell(regs, addr, ty) else {
                    return STATUS_BAD_ADDRESS;
                };
                set(regs, dst, c.load(ty, load_order(order)));
            }
            InstrKind::Store {
                ref addr,
                value,
                order,
                ty,
                ..
            } => {
                let v = read(regs, value);
                let Some(c) = cell(regs, addr, ty) else {
                    return STATUS_BAD_ADDRESS;
                };
                c.store(v, store_order(order));
            }
            InstrKind::Rmw {
                dst,
                ref addr,
                kind,
                ty,
                order,
                ..
            } => {
                let Some(c) = cell(regs, addr, ty) else {
                    return STATUS_BAD_ADDRESS;
                };
                let (a, b) = match kind {
                    RmwKind::Cas { expected, new } => (read(regs, expected), read(regs, new)),
                    RmwKind::Op(_, v) => (read(regs, v), 0),
                };
                let Some(old) = c.rmw(kind, ty, rmw_order(order), (a, b)) else {
                    return STATUS_CUT;
                };
                if let Some(d) = dst {
                    set(regs, d, old);
                }
            }
            InstrKind::Fence { .. } => fence(Ordering::SeqCst),
            // Layout::new refuses host threads with barriers; nothing to wait for here.
            InstrKind::Barrier { .. } => {}
            // Layout::new refuses warp collectives.
            InstrKind::Warp { .. } => return STATUS_BAD_ADDRESS,
            InstrKind::Mov { dst, src } => {
                let v = read(regs, src);
                set(regs, dst, v);
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                let v = binary(op, ty, read(regs, a), read(regs, b));
                set(regs, dst, v);
            }
            InstrKind::Fma {
                dst,
                ty,
                mode,
                a,
                b,
                c,
            } => {
                let [a, b, c] = [a, b, c].map(|o| ty.wrap(read(regs, o)));
                let v = scopecheck_ir::float::fma(ty, mode, a, b, c).unwrap_or(0);
                set(regs, dst, v);
            }
            InstrKind::Branch { cond, target } => {
                let taken = match cond {
                    BranchCond::Always => true,
                    BranchCond::Eq(a, b) => read(regs, a) == read(regs, b),
                    BranchCond::Ne(a, b) => read(regs, a) != read(regs, b),
                };
                if taken {
                    if target < pc {
                        loops += 1;
                        if loops > loop_cap {
                            return STATUS_CUT;
                        }
                        // A spin iteration: let the other side make progress, as a real
                        // host await loop does.
                        std::hint::spin_loop();
                    }
                    pc = target;
                }
            }
        }
    }
    STATUS_DONE
}

/// Pinned host memory mapped into the device's address space.
pub struct Pinned {
    host: *mut u32,
    dev: u64,
    words: usize,
}

// SAFETY: the allocation is plain memory owned by this value; every access from several
// threads goes through atomics.
unsafe impl Send for Pinned {}
unsafe impl Sync for Pinned {}

impl Pinned {
    /// Allocates `words` zeroed words with `cuMemHostAlloc(DEVICEMAP)`; the context must be
    /// current on this thread.
    pub fn new(words: usize) -> Result<Pinned, RunError> {
        let words = words.max(1);
        let bytes = words * 4;
        // SAFETY: a plain allocation; the pointer is checked before use and zeroed below.
        let host = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(driver_err("allocating pinned host memory"))? as *mut u32;
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: `host` was returned by cuMemHostAlloc with DEVICEMAP.
        let got = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host.cast(), 0) }.result();
        let pinned = Pinned { host, dev, words };
        got.map_err(driver_err("mapping pinned host memory"))?;
        // SAFETY: `host` points to `bytes` bytes this value owns.
        unsafe { std::ptr::write_bytes(host, 0, words) };
        Ok(pinned)
    }

    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.dev
    }

    /// The word at `index`, if inside the allocation.
    pub fn word(&self, index: usize) -> Option<&AtomicU32> {
        // SAFETY: in bounds, 4-byte aligned (the allocation is page aligned), and only ever
        // accessed atomically by the host while the device may access it.
        (index < self.words).then(|| unsafe { AtomicU32::from_ptr(self.host.add(index)) })
    }

    /// The 64-bit cell of words `index` and `index + 1`, if inside the allocation and 8-byte
    /// aligned (`index` even).
    pub fn wide(&self, index: usize) -> Option<&AtomicU64> {
        // SAFETY: in bounds, 8-byte aligned (page-aligned allocation, even word), and only
        // ever accessed atomically by the host while the device may access it.
        (index.is_multiple_of(2) && index + 1 < self.words)
            .then(|| unsafe { AtomicU64::from_ptr(self.host.add(index).cast()) })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; nothing uses it after this value.
        let _ = unsafe { result::free_host(self.host.cast()) };
    }
}

/// Managed memory (`cuMemAllocManaged`, attached globally).
pub struct Managed {
    ptr: u64,
    words: usize,
}

// SAFETY: as for Pinned.
unsafe impl Send for Managed {}
unsafe impl Sync for Managed {}

impl Managed {
    /// Allocates `words` zeroed words of managed memory; the context must be current.
    pub fn new(words: usize) -> Result<Managed, RunError> {
        let words = words.max(1);
        // SAFETY: a plain allocation, zeroed below before any use.
        let ptr = unsafe {
            result::malloc_managed(words * 4, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
        }
        .map_err(driver_err("allocating managed memory"))?;
        let m = Managed { ptr, words };
        // SAFETY: managed memory is addressable from the host at its device address; no kernel
        // uses it yet.
        unsafe { std::ptr::write_bytes(ptr as *mut u32, 0, words) };
        Ok(m)
    }

    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    pub fn word(&self, index: usize) -> Option<&AtomicU32> {
        // SAFETY: in bounds and aligned; host accesses are atomic, and the runner allows host
        // access during kernels only on devices with concurrentManagedAccess.
        (index < self.words)
            .then(|| unsafe { AtomicU32::from_ptr((self.ptr as *mut u32).add(index)) })
    }

    /// The 64-bit cell of words `index` and `index + 1`, if inside the allocation and 8-byte
    /// aligned (`index` even).
    pub fn wide(&self, index: usize) -> Option<&AtomicU64> {
        // SAFETY: as for `word`, and 8-byte aligned (even word of an aligned allocation).
        (index.is_multiple_of(2) && index + 1 < self.words)
            .then(|| unsafe { AtomicU64::from_ptr((self.ptr as *mut u32).add(index).cast()) })
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAllocManaged; nothing uses it after this value.
        let _ = unsafe { result::memory_free(self.ptr) };
    }
}

/// The words the host threads work on: location buffers and the records, as host-side views.
pub trait HostWords: Sync {
    /// Word `index` of the buffer holding `buffer`'s locations.
    fn loc_word(&self, buffer: Buffer, index: usize) -> Option<&AtomicU32>;
    /// The 64-bit cell at word `index` (even) of the buffer holding `buffer`'s locations.
    fn loc_wide(&self, _buffer: Buffer, _index: usize) -> Option<&AtomicU64> {
        None
    }
    /// Word `index` of the records.
    fn rec_word(&self, index: usize) -> Option<&AtomicU32>;
    /// The pacing word.
    fn go(&self) -> &AtomicU32;
    /// Word `index` of the launch-order completion flags ([`Layout::flag_word`]).
    fn flag_word(&self, index: usize) -> Option<&AtomicU32>;
}

/// One instance's view of the location words.
struct InstanceMem<'a, W: HostWords + ?Sized> {
    words: &'a W,
    layout: &'a Layout,
    instance: u32,
}

impl<W: HostWords + ?Sized> HostMemory for InstanceMem<'_, W> {
    fn word(&self, loc: LocId) -> Option<&AtomicU32> {
        let (buf, at, _) = self.layout.loc_offset(loc, self.instance)?;
        self.words.loc_word(buf, (at / 4) as usize)
    }
    fn wide(&self, loc: LocId) -> Option<&AtomicU64> {
        match self.layout.loc_offset(loc, self.instance)? {
            (buf, at, true) => self.words.loc_wide(buf, (at / 4) as usize),
            _ => None,
        }
    }
}

/// What a worker saw in one launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchWork {
    /// Role runs done.
    pub runs: u64,
    /// Workers that gave up waiting for the pacing word and ran anyway.
    pub unpaced: u64,
}

/// What every host worker of one run shares.
pub struct HostRun<'a, W: ?Sized> {
    pub program: &'a Program,
    pub layout: &'a Layout,
    /// The memory the roles run on.
    pub words: &'a W,
    /// Instances of one launch.
    pub instances: u32,
    /// The iteration cap of backward branches (as on the GPU).
    pub loop_cap: u32,
    /// How long a worker waits for the kernel's pacing word before it runs anyway.
    pub go_wait: Duration,
}

/// Runs `role` of instances `range` of launch `launch` on `run.words`: waits (at most
/// `run.go_wait`) for the kernel's pacing word, then runs the role on each instance in order
/// and writes its registers and status to the instance's record.
pub fn work<W: HostWords + ?Sized>(
    run: &HostRun<W>,
    role: ThreadId,
    range: std::ops::Range<u32>,
    launch: u32,
) -> LaunchWork {
    let HostRun {
        program,
        layout,
        words,
        loop_cap,
        go_wait,
        ..
    } = *run;
    let mut out = LaunchWork::default();
    if !await_flag(words.go(), launch, go_wait) {
        out.unpaced = 1;
    }
    let Some(thread) = program.threads.get(role.0 as usize) else {
        return out;
    };
    let mut regs: Vec<Value> = vec![0; thread.registers.len()];
    let rec_words = layout.record.words() as usize;
    // (first word in the record, register, whether it is a 64-bit one: two words).
    let outputs: Vec<(usize, usize, bool)> = layout
        .record
        .regs
        .iter()
        .enumerate()
        .filter(|(_, (t, _))| *t == role)
        .map(|(k, (_, r))| {
            (
                layout.record.reg_word(k) as usize,
                r.0 as usize,
                layout.record.wide[k],
            )
        })
        .collect();
    let status_at = layout.record.status_word(role) as usize;
    // The value a finished role's flag takes in this launch (never 0, the flags' start).
    let epoch = launch.wrapping_add(1);
    let waits = &layout.waits[role.0 as usize];
    for instance in range {
        let mem = InstanceMem {
            words,
            layout,
            instance,
        };
        let ready = waits.iter().all(|&a| {
            let Some(flag) = layout
                .flag_word(instance, a)
                .and_then(|k| words.flag_word(k as usize))
            else {
                return false;
            };
            await_flag(flag, epoch, ORDER_WAIT)
        });
        let status = if ready {
            run_role(thread, &mem, loop_cap, &mut regs)
        } else {
            regs.iter_mut().for_each(|r| *r = 0);
            STATUS_CUT
        };
        let base = instance as usize * rec_words;
        for &(k, r, wide) in &outputs {
            let v = regs.get(r).copied().unwrap_or(0);
            // The record's words of the value, low word first, as the device roles write them.
            let parts = if wide {
                vec![v as u64 as u32, (v as u64 >> 32) as u32]
            } else {
                vec![word(v)]
            };
            for (i, p) in parts.into_iter().enumerate() {
                if let Some(w) = words.rec_word(base + k + i) {
                    w.store(p, Ordering::Relaxed);
                }
            }
        }
        if let Some(w) = words.rec_word(base + status_at) {
            w.store(status, Ordering::Release);
        }
        // Launch order: the threads launched after this one may start on this instance.
        if let Some(flag) = layout
            .flag_word(instance, role)
            .and_then(|k| words.flag_word(k as usize))
        {
            flag.store(epoch, Ordering::Release);
        }
        out.runs += 1;
    }
    out
}

/// Waits until `flag` holds `epoch` (acquire: everything written before it is visible then), at
/// most `bound`; whether it did. The pacing word and the launch-order flags both wait so.
fn await_flag(flag: &AtomicU32, epoch: u32, bound: Duration) -> bool {
    let started = Instant::now();
    let mut spins = 0u32;
    while flag.load(Ordering::Acquire) != epoch {
        std::hint::spin_loop();
        spins += 1;
        if spins.is_multiple_of(SPINS_PER_CLOCK_READ) && started.elapsed() > bound {
            return false;
        }
    }
    true
}

/// The share of `n` instances that worker `w` of `workers` takes.
pub fn share(n: u32, w: u32, workers: u32) -> std::ops::Range<u32> {
    let workers = workers.max(1) as u64;
    let (n64, w64) = (n as u64, w as u64);
    ((n64 * w64 / workers) as u32)..((n64 * (w64 + 1) / workers) as u32)
}

#[derive(Default)]
struct Control {
    /// Launch generation: bumped for every launch the workers are to run.
    epoch: u64,
    launch: u32,
    quit: bool,
    done: usize,
    work: LaunchWork,
}

/// The CPU threads of the host roles, driven launch by launch.
pub struct HostPool {
    ctl: Mutex<Control>,
    go: Condvar,
    finished: Condvar,
    /// Workers in all.
    pub workers: usize,
    per_role: u32,
}

/// Why the host threads did not finish a launch in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostStall;

impl HostPool {
    pub fn new(roles: usize, per_role: u32) -> HostPool {
        let per_role = per_role.clamp(1, MAX_HOST_WORKERS);
        HostPool {
            ctl: Mutex::new(Control::default()),
            go: Condvar::new(),
            finished: Condvar::new(),
            workers: roles * per_role as usize,
            per_role,
        }
    }

    /// The body of worker `index` (`0..workers`): runs until [`HostPool::quit`].
    pub fn worker<W: HostWords + ?Sized>(&self, index: usize, run: &HostRun<W>) {
        let per = self.per_role as usize;
        let Some(&role) = run.layout.host_roles.get(index / per) else {
            return;
        };
        let range = share(run.instances, (index % per) as u32, self.per_role);
        let mut seen = 0u64;
        loop {
            let launch = {
                let Ok(mut c) = self.ctl.lock() else { return };
                while c.epoch == seen && !c.quit {
                    c = match self.go.wait(c) {
                        Ok(c) => c,
                        Err(_) => return,
                    };
                }
                if c.quit {
                    return;
                }
                seen = c.epoch;
                c.launch
            };
            let w = work(run, role, range.clone(), launch);
            let Ok(mut c) = self.ctl.lock() else { return };
            c.done += 1;
            c.work.runs += w.runs;
            c.work.unpaced += w.unpaced;
            self.finished.notify_all();
        }
    }

    /// Starts launch `launch` on every worker and waits at most `budget` for all of them.
    pub fn run_launch(&self, launch: u32, budget: Duration) -> Result<LaunchWork, HostStall> {
        let Ok(mut c) = self.ctl.lock() else {
            return Err(HostStall);
        };
        c.epoch += 1;
        c.launch = launch;
        c.done = 0;
        c.work = LaunchWork::default();
        self.go.notify_all();
        let start = Instant::now();
        while c.done < self.workers {
            let left = budget.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(HostStall);
            }
            c = match self.finished.wait_timeout(c, left) {
                Ok((c, _)) => c,
                Err(_) => return Err(HostStall),
            };
        }
        Ok(c.work)
    }

    /// Tells every worker to end.
    pub fn quit(&self) {
        if let Ok(mut c) = self.ctl.lock() {
            c.quit = true;
        }
        self.go.notify_all();
    }
}

/// Ends the pool's workers when dropped, so that a runner returning early (an error) never
/// leaves its scoped workers waiting.
pub struct QuitOnDrop<'a>(pub &'a HostPool);

impl Drop for QuitOnDrop<'_> {
    fn drop(&mut self) {
        self.0.quit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GenOptions;

    fn parse(src: &str) -> Program {
        scopecheck_litmus::parse(src).expect("test parses")
    }

    fn mem(n: usize) -> Vec<AtomicU32> {
        (0..n).map(|_| AtomicU32::new(0)).collect()
    }

    const SPIN: &str = "PTX spin\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n \
        L: ld.relaxed.gpu.s32 r0, x ;\n beq r0, 0, L ;\n ld.relaxed.gpu.s32 r1, y ;\n\
        exists (P0:r1 == 0)\n";

    #[test]
    fn a_spin_that_never_ends_is_cut_at_the_cap() {
        let p = parse(SPIN);
        let m = mem(2);
        let mut regs = vec![0; p.threads[0].registers.len()];
        assert_eq!(run_role(&p.threads[0], &m[..], 8, &mut regs), STATUS_CUT);
        m[0].store(1, Ordering::Relaxed);
        m[1].store(5, Ordering::Relaxed);
        assert_eq!(run_role(&p.threads[0], &m[..], 8, &mut regs), STATUS_DONE);
        let r1 = p.threads[0].reg("r1").unwrap();
        assert_eq!(regs[r1.0 as usize], 5);
    }

    #[test]
    fn rmws_compute_as_ptx_does_on_words() {
        let p = parse(
            "PTX rmw\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n \
             atom.sys.add.s32 r0, x, 3 ;\n atom.sys.sub r1, x, 5 ;\n atom.sys.inc.u32 r2, y, 1 ;\n \
             atom.sys.inc r3, y, 1 ;\n atom.sys.min r4, x, 7 ;\n atom.sys.cas r5, y, 0, 9 ;\n \
             atom.sys.exch r6, y, 4 ;\n fence.sc.sys ;\n st.release.sys x, r6 ;\n \
             ld.acquire.sys r7, x ;\nexists (P0:r0 == 0)\n",
        );
        let m = mem(2);
        let t = &p.threads[0];
        let mut regs = vec![0; t.registers.len()];
        assert_eq!(run_role(t, &m[..], 8, &mut regs), STATUS_DONE);
        let r = |n: &str| regs[t.reg(n).unwrap().0 as usize] as i32;
        assert_eq!((r("r0"), r("r1")), (0, 3));
        // inc wraps at its operand: 0 -> 1 -> 0.
        assert_eq!((r("r2"), r("r3")), (0, 1));
        // x is -2 after the sub; signed min keeps it.
        assert_eq!(r("r4"), -2);
        // y is 0 again, so the CAS writes 9, which the exchange reads.
        assert_eq!((r("r5"), r("r6")), (0, 9));
        assert_eq!(r("r7"), 9);
    }

    #[test]
    fn arithmetic_and_rmws_follow_the_signedness_of_their_type() {
        let p = parse(
            "PTX unsigned\n{ x=4294967294; y=0; }\n P0@cta 0,gpu 0 ;\n \
             atom.sys.max.u32 r0, x, 5 ;\n atom.sys.min.s32 r1, y, -3 ;\n \
             ld.relaxed.sys.u32 r2, x ;\n shr.u32 r3, r2, 28 ;\n shr.s32 r4, r2, 40 ;\n \
             div.u32 r5, r2, 2 ;\n div.s32 r6, r2, 2 ;\n rem.u32 r7, r2, 5 ;\n\
             exists (P0:r0 == 0)\n",
        );
        let t = &p.threads[0];
        let mut regs = vec![0; t.registers.len()];
        let m = mem(2);
        m[0].store(word(4_294_967_294), Ordering::Relaxed);
        assert_eq!(run_role(t, &m[..], 8, &mut regs), STATUS_DONE);
        let r = |n: &str| regs[t.reg(n).unwrap().0 as usize];
        // Unsigned max keeps 2^32 - 2; signed min takes -3.
        assert_eq!(m[0].load(Ordering::Relaxed), 4_294_967_294);
        assert_eq!(m[1].load(Ordering::Relaxed) as i32, -3);
        assert_eq!(r("r3"), 15);
        // A signed right shift fills with the sign, past the width too (PTX clamps).
        assert_eq!(r("r4") as i32, -1);
        assert_eq!(r("r5"), 2_147_483_647);
        assert_eq!(r("r6") as i32, -1);
        assert_eq!(r("r7"), 4_294_967_294 % 5);
        // Comparisons, as the C front-end writes them.
        let max = Value::from(u32::MAX);
        assert_eq!(binary(BinOp::Lt, IntType::S32, max, 0), 1);
        assert_eq!(binary(BinOp::Lt, IntType::U32, max, 0), 0);
        assert_eq!(binary(BinOp::Le, IntType::U32, 0, max), 1);
    }

    /// Words and 64-bit cells, one of each per location, standing for a buffer.
    struct Cells {
        words: Vec<AtomicU32>,
        wide: Vec<AtomicU64>,
    }

    impl HostMemory for Cells {
        fn word(&self, loc: LocId) -> Option<&AtomicU32> {
            self.words.get(loc.0 as usize)
        }
        fn wide(&self, loc: LocId) -> Option<&AtomicU64> {
            self.wide.get(loc.0 as usize)
        }
    }

    #[test]
    fn a_host_role_computes_64_bit_values_whole() {
        // x is a .u64 location: the CAS writes 2^32 (old 0), the add of 2^32 - 1 reads 2^32
        // and leaves 2^33 - 1, which the load reads whole; its high word (1) goes to the
        // 32-bit y. A role on 32-bit words would have read 0 and left y at 0.
        let p = parse(
            "PTX h64\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n \
             atom.sys.cas.b64 r0, x, 0, 4294967296 ;\n atom.sys.add.u64 r1, x, 4294967295 ;\n \
             ld.relaxed.sys.u64 r2, x ;\n shr.u64 r3, r2, 32 ;\n st.relaxed.sys.u32 y, r3 ;\n\
             exists (P0:r0 == 0)\n",
        );
        let m = Cells {
            words: mem(2),
            wide: (0..2).map(|_| AtomicU64::new(0)).collect(),
        };
        let t = &p.threads[0];
        let mut regs = vec![0; t.registers.len()];
        assert_eq!(run_role(t, &m, 8, &mut regs), STATUS_DONE);
        let r = |n: &str| regs[t.reg(n).unwrap().0 as usize];
        assert_eq!((r("r0"), r("r1")), (0, 1 << 32));
        assert_eq!(r("r2"), (1 << 33) - 1);
        assert_eq!(m.wide[0].load(Ordering::Relaxed), (1 << 33) - 1);
        assert_eq!(m.words[1].load(Ordering::Relaxed), 1);
    }

    const HOST_MP: &str = "CUDA MP+host\n{ host int data = 0; host int flag = 0; }\n\n\
        P0@block 0, gpu 0 (host int* data, host cuda::atomic<int, cuda::thread_scope_system>* flag) {\n\
          *data = 42;\n  flag->store(1, cuda::std::memory_order_release);\n}\n\n\
        P1@host (host int* data, host std::atomic<int>* flag) {\n\
          while (flag->load(std::memory_order_acquire) == 0) {}\n  int r0 = *data;\n}\n\n\
        ~exists (1:r0=0)\n";

    /// Plain memory standing for the pinned buffers.
    struct Words {
        host: Vec<AtomicU32>,
        rec: Vec<AtomicU32>,
        go: AtomicU32,
        flags: Vec<AtomicU32>,
    }

    impl HostWords for Words {
        fn loc_word(&self, buffer: Buffer, index: usize) -> Option<&AtomicU32> {
            (buffer == Buffer::Host)
                .then(|| self.host.get(index))
                .flatten()
        }
        fn rec_word(&self, index: usize) -> Option<&AtomicU32> {
            self.rec.get(index)
        }
        fn go(&self) -> &AtomicU32 {
            &self.go
        }
        fn flag_word(&self, index: usize) -> Option<&AtomicU32> {
            self.flags.get(index)
        }
    }

    #[test]
    fn host_workers_run_every_instance_of_a_launch_on_the_layouts_words() {
        let p = parse(HOST_MP);
        let l = Layout::new(&p, &GenOptions::default()).unwrap();
        assert_eq!(l.host_roles, vec![ThreadId(1)]);
        let ninst = l.instances(4);
        let words = Words {
            host: mem((l.bytes(Buffer::Host, 4) / 4) as usize),
            rec: mem(ninst as usize * l.record.words() as usize),
            go: AtomicU32::new(GO_IDLE),
            flags: Vec::new(),
        };
        // Play the device writer for even instances only, before the host runs.
        let (flag, data) = (p.loc("flag").unwrap(), p.loc("data").unwrap());
        let at = |i, loc| {
            let (b, k) = l.place(loc).unwrap();
            (l.offset(b, i, k) / 4) as usize
        };
        for i in (0..ninst).step_by(2) {
            words.host[at(i, data)].store(42, Ordering::Relaxed);
            words.host[at(i, flag)].store(1, Ordering::Relaxed);
        }
        let pool = HostPool::new(l.host_roles.len(), 3);
        let budget = Duration::from_secs(20);
        let run = HostRun {
            program: &p,
            layout: &l,
            words: &words,
            instances: ninst,
            loop_cap: 4,
            go_wait: budget,
        };
        let work = std::thread::scope(|s| {
            let _quit = QuitOnDrop(&pool);
            let run = &run;
            for w in 0..pool.workers {
                let pool = &pool;
                s.spawn(move || pool.worker(w, run));
            }
            words.go.store(0, Ordering::Release);
            pool.run_launch(0, budget)
        })
        .unwrap();
        assert_eq!(work.runs, ninst as u64);
        assert_eq!(work.unpaced, 0);
        let rw = l.record.words() as usize;
        let status = l.record.status_word(ThreadId(1)) as usize;
        let r0 = l
            .record
            .regs
            .iter()
            .position(|&(t, _)| t == ThreadId(1))
            .unwrap();
        for i in 0..ninst as usize {
            let st = words.rec[i * rw + status].load(Ordering::Relaxed);
            if i % 2 == 0 {
                assert_eq!(st, STATUS_DONE, "instance {i}");
                assert_eq!(words.rec[i * rw + r0].load(Ordering::Relaxed), 42);
            } else {
                assert_eq!(st, STATUS_CUT, "instance {i} spins on a flag nobody sets");
            }
        }
    }

    /// Host code after a kernel (the CUDA front-end's `cudaDeviceSynchronize(); assert(...)`):
    /// P1 on the host reads `data` after P0 on the device has finished.
    const AFTER_KERNEL: &str = "CUDA after\n{ host int data = 0; }\n\n\
        P0@block 0, gpu 0 (host int* data) {\n  *data = 42;\n}\n\n\
        P1@host (host int* data) {\n  int r0 = *data;\n}\n\n\
        forall (1:r0=42)\n";

    /// Runs launch `launch` of `AFTER_KERNEL` (P1 after P0) on plain words, with a thread
    /// playing the device role: for the instances `device_does`, it writes `data` 30 ms after the
    /// launch starts and then releases P0's flag. Returns the host role's r0 and status per
    /// instance.
    fn host_after_device(device_does: fn(u32) -> bool) -> Vec<(u32, u32)> {
        let mut p = parse(AFTER_KERNEL);
        p.threads[1].after = vec![ThreadId(0)];
        let l = Layout::new(&p, &GenOptions::default()).unwrap();
        let ninst = l.instances(1).min(16);
        let words = Words {
            host: mem((l.bytes(Buffer::Host, 1) / 4) as usize),
            rec: mem(ninst as usize * l.record.words() as usize),
            go: AtomicU32::new(GO_IDLE),
            flags: mem((ninst * l.flags_per_instance()) as usize),
        };
        let data = p.loc("data").unwrap();
        let (b, k) = l.place(data).unwrap();
        let launch = 3u32;
        let pool = HostPool::new(l.host_roles.len(), 2);
        let budget = Duration::from_secs(20);
        let run = HostRun {
            program: &p,
            layout: &l,
            words: &words,
            instances: ninst,
            loop_cap: 4,
            go_wait: budget,
        };
        std::thread::scope(|s| {
            let _quit = QuitOnDrop(&pool);
            let run = &run;
            for w in 0..pool.workers {
                let pool = &pool;
                s.spawn(move || pool.worker(w, run));
            }
            let (l, words) = (&l, &words);
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                for i in (0..ninst).filter(|&i| device_does(i)) {
                    words.host[(l.offset(b, i, k) / 4) as usize].store(42, Ordering::Relaxed);
                    let f = l.flag_word(i, ThreadId(0)).unwrap() as usize;
                    words.flags[f].store(launch + 1, Ordering::Release);
                }
            });
            words.go.store(launch, Ordering::Release);
            pool.run_launch(launch, budget).unwrap();
        });
        let rw = l.record.words() as usize;
        let status = l.record.status_word(ThreadId(1)) as usize;
        (0..ninst as usize)
            .map(|i| {
                (
                    words.rec[i * rw].load(Ordering::Relaxed),
                    words.rec[i * rw + status].load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    #[test]
    fn a_host_role_ordered_after_a_kernel_waits_for_its_flag_in_every_instance() {
        // The device role writes 30 ms after the launch starts; a host role that did not wait
        // for P0's flag would read the initial 0 long before.
        for (i, (r0, st)) in host_after_device(|_| true).into_iter().enumerate() {
            assert_eq!((r0, st), (42, STATUS_DONE), "instance {i}");
        }
    }

    #[test]
    fn a_predecessor_that_never_finishes_cuts_the_instance_instead_of_hanging() {
        // Odd instances' device role never finishes: the host role gives up after ORDER_WAIT
        // and the instance counts as cut, not as a state.
        for (i, (r0, st)) in host_after_device(|i| i % 2 == 0).into_iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!((r0, st), (42, STATUS_DONE), "instance {i}");
            } else {
                assert_eq!(st, STATUS_CUT, "instance {i}");
            }
        }
    }

    #[test]
    fn a_pool_whose_pacing_word_never_comes_still_finishes() {
        let p = parse(HOST_MP);
        let l = Layout::new(&p, &GenOptions::default()).unwrap();
        let ninst = l.instances(2);
        let words = Words {
            host: mem((l.bytes(Buffer::Host, 2) / 4) as usize),
            rec: mem(ninst as usize * l.record.words() as usize),
            go: AtomicU32::new(GO_IDLE),
            flags: Vec::new(),
        };
        let pool = HostPool::new(1, 1);
        let work = std::thread::scope(|s| {
            let _quit = QuitOnDrop(&pool);
            let pool = &pool;
            let run = HostRun {
                program: &p,
                layout: &l,
                words: &words,
                instances: ninst,
                loop_cap: 2,
                go_wait: Duration::from_millis(5),
            };
            s.spawn(move || pool.worker(0, &run));
            pool.run_launch(7, Duration::from_secs(20))
        })
        .unwrap();
        assert_eq!(work.unpaced, 1);
        assert_eq!(work.runs, ninst as u64);
    }

    #[test]
    fn shares_cover_the_instances_once() {
        for (n, w) in [(10, 3), (7, 7), (3, 5), (101_376, 4)] {
            let mut next = 0;
            for k in 0..w {
                let r = share(n, k, w);
                assert_eq!(r.start, next);
                next = r.end;
            }
            assert_eq!(next, n);
        }
    }
}
