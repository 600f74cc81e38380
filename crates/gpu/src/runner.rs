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

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use scopecheck_ir::{Program, Value};

use crate::codegen::{
    anomaly_words, Kernel, BINS, BIN_CUT, BIN_OTHER, COLLECT_KERNEL, MAX_ANOMALIES, MAX_DENSE,
    TEST_KERNEL,
};
use crate::compare::{value, word, StateTable};
use crate::driver::{driver_err, Device};
use crate::layout::{Rng, Shuffle};
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
        }
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Time,
    Instances,
    Interrupted,
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

/// Runs `kernel` (generated from `program`) until the time, the instance count or `stop` ends it.
pub fn run(
    dev: &Device,
    program: &Program,
    kernel: &Kernel,
    table: &StateTable,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<RunResult, RunError> {
    let layout = &kernel.layout;
    let k = layout.blocks_per_set();
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
    let ninst = layout.instances(blocks);
    let entered = Instant::now();
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

    // Initial memory image: every instance's locations at their initial values.
    let mem_words = (layout.global_bytes(blocks) / 4) as usize;
    let mut image = vec![0u32; mem_words.max(1)];
    for i in 0..ninst {
        for (gi, &loc) in layout.global.iter().enumerate() {
            let at = (layout.global_offset(i, gi as u32) / 4) as usize;
            image[at] = word(program.location(loc).init);
        }
    }
    let alloc = driver_err("allocating GPU memory");
    let copy = driver_err("copying to or from the GPU");
    let mem = stream.clone_htod(&image).map_err(&copy)?;
    drop(image);
    let rec_words = ninst as usize * layout.record.words() as usize;
    let rec: CudaSlice<u32> = stream.alloc_zeros(rec_words.max(1)).map_err(&alloc)?;
    let scratch: CudaSlice<u32> = stream
        .alloc_zeros(opts.scratch_words as usize)
        .map_err(&alloc)?;
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
    let aw = anomaly_words(table.observables.len()) as usize;
    let mut anom: CudaSlice<u32> = stream
        .alloc_zeros(1 + MAX_ANOMALIES as usize * aw)
        .map_err(&alloc)?;
    stream.memset_zeros(&mut hist).map_err(&copy)?;

    let events = (0..opts.batch.max(1))
        .map(|_| dev.ctx.new_event(None))
        .collect::<Result<Vec<_>, _>>()
        .map_err(driver_err("creating events"))?;
    let mut rng = Rng::new(opts.seed);
    let test_cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (layout.block_threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let collect_cfg = LaunchConfig {
        grid_dim: (ninst.div_ceil(COLLECT_THREADS), 1, 1),
        block_dim: (COLLECT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let scratch_mask = opts.scratch_words - 1;
    let counted_per_launch = (0..ninst).filter(|&i| layout.counts(i)).count() as u64;

    let mut anomalies = Vec::new();
    let mut other_samples = Vec::new();
    let mut launches = 0u64;
    let start = Instant::now();
    let setup = start - entered;
    let launch_err = driver_err("launching a kernel");
    let stop_reason = loop {
        if stop.load(Ordering::Relaxed) {
            break Stop::Interrupted;
        }
        if start.elapsed() >= opts.time {
            break Stop::Time;
        }
        if opts
            .max_instances
            .is_some_and(|m| launches * counted_per_launch >= m)
        {
            break Stop::Instances;
        }
        let first = launches;
        let mut shuffles = Vec::with_capacity(events.len());
        for ev in &events {
            let s = Shuffle::draw(&mut rng, layout, blocks);
            let launch_no = launches as u32;
            let mut b = stream.launch_builder(&ftest);
            b.arg(&mem)
                .arg(&rec)
                .arg(&scratch)
                .arg(&scratch_mask)
                .arg(&blocks)
                .arg(&s.bmul)
                .arg(&s.badd)
                .arg(&s.tmul)
                .arg(&s.tadd)
                .arg(&s.txor)
                .arg(&s.rot)
                .arg(&s.wrot)
                .arg(&opts.stress_iters)
                .arg(&opts.pre_iters)
                .arg(&ZERO);
            // SAFETY: the arguments match the kernel's parameters one for one (see codegen),
            // and every buffer is sized for `blocks` blocks of this layout.
            unsafe { b.launch(test_cfg) }.map_err(&launch_err)?;
            let mut c = stream.launch_builder(&fcollect);
            c.arg(&mem)
                .arg(&rec)
                .arg(&hist)
                .arg(&tbl)
                .arg(&forbid)
                .arg(&anom)
                .arg(&ninst)
                .arg(&launch_no);
            // SAFETY: as above, for the collect kernel's parameters.
            unsafe { c.launch(collect_cfg) }.map_err(&launch_err)?;
            ev.record(stream)
                .map_err(driver_err("recording an event"))?;
            shuffles.push(s);
            launches += 1;
        }
        // The watchdog: each launch must end within its budget of the previous one's end.
        for (i, ev) in events.iter().enumerate() {
            let waited = Instant::now();
            loop {
                match ev.try_is_complete() {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => return Err(driver_err("running a launch")(e)),
                }
                if waited.elapsed() > opts.launch_budget {
                    // Freeing memory or unloading the module would wait for the launch that
                    // overran; leave them to the process's end instead of blocking here.
                    std::mem::forget((mem, rec, scratch, hist, tbl, forbid, anom, module, events));
                    return Err(RunError::Watchdog {
                        launch: first + i as u64,
                        budget: opts.launch_budget,
                    });
                }
                std::thread::sleep(POLL);
            }
        }
        let raw = stream.clone_dtoh(&anom).map_err(&copy)?;
        let n = raw[0].min(MAX_ANOMALIES) as usize;
        if n > 0 {
            for r in 0..n {
                let at = 1 + r * aw;
                let instance = raw[at];
                // The kernel records the launch number's low 32 bits; this batch's launches are
                // consecutive, so the offset into the batch is their difference.
                let in_batch = raw[at + 1].wrapping_sub(first as u32) as usize;
                let launch = first + in_batch as u64;
                let values: Vec<Value> = raw[at + 2..at + aw].iter().map(|&w| value(w)).collect();
                if table.index(&values).is_none() {
                    other_samples.push(values.clone());
                }
                if anomalies.len() < MAX_KEPT_ANOMALIES {
                    let Some(s) = shuffles.get(in_batch) else {
                        continue;
                    };
                    anomalies.push(Anomaly {
                        launch,
                        instance,
                        threads: layout.placement_of(s, blocks, instance, program.threads.len()),
                        values,
                    });
                }
            }
            stream.memset_zeros(&mut anom).map_err(&copy)?;
        }
    };
    stream
        .synchronize()
        .map_err(driver_err("finishing the run"))?;
    let elapsed = start.elapsed();
    let h = stream.clone_dtoh(&hist).map_err(&copy)?;
    let dense = h[..table.len().min(MAX_DENSE as usize)].to_vec();
    let other = h[BIN_OTHER as usize];
    let cut = h[BIN_CUT as usize];
    let instances = dense.iter().sum::<u64>() + other;
    Ok(RunResult {
        dense,
        other,
        other_samples,
        cut,
        instances,
        launches,
        elapsed,
        anomalies,
        stop: stop_reason,
        blocks,
        block_threads: layout.block_threads,
        instances_per_launch: counted_per_launch as u32,
        setup,
    })
}
