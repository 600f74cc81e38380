//! Runs a generated kernel on the GPU: many instances per launch, roles reshuffled every
//! launch, a histogram of final states accumulated on the device, a watchdog on every launch.
//!
//! Launches are queued in batches; an event after each launch lets the host check that every
//! launch finishes within its time budget (the generated code bounds every loop, so a launch
//! that overruns is reported, not waited for forever). Between batches the host reads the
//! anomaly records (instances in forbidden or unknown states) and checks the stop flag, so
//! Ctrl-C ends a run cleanly after the batch in flight.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::{sys, CudaEvent, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use scopecheck_ir::{LocId, Program, Value};

use crate::codegen::{
    anomaly_words, Kernel, BINS, BIN_CUT, BIN_OTHER, COLLECT_KERNEL, MAX_ANOMALIES, MAX_DENSE,
    TEST_KERNEL,
};
use crate::compare::{word, StateTable};
use crate::driver::{driver_err, Device};
use crate::host::{
    HostPool, HostRun, HostWords, Managed, Pinned, QuitOnDrop, DEFAULT_HOST_WORKERS, GO_IDLE,
};
use crate::layout::{Buffer, Layout, Rng, Shuffle};
use crate::RunError;

/// Default wall-clock time of one run.
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);
/// Default time budget of one launch (test kernel and collect kernel).
pub const DEFAULT_LAUNCH_BUDGET: Duration = Duration::from_secs(2);
/// Launches queued before the host checks anomalies and the stop flag.
pub const DEFAULT_BATCH: u32 = 64;
/// Default rounds of scratch traffic of each stress thread per launch.
pub const DEFAULT_STRESS_ITERS: u32 = 64;
/// Default rounds of scratch traffic of each role thread before it starts.
pub const DEFAULT_PRE_ITERS: u32 = 8;
/// Words of the stress scratch region (a power of two): 4 MiB, a small part of the L2 so the
/// stress traffic contends for a few lines rather than streaming through memory.
pub const DEFAULT_SCRATCH_WORDS: u32 = 1 << 20;
/// Threads per block of the collect kernel.
const COLLECT_THREADS: u32 = 256;
/// Most hardware blocks resident on one SM (Hopper).
const MAX_BLOCKS_PER_SM: u32 = 32;
/// Most anomalous instances a run keeps with their details.
pub const MAX_KEPT_ANOMALIES: usize = 32;
/// The test kernel's `p_zero`: 0 at run time, unknown to the PTX assembler (see codegen).
const ZERO: u32 = 0;
/// Poll interval of the watchdog while a launch runs.
const POLL: Duration = Duration::from_micros(50);
/// Most managed memory a run allocates; see also [`MANAGED_FREE_FRACTION`].
pub const MAX_MANAGED_BYTES: u64 = 256 << 20;
/// A run takes at most this fraction (1/n) of the device memory the driver reports free as
/// managed memory: asking for more managed memory than the card has free can hang the GPU.
pub const MANAGED_FREE_FRACTION: u64 = 4;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub time: Duration,
    /// Stop after this many instances (None: only the time bounds the run).
    pub max_instances: Option<u64>,
    /// Blocks per launch (None: as many as the GPU holds at once).
    pub blocks: Option<u32>,
    pub stress_iters: u32,
    pub pre_iters: u32,
    pub scratch_words: u32,
    pub launch_budget: Duration,
    pub batch: u32,
    pub seed: u64,
    /// CPU threads per host role (tests with `@host` threads).
    pub host_workers: u32,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            time: DEFAULT_TIME,
            max_instances: None,
            blocks: None,
            stress_iters: DEFAULT_STRESS_ITERS,
            pre_iters: DEFAULT_PRE_ITERS,
            scratch_words: DEFAULT_SCRATCH_WORDS,
            launch_budget: DEFAULT_LAUNCH_BUDGET,
            batch: DEFAULT_BATCH,
            seed: 0x5c0e_c4ec,
            host_workers: DEFAULT_HOST_WORKERS,
        }
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Time,
    Instances,
    Interrupted,
    /// A launch ran past its budget (`host`: the host threads of a launch did): its instances
    /// were cut, and the result holds what the launches before it observed. The launch may still
    /// be running, so the GPU context must not be used again: the caller ends the process, which
    /// is what lets the driver reclaim the GPU.
    Hung {
        launch: u64,
        budget: Duration,
        host: bool,
    },
}

/// An instance that ended in a forbidden or unknown state, with where its roles ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    pub launch: u64,
    pub instance: u32,
    pub values: Vec<Value>,
    /// Per test thread, the hardware (block, thread) that ran it.
    pub threads: Vec<Option<(u32, u32)>>,
}

/// What a run observed.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Counts per dense state of the table.
    pub dense: Vec<u64>,
    /// Instances whose state had a value outside the table.
    pub other: u64,
    /// Raw states of sampled "other" instances.
    pub other_samples: Vec<Vec<Value>>,
    /// Instances a role of which was stopped by the iteration cap.
    pub cut: u64,
    /// Instances judged (dense + other), cut ones excluded.
    pub instances: u64,
    pub launches: u64,
    pub elapsed: Duration,
    pub anomalies: Vec<Anomaly>,
    pub stop: Stop,
    pub blocks: u32,
    pub block_threads: u32,
    pub instances_per_launch: u32,
    /// Time from the call to the first launch (module load, allocations, initial image).
    pub setup: Duration,
    /// CPU threads that ran the host roles (0 without host threads).
    pub host_workers: u32,
    /// Worker launches in which a host worker gave up waiting for the kernel's pacing word and
    /// ran its instances anyway.
    pub unpaced: u64,
}

impl RunResult {
    pub fn instances_per_second(&self) -> f64 {
        self.instances as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// Blocks per launch: as many as the GPU holds at once, a multiple of the blocks per set.
pub fn default_blocks(dev: &Device, kernel: &Kernel) -> u32 {
    let per_sm = (dev.max_threads_per_sm / kernel.layout.block_threads).clamp(1, MAX_BLOCKS_PER_SM);
    dev.sms * per_sm
}

/// One parameter of the test kernel, in the order codegen declares them.
#[derive(Clone, Copy, Debug)]
enum KernelArg {
    U64(u64),
    U32(u32),
}

/// Launches the test kernel with `args`; a test whose CTAs share clusters is launched in
/// clusters of `cluster` consecutive blocks (`cuLaunchKernelEx` with a cluster dimension).
///
/// # Safety
/// `args` must match the kernel's parameters one for one, and every buffer they point to must be
/// sized for the launch.
unsafe fn launch_test(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    cluster: u32,
    args: &[KernelArg],
) -> Result<(), cudarc::driver::DriverError> {
    if cluster <= 1 {
        let mut b = stream.launch_builder(f);
        for a in args {
            match a {
                KernelArg::U64(v) => b.arg(v),
                KernelArg::U32(v) => b.arg(v),
            };
        }
        return b.launch(cfg).map(|_| ());
    }
    stream.context().bind_to_thread()?;
    let mut params: Vec<*mut std::ffi::c_void> = args
        .iter()
        .map(|a| match a {
            KernelArg::U64(v) => v as *const u64 as *mut std::ffi::c_void,
            KernelArg::U32(v) => v as *const u32 as *mut std::ffi::c_void,
        })
        .collect();
    // SAFETY: a plain C struct of integers and a union; zero is a valid value of each.
    let mut attr: sys::CUlaunchAttribute = std::mem::zeroed();
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(
        &config,
        f.cu_function(),
        params.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
}

/// The host's views of the buffers host roles work on.
struct Words<'a> {
    host: Option<&'a Pinned>,
    managed: Option<&'a Managed>,
    rec: Option<&'a Pinned>,
    go: Option<&'a Pinned>,
    /// The launch-order flags when a host thread takes part (else they are device memory).
    flags: Option<&'a Pinned>,
    /// Stands for the pacing word should the allocation be too small (it never is).
    idle: std::sync::atomic::AtomicU32,
}

impl HostWords for Words<'_> {
    fn loc_word(&self, buffer: Buffer, index: usize) -> Option<&std::sync::atomic::AtomicU32> {
        match buffer {
            Buffer::Device => None,
            Buffer::Host => self.host?.word(index),
            Buffer::Managed => self.managed?.word(index),
        }
    }
    fn loc_wide(&self, buffer: Buffer, index: usize) -> Option<&std::sync::atomic::AtomicU64> {
        match buffer {
            Buffer::Device => None,
            Buffer::Host => self.host?.wide(index),
            Buffer::Managed => self.managed?.wide(index),
        }
    }
    fn rec_word(&self, index: usize) -> Option<&std::sync::atomic::AtomicU32> {
        self.rec?.word(index)
    }
    fn go(&self) -> &std::sync::atomic::AtomicU32 {
        self.go.and_then(|g| g.word(0)).unwrap_or(&self.idle)
    }
    fn flag_word(&self, index: usize) -> Option<&std::sync::atomic::AtomicU32> {
        self.flags?.word(index)
    }
}

/// Refuses host and managed memory the device cannot give.
fn check_host_support(dev: &Device, kernel: &Kernel, managed_bytes: u64) -> Result<(), RunError> {
    let layout = &kernel.layout;
    let attr = |a| {
        dev.ctx
            .attribute(a)
            .map_err(driver_err("reading a device attribute"))
    };
    let unsupported = |m: String| RunError::Gen(crate::GenError::Unsupported(m));
    if !layout.host.is_empty() || !layout.host_roles.is_empty() {
        let map = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)?;
        if map == 0 {
            return Err(unsupported(
                "this GPU cannot map host memory (canMapHostMemory is 0)".into(),
            ));
        }
    }
    if !layout.managed.is_empty() {
        if attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)? == 0 {
            return Err(unsupported("this GPU has no managed memory".into()));
        }
        if !layout.host_roles.is_empty()
            && attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)? == 0
        {
            return Err(unsupported(
                "host threads would touch managed memory while a kernel runs, and this GPU \
                 lacks concurrentManagedAccess"
                    .into(),
            ));
        }
        let (free, _) = dev
            .ctx
            .mem_get_info()
            .map_err(driver_err("reading free device memory"))?;
        let cap = MAX_MANAGED_BYTES.min(free as u64 / MANAGED_FREE_FRACTION);
        if managed_bytes > cap {
            return Err(RunError::Options(format!(
                "the managed locations need {managed_bytes} bytes, more than the {cap} a run may \
                 take (at most {MAX_MANAGED_BYTES}, and 1/{MANAGED_FREE_FRACTION} of the free \
                 device memory); use fewer --blocks"
            )));
        }
    }
    Ok(())
}

/// The pinned and managed buffers of one run: host and managed locations (at their initial
/// values), the records and the pacing word when host roles write them, the launch-order flags
/// when a host thread takes part.
struct HostBuffers {
    host_buf: Option<Pinned>,
    managed_buf: Option<Managed>,
    rec_pinned: Option<Pinned>,
    go: Option<Pinned>,
    flags_pinned: Option<Pinned>,
}

impl HostBuffers {
    /// The host's views of the buffers host roles work on.
    fn words(&self) -> Words<'_> {
        Words {
            host: self.host_buf.as_ref(),
            managed: self.managed_buf.as_ref(),
            rec: self.rec_pinned.as_ref(),
            go: self.go.as_ref(),
            flags: self.flags_pinned.as_ref(),
            idle: std::sync::atomic::AtomicU32::new(GO_IDLE),
        }
    }
}

fn host_buffers(
    program: &Program,
    layout: &Layout,
    blocks: u32,
    rec_words: usize,
    flag_words: usize,
) -> Result<HostBuffers, RunError> {
    let ninst = layout.instances(blocks);
    let host_roles = !layout.host_roles.is_empty();
    let words_of = |b: Buffer| (layout.bytes(b, blocks) / 4) as usize;
    let host_buf = if layout.host.is_empty() {
        None
    } else {
        Some(Pinned::new(words_of(Buffer::Host))?)
    };
    let managed_buf = if layout.managed.is_empty() {
        None
    } else {
        Some(Managed::new(words_of(Buffer::Managed))?)
    };
    let rec_pinned = if host_roles {
        Some(Pinned::new(rec_words)?)
    } else {
        None
    };
    let go = if host_roles {
        let go = Pinned::new(1)?;
        if let Some(w) = go.word(0) {
            w.store(GO_IDLE, Ordering::Release);
        }
        Some(go)
    } else {
        None
    };
    for i in 0..ninst {
        for b in [Buffer::Host, Buffer::Managed] {
            for loc in unique(layout.locs(b)) {
                let Some((_, at, wide)) = layout.loc_offset(loc, i) else {
                    continue;
                };
                for (k, w) in init_words(program, loc, wide).into_iter().enumerate() {
                    let at = (at / 4) as usize + k;
                    let cell = match b {
                        Buffer::Host => host_buf.as_ref().and_then(|p| p.word(at)),
                        _ => managed_buf.as_ref().and_then(|m| m.word(at)),
                    };
                    if let Some(cell) = cell {
                        cell.store(w, Ordering::Relaxed);
                    }
                }
            }
        }
    }
    // Launch-order flags, zero at the start: epochs count from 1.
    let flags_pinned = if layout.has_order() && layout.flags_on_host() {
        Some(Pinned::new(flag_words)?)
    } else {
        None
    };
    Ok(HostBuffers {
        host_buf,
        managed_buf,
        rec_pinned,
        go,
        flags_pinned,
    })
}

/// Every instance's device locations at their initial values.
fn initial_image(program: &Program, layout: &Layout, blocks: u32, ninst: u32) -> Vec<u32> {
    let mem_words = (layout.global_bytes(blocks) / 4) as usize;
    let mut image = vec![0u32; mem_words.max(1)];
    for i in 0..ninst {
        for loc in unique(&layout.global) {
            let Some((_, at, wide)) = layout.loc_offset(loc, i) else {
                continue;
            };
            for (k, w) in init_words(program, loc, wide).into_iter().enumerate() {
                image[(at / 4) as usize + k] = w;
            }
        }
    }
    image
}

/// A buffer's locations, each once (a 64-bit location takes two places in the list).
fn unique(locs: &[LocId]) -> Vec<LocId> {
    let mut out: Vec<LocId> = locs.to_vec();
    out.dedup();
    out
}

/// The words of `loc`'s initial value, low word first: one, or two for a 64-bit location
/// (little-endian, as the GPU and the host store it).
fn init_words(program: &Program, loc: LocId, wide: bool) -> Vec<u32> {
    let v = program.location(loc).init;
    if wide {
        vec![v as u64 as u32, (v as u64 >> 32) as u32]
    } else {
        vec![word(v)]
    }
}

/// The watchdog: each launch of a batch (`first` the number of its first) must end within
/// `budget` of the previous one's end.
fn watchdog(events: &[CudaEvent], first: u64, budget: Duration) -> Result<(), RunError> {
    for (i, ev) in events.iter().enumerate() {
        let waited = Instant::now();
        loop {
            match ev.try_is_complete() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(driver_err("running a launch")(e)),
            }
            if waited.elapsed() > budget {
                return Err(RunError::Watchdog {
                    launch: first + i as u64,
                    budget,
                });
            }
            std::thread::sleep(POLL);
        }
    }
    Ok(())
}

/// What the anomaly records of one batch are read against.
struct Found<'a> {
    table: &'a StateTable,
    layout: &'a Layout,
    program: &'a Program,
    blocks: u32,
    /// The number of the batch's first launch.
    first: u64,
    /// The shuffle of each launch of the batch.
    shuffles: &'a [Shuffle],
}

impl Found<'_> {
    /// Reads the anomaly records `raw` (a count, then records of instance, launch and values):
    /// samples of states outside the table, and up to [`MAX_KEPT_ANOMALIES`] anomalies with
    /// the hardware threads that ran them.
    fn read(&self, raw: &[u32], anomalies: &mut Vec<Anomaly>, other_samples: &mut Vec<Vec<Value>>) {
        let aw = anomaly_words(&self.table.wide) as usize;
        let n = raw[0].min(MAX_ANOMALIES) as usize;
        for r in 0..n {
            let at = 1 + r * aw;
            let instance = raw[at];
            // The kernel records the launch number's low 32 bits; this batch's launches are
            // consecutive, so the offset into the batch is their difference.
            let in_batch = raw[at + 1].wrapping_sub(self.first as u32) as usize;
            let launch = self.first + in_batch as u64;
            let values = self.table.values_of_words(&raw[at + 2..at + aw]);
            if self.table.index(&values).is_none() {
                other_samples.push(values.clone());
            }
            if anomalies.len() < MAX_KEPT_ANOMALIES {
                let Some(s) = self.shuffles.get(in_batch) else {
                    continue;
                };
                anomalies.push(Anomaly {
                    launch,
                    instance,
                    threads: self.layout.placement_of(
                        s,
                        self.blocks,
                        instance,
                        self.program.threads.len(),
                    ),
                    values,
                });
            }
        }
    }
}
/// The test kernel's parameters, in the order codegen declares them.
struct TestArgs {
    mem: u64,
    rec: u64,
    scratch: u64,
    scratch_mask: u32,
    blocks: u32,
    stress_iters: u32,
    pre_iters: u32,
    /// The host and managed buffers, when the kernel takes them.
    host: Option<(u64, u64)>,
    /// The pacing word, when host roles take part.
    go: Option<u64>,
    /// The launch-order flags, when some thread waits for another.
    flags: Option<u64>,
}

impl TestArgs {
    /// The arguments of launch `launch_no` under shuffle `s`.
    fn of(&self, s: &Shuffle, launch_no: u32) -> Vec<KernelArg> {
        let mut args = vec![
            KernelArg::U64(self.mem),
            KernelArg::U64(self.rec),
            KernelArg::U64(self.scratch),
            KernelArg::U32(self.scratch_mask),
            KernelArg::U32(self.blocks),
            KernelArg::U32(s.bmul),
            KernelArg::U32(s.badd),
            KernelArg::U32(s.tmul),
            KernelArg::U32(s.tadd),
            KernelArg::U32(s.txor),
            KernelArg::U32(s.rot),
            KernelArg::U32(s.wrot),
            KernelArg::U32(self.stress_iters),
            KernelArg::U32(self.pre_iters),
            KernelArg::U32(ZERO),
        ];
        if let Some((host, managed)) = self.host {
            args.extend([KernelArg::U64(host), KernelArg::U64(managed)]);
        }
        if let Some(go) = self.go {
            args.extend([KernelArg::U64(go), KernelArg::U32(launch_no)]);
        }
        if let Some(flags) = self.flags {
            // Epochs count from 1: the flags start at zero.
            args.extend([
                KernelArg::U64(flags),
                KernelArg::U32(launch_no.wrapping_add(1)),
            ]);
        }
        args
    }
}

/// The hang a batch loop's outcome reports, if it overran (the GPU or the host threads).
fn hang_of(outcome: &Result<Stop, RunError>) -> Option<Stop> {
    match outcome {
        Err(RunError::Watchdog { launch, budget }) => Some(Stop::Hung {
            launch: *launch,
            budget: *budget,
            host: false,
        }),
        Err(RunError::HostStall { launch, budget }) => Some(Stop::Hung {
            launch: *launch,
            budget: *budget,
            host: true,
        }),
        _ => None,
    }
}

/// Blocks per launch: `opts.blocks` or as many as the GPU holds, a multiple of the blocks per
/// set; refuses too few blocks and a scratch region that is no power of two.
fn launch_blocks(dev: &Device, kernel: &Kernel, opts: &RunOptions) -> Result<u32, RunError> {
    let k = kernel.layout.blocks_per_set();
    let blocks = opts.blocks.unwrap_or_else(|| default_blocks(dev, kernel));
    let blocks = blocks / k * k;
    if blocks == 0 {
        return Err(RunError::Options(format!(
            "a launch needs at least {k} blocks for this test"
        )));
    }
    if !opts.scratch_words.is_power_of_two() {
        return Err(RunError::Options(
            "scratch words must be a power of two".into(),
        ));
    }
    Ok(blocks)
}

/// The device memory of one run and the events of a batch. After a hang they are leaked, not
/// freed: freeing would wait for the launch that overran.
///
/// The records, the scratch region and the flags are held only for the kernels, which reach
/// them through the addresses in [`TestArgs`].
struct DeviceBuffers {
    mem: CudaSlice<u32>,
    /// The records, unless host roles write them (then they are pinned, see [`HostBuffers`]).
    _rec: CudaSlice<u32>,
    _scratch: CudaSlice<u32>,
    hist: CudaSlice<u64>,
    table: CudaSlice<u32>,
    forbid: CudaSlice<u32>,
    anom: CudaSlice<u32>,
    /// The launch-order flags, unless a host thread takes part.
    _flags: CudaSlice<u32>,
    events: Vec<CudaEvent>,
}

/// The buffers of one run: [`DeviceBuffers`], the host's [`HostBuffers`], and the device
/// addresses the kernels take.
struct Buffers {
    dev: DeviceBuffers,
    host: HostBuffers,
    rec_ptr: u64,
    host_ptr: u64,
    managed_ptr: u64,
    test_args: TestArgs,
}

impl Buffers {
    /// Allocates and fills every buffer of a run of `blocks` blocks.
    fn new(
        dev: &Device,
        program: &Program,
        layout: &Layout,
        table: &StateTable,
        opts: &RunOptions,
        blocks: u32,
    ) -> Result<Buffers, RunError> {
        let ninst = layout.instances(blocks);
        let stream = &dev.stream;
        let image = initial_image(program, layout, blocks, ninst);
        let alloc = driver_err("allocating GPU memory");
        let copy = driver_err("copying to or from the GPU");
        let mem = stream.clone_htod(&image).map_err(&copy)?;
        drop(image);
        let rec_words = ninst as usize * layout.record.words() as usize;

        // Host and managed buffers, and the records in pinned memory when host roles write them.
        if layout.uses_host() {
            dev.ctx
                .bind_to_thread()
                .map_err(driver_err("making the GPU's context current"))?;
        }
        let flag_words = (ninst * layout.flags_per_instance()).max(1) as usize;
        let host = host_buffers(program, layout, blocks, rec_words, flag_words)?;
        let flags: CudaSlice<u32> = stream
            .alloc_zeros(if host.flags_pinned.is_some() || !layout.has_order() {
                1
            } else {
                flag_words
            })
            .map_err(driver_err("allocating GPU memory"))?;
        let flags_ptr: u64 = match &host.flags_pinned {
            Some(p) => p.device_ptr(),
            None => flags.device_ptr(stream).0,
        };
        let host_ptr = host.host_buf.as_ref().map_or(0, |p| p.device_ptr());
        let managed_ptr = host.managed_buf.as_ref().map_or(0, |m| m.device_ptr());
        let go_ptr = host.go.as_ref().map_or(0, |g| g.device_ptr());
        let rec: CudaSlice<u32> = stream
            .alloc_zeros(if host.rec_pinned.is_some() {
                1
            } else {
                rec_words.max(1)
            })
            .map_err(&alloc)?;
        let rec_ptr: u64 = match &host.rec_pinned {
            Some(p) => p.device_ptr(),
            None => rec.device_ptr(stream).0,
        };
        let scratch: CudaSlice<u32> = stream
            .alloc_zeros(opts.scratch_words as usize)
            .map_err(&alloc)?;
        let (mem_ptr, scratch_ptr) = (mem.device_ptr(stream).0, scratch.device_ptr(stream).0);
        let mut hist: CudaSlice<u64> = stream.alloc_zeros(BINS as usize).map_err(&alloc)?;
        let tbl_words = table.words();
        let tbl = stream
            .clone_htod(if tbl_words.is_empty() {
                &[0u32][..]
            } else {
                &tbl_words[..]
            })
            .map_err(&copy)?;
        let forbid = stream.clone_htod(&table.forbidden_words()).map_err(&copy)?;
        let aw = anomaly_words(&table.wide) as usize;
        let anom: CudaSlice<u32> = stream
            .alloc_zeros(1 + MAX_ANOMALIES as usize * aw)
            .map_err(&alloc)?;
        stream.memset_zeros(&mut hist).map_err(&copy)?;

        let events = (0..opts.batch.max(1))
            .map(|_| dev.ctx.new_event(None))
            .collect::<Result<Vec<_>, _>>()
            .map_err(driver_err("creating events"))?;
        let test_args = TestArgs {
            mem: mem_ptr,
            rec: rec_ptr,
            scratch: scratch_ptr,
            scratch_mask: opts.scratch_words - 1,
            blocks,
            stress_iters: opts.stress_iters,
            pre_iters: opts.pre_iters,
            host: layout.uses_host().then_some((host_ptr, managed_ptr)),
            go: (!layout.host_roles.is_empty()).then_some(go_ptr),
            flags: layout.has_order().then_some(flags_ptr),
        };
        Ok(Buffers {
            dev: DeviceBuffers {
                mem,
                _rec: rec,
                _scratch: scratch,
                hist,
                table: tbl,
                forbid,
                anom,
                _flags: flags,
                events,
            },
            host,
            rec_ptr,
            host_ptr,
            managed_ptr,
            test_args,
        })
    }
}

/// What the launches of a run have seen so far.
#[derive(Default)]
struct Tally {
    anomalies: Vec<Anomaly>,
    other_samples: Vec<Vec<Value>>,
    launches: u64,
    /// Launches whose host threads gave up waiting for the pacing word.
    unpaced: u64,
    /// The histogram as every launch of the batches before the current one left it, and their
    /// number: what a hang reports (a launch that hangs never reaches its collect kernel).
    partial: Vec<u64>,
    partial_launches: u64,
}

/// Queues the launches of a run, batch by batch.
struct Launcher<'a> {
    stream: &'a std::sync::Arc<cudarc::driver::CudaStream>,
    ftest: cudarc::driver::CudaFunction,
    fcollect: cudarc::driver::CudaFunction,
    program: &'a Program,
    layout: &'a Layout,
    table: &'a StateTable,
    opts: &'a RunOptions,
    blocks: u32,
    ninst: u32,
    bufs: &'a mut DeviceBuffers,
    /// The device addresses of the records, host and managed buffers (see [`Buffers`]).
    rec_ptr: u64,
    host_ptr: u64,
    managed_ptr: u64,
    test_args: &'a TestArgs,
    pool: &'a HostPool,
    /// How long the host threads of one launch may take in all.
    pool_budget: Duration,
    start: Instant,
    stop: &'a AtomicBool,
}

impl Launcher<'_> {
    /// Queues launches until the time, the instance count or `stop` ends the run.
    fn launch_all(&mut self, rng: &mut Rng, tally: &mut Tally) -> Result<Stop, RunError> {
        let counted_per_launch = (0..self.ninst).filter(|&i| self.layout.counts(i)).count() as u64;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(Stop::Interrupted);
            }
            if self.start.elapsed() >= self.opts.time {
                return Ok(Stop::Time);
            }
            if self
                .opts
                .max_instances
                .is_some_and(|m| tally.launches * counted_per_launch >= m)
            {
                return Ok(Stop::Instances);
            }
            self.batch(rng, tally)?;
        }
    }

    /// One batch: a launch per event (fewer with host roles once the time is up), then the
    /// watchdog, the anomaly records and the histogram so far.
    fn batch(&mut self, rng: &mut Rng, tally: &mut Tally) -> Result<(), RunError> {
        let (stream, layout, opts) = (self.stream, self.layout, self.opts);
        let host_roles = !layout.host_roles.is_empty();
        let copy = driver_err("copying to or from the GPU");
        let first = tally.launches;
        let mut shuffles = Vec::with_capacity(self.bufs.events.len());
        for ev in 0..self.bufs.events.len() {
            // With host roles every launch waits for the host threads (a launch of an
            // example's harness took 0.2 s on an H200), so a whole batch could run far past
            // the run's time: stop queuing when it is up.
            let over = self.start.elapsed() >= opts.time || self.stop.load(Ordering::Relaxed);
            if host_roles && !shuffles.is_empty() && over {
                break;
            }
            let s = Shuffle::draw(rng, layout, self.blocks);
            self.launch(ev, &s, tally)?;
            shuffles.push(s);
            tally.launches += 1;
        }
        watchdog(
            &self.bufs.events[..shuffles.len()],
            first,
            opts.launch_budget,
        )?;
        let raw = stream.clone_dtoh(&self.bufs.anom).map_err(&copy)?;
        if raw[0] > 0 {
            let found = Found {
                table: self.table,
                layout,
                program: self.program,
                blocks: self.blocks,
                first,
                shuffles: &shuffles,
            };
            found.read(&raw, &mut tally.anomalies, &mut tally.other_samples);
            stream.memset_zeros(&mut self.bufs.anom).map_err(&copy)?;
        }
        // What a hang reports: the histogram as every launch so far left it (a launch
        // that hangs later never reaches its collect kernel, so this copy is final).
        tally.partial = stream.clone_dtoh(&self.bufs.hist).map_err(&copy)?;
        tally.partial_launches = tally.launches;
        Ok(())
    }

    /// Launch number `tally.launches` under shuffle `s`: the test kernel, the host roles when
    /// the test has them, the collect kernel, and event `ev` after them.
    fn launch(&self, ev: usize, s: &Shuffle, tally: &mut Tally) -> Result<(), RunError> {
        let (stream, layout, bufs) = (self.stream, self.layout, &*self.bufs);
        let launch_err = driver_err("launching a kernel");
        let test_cfg = LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (layout.block_threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let collect_cfg = LaunchConfig {
            grid_dim: (self.ninst.div_ceil(COLLECT_THREADS), 1, 1),
            block_dim: (COLLECT_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch_no = tally.launches as u32;
        let args = self.test_args.of(s, launch_no);
        // SAFETY: the arguments match the kernel's parameters one for one (see
        // codegen), and every buffer is sized for `blocks` blocks of this layout.
        unsafe { launch_test(stream, &self.ftest, test_cfg, layout.cluster_ctas, &args) }
            .map_err(&launch_err)?;
        if !layout.host_roles.is_empty() {
            // The host roles of every instance run while the kernel does; the collect
            // kernel may read the records only once they are done.
            let w = self
                .pool
                .run_launch(launch_no, self.pool_budget)
                .map_err(|_| RunError::HostStall {
                    launch: tally.launches,
                    budget: self.pool_budget,
                })?;
            tally.unpaced += w.unpaced;
        }
        let mut c = stream.launch_builder(&self.fcollect);
        c.arg(&bufs.mem)
            .arg(&self.rec_ptr)
            .arg(&bufs.hist)
            .arg(&bufs.table)
            .arg(&bufs.forbid)
            .arg(&bufs.anom)
            .arg(&self.ninst)
            .arg(&launch_no);
        if layout.uses_host() {
            c.arg(&self.host_ptr).arg(&self.managed_ptr);
        }
        // SAFETY: as above, for the collect kernel's parameters.
        unsafe { c.launch(collect_cfg) }.map_err(&launch_err)?;
        bufs.events[ev]
            .record(stream)
            .map_err(driver_err("recording an event"))?;
        Ok(())
    }
}

/// Runs `kernel` (generated from `program`) until the time, the instance count or `stop` ends it.
/// Host roles run on CPU threads of a [`HostPool`], launch by launch.
pub fn run(
    dev: &Device,
    program: &Program,
    kernel: &Kernel,
    table: &StateTable,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<RunResult, RunError> {
    let layout = &kernel.layout;
    let blocks = launch_blocks(dev, kernel, opts)?;
    let ninst = layout.instances(blocks);
    let entered = Instant::now();
    if layout.uses_host() {
        check_host_support(dev, kernel, layout.bytes(Buffer::Managed, blocks))?;
    }
    let stream = &dev.stream;
    let module = dev
        .ctx
        .load_module(Ptx::from_src(kernel.ptx.clone()))
        .map_err(driver_err("loading the generated PTX"))?;
    let ftest = module
        .load_function(TEST_KERNEL)
        .map_err(driver_err("finding the test kernel"))?;
    let fcollect = module
        .load_function(COLLECT_KERNEL)
        .map_err(driver_err("finding the collect kernel"))?;
    let Buffers {
        dev: mut bufs,
        host,
        rec_ptr,
        host_ptr,
        managed_ptr,
        test_args,
    } = Buffers::new(dev, program, layout, table, opts, blocks)?;
    let pool = HostPool::new(layout.host_roles.len(), opts.host_workers);
    // A worker waits for the pacing word at most one launch budget; the pool as a whole gets
    // that wait plus one budget for its instances.
    let go_wait = opts.launch_budget;
    let mut tally = Tally {
        partial: vec![0u64; BINS as usize],
        ..Tally::default()
    };
    let start = Instant::now();
    let setup = start - entered;
    let mut launcher = Launcher {
        stream,
        ftest,
        fcollect,
        program,
        layout,
        table,
        opts,
        blocks,
        ninst,
        bufs: &mut bufs,
        rec_ptr,
        host_ptr,
        managed_ptr,
        test_args: &test_args,
        pool: &pool,
        pool_budget: opts.launch_budget * 2,
        start,
        stop,
    };
    let words = host.words();
    let host_run = HostRun {
        program,
        layout,
        words: &words,
        instances: ninst,
        loop_cap: kernel.loop_cap,
        go_wait,
    };
    let mut rng = Rng::new(opts.seed);
    let outcome: Result<Stop, RunError> = std::thread::scope(|scope| {
        let _quit = QuitOnDrop(&pool);
        for w in 0..pool.workers {
            let (pool, host_run) = (&pool, &host_run);
            scope.spawn(move || pool.worker(w, host_run));
        }
        launcher.launch_all(&mut rng, &mut tally)
    });
    drop(launcher);
    let hung = hang_of(&outcome);
    let (stop_reason, h) = match (outcome, hung) {
        (_, Some(hang)) => {
            // Freeing memory or unloading the module would wait for the launch that overran;
            // leave them to the process's end instead of blocking here.
            std::mem::forget((bufs, module, host));
            tally.launches = tally.partial_launches;
            (hang, std::mem::take(&mut tally.partial))
        }
        (Ok(s), None) => {
            stream
                .synchronize()
                .map_err(driver_err("finishing the run"))?;
            let copy = driver_err("copying to or from the GPU");
            (s, stream.clone_dtoh(&bufs.hist).map_err(&copy)?)
        }
        (Err(e), None) => return Err(e),
    };
    let elapsed = start.elapsed();
    let dense = h[..table.len().min(MAX_DENSE as usize)].to_vec();
    let other = h[BIN_OTHER as usize];
    let cut = h[BIN_CUT as usize];
    let instances = dense.iter().sum::<u64>() + other;
    let counted_per_launch = (0..ninst).filter(|&i| layout.counts(i)).count() as u32;
    Ok(RunResult {
        dense,
        other,
        other_samples: tally.other_samples,
        cut,
        instances,
        launches: tally.launches,
        elapsed,
        anomalies: tally.anomalies,
        stop: stop_reason,
        blocks,
        block_threads: layout.block_threads,
        instances_per_launch: counted_per_launch,
        setup,
        host_workers: pool.workers as u32,
        unpaced: tally.unpaced,
    })
}
