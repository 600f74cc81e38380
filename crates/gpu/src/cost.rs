//! Microbenchmarks: what each order and scope costs on this GPU.
//!
//! - *Latency*: one thread runs a dependent chain of one operation (each address depends on the
//!   value the previous access returned, which is 0 at run time, so the hardware cannot overlap
//!   them) and times it with `%clock64`; loads and RMWs on device, shared and host-mapped memory.
//! - *Store + fence*: a loop of a weak store followed by a fence; the store alone is measured too.
//! - *Round trips*: two parties pass a token through one flag (release store, acquire-load spin):
//!   two warps of one block in shared memory, two blocks in global memory, and a device thread
//!   with a host thread in pinned host-mapped memory. Every spin is bounded.

use std::fmt::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::{sys, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use scopecheck_ir::Scope;

use crate::driver::{driver_err, Device};
use crate::RunError;

/// Iterations of each timed chain.
pub const CHAIN_ITERS: u32 = 2048;
/// Round trips timed per flag benchmark.
pub const ROUND_TRIPS: u32 = 2000;
/// Most polls of one spin before the benchmark gives up (so a lost token cannot hang the GPU).
pub const SPIN_CAP: u32 = 1 << 24;
/// How long the host side of the host-device round trip waits for one token.
const HOST_SPIN_LIMIT: Duration = Duration::from_secs(2);

/// Where the accessed word lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Device,
    Shared,
    HostMapped,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Device => "device",
            Space::Shared => "shared",
            Space::HostMapped => "host-mapped",
        }
    }
}

/// One timed operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A load: `None` weak, `Some((sem, scope))` strong; `volatile` for `ld.volatile`.
    Load(Option<(&'static str, Scope)>),
    LoadVolatile,
    /// `atom.SEM.SCOPE.add`.
    Rmw(&'static str, Scope),
    /// A store alone: `None` weak, else `(sem, scope)`.
    Store(Option<(&'static str, Scope)>),
    /// A weak store then `fence.SEM.SCOPE`.
    StoreFence(&'static str, Scope),
}

impl Op {
    pub fn label(self) -> String {
        match self {
            Op::Load(None) => "ld.weak".into(),
            Op::Load(Some((sem, s))) => format!("ld.{sem}.{s}"),
            Op::LoadVolatile => "ld.volatile".into(),
            Op::Rmw(sem, s) => format!("atom.{sem}.{s}.add"),
            Op::Store(None) => "st.weak".into(),
            Op::Store(Some((sem, s))) => format!("st.{sem}.{s}"),
            Op::StoreFence(sem, s) => format!("st.weak + fence.{sem}.{s}"),
        }
    }
}

/// The operations timed, each on every space.
pub fn operations() -> Vec<Op> {
    let mut ops = vec![Op::Load(None)];
    for sem in ["relaxed", "acquire"] {
        for s in [Scope::Cta, Scope::Gpu, Scope::Sys] {
            ops.push(Op::Load(Some((sem, s))));
        }
    }
    ops.push(Op::LoadVolatile);
    for sem in ["relaxed", "acq_rel"] {
        for s in [Scope::Cta, Scope::Gpu, Scope::Sys] {
            ops.push(Op::Rmw(sem, s));
        }
    }
    ops.push(Op::Store(None));
    for s in [Scope::Cta, Scope::Gpu, Scope::Sys] {
        ops.push(Op::Store(Some(("release", s))));
    }
    for sem in ["acq_rel", "sc"] {
        for s in [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys] {
            ops.push(Op::StoreFence(sem, s));
        }
    }
    ops
}

/// The spaces timed.
pub const SPACES: [Space; 3] = [Space::Device, Space::Shared, Space::HostMapped];

/// The round trips timed: label, scope, where the flag is, who the parties are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parties {
    /// Two warps of one block.
    Warps,
    /// Two blocks.
    Blocks,
    /// A device thread and a host thread.
    HostDevice,
}

/// One round-trip benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundTrip {
    pub parties: Parties,
    pub space: Space,
    pub scope: Scope,
}

impl RoundTrip {
    pub fn label(&self) -> String {
        let who = match self.parties {
            Parties::Warps => "two warps of one block",
            Parties::Blocks => "two blocks",
            Parties::HostDevice => "host thread and device thread",
        };
        format!("{who}, {} memory, .{}", self.space.name(), self.scope)
    }
}

pub fn round_trips() -> Vec<RoundTrip> {
    vec![
        RoundTrip {
            parties: Parties::Warps,
            space: Space::Shared,
            scope: Scope::Cta,
        },
        RoundTrip {
            parties: Parties::Blocks,
            space: Space::Device,
            scope: Scope::Gpu,
        },
        RoundTrip {
            parties: Parties::Blocks,
            space: Space::Device,
            scope: Scope::Sys,
        },
        RoundTrip {
            parties: Parties::Blocks,
            space: Space::HostMapped,
            scope: Scope::Sys,
        },
        RoundTrip {
            parties: Parties::HostDevice,
            space: Space::HostMapped,
            scope: Scope::Sys,
        },
    ]
}

fn kernel_name(op_index: usize, space: Space) -> String {
    format!("lat_{op_index}_{}", space.name().replace('-', "_"))
}

fn rt_name(i: usize) -> String {
    format!("rt_{i}")
}

/// The benchmark module: one latency kernel per (operation, space) and one per round trip.
pub fn module_ptx() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// scopecheck cost microbenchmarks");
    let _ = writeln!(s, ".version 8.0\n.target sm_90\n.address_size 64\n");
    let _ = writeln!(s, ".shared .align 8 .b32 s_buf[32];\n");
    for (i, op) in operations().iter().enumerate() {
        for space in SPACES {
            latency_kernel(&mut s, &kernel_name(i, space), *op, space);
        }
    }
    for (i, rt) in round_trips().iter().enumerate() {
        round_trip_kernel(&mut s, &rt_name(i), rt);
    }
    s
}

fn latency_kernel(s: &mut String, name: &str, op: Op, space: Space) {
    let sp = if space == Space::Shared {
        "shared"
    } else {
        "global"
    };
    let _ = writeln!(
        s,
        ".visible .entry {name}(.param .u64 p_addr, .param .u64 p_out, .param .u32 p_iters)\n{{"
    );
    let _ = writeln!(
        s,
        "\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %d<8>;"
    );
    if space == Space::Shared {
        let _ = writeln!(s, "\tmov.u64 \t%d0, s_buf;\n\tst.shared.u32 \t[%d0], 0;");
    } else {
        let _ = writeln!(
            s,
            "\tld.param.u64 \t%d0, [p_addr];\n\tcvta.to.global.u64 \t%d0, %d0;"
        );
    }
    let _ = writeln!(
        s,
        "\tld.param.u32 \t%r1, [p_iters];\n\tmov.u32 \t%r0, 0;\n\tmov.u32 \t%r2, 0;\n\tmov.u32 \t%r5, 0;"
    );
    let _ = writeln!(s, "\tmov.u64 \t%d4, %clock64;\nLOOP:");
    // The address depends on the last value read (always 0), so accesses cannot overlap.
    let _ = writeln!(
        s,
        "\tmul.wide.u32 \t%d1, %r0, 4;\n\tadd.s64 \t%d2, %d0, %d1;"
    );
    let body = match op {
        Op::Load(None) => format!("\tld.{sp}.u32 \t%r0, [%d2];"),
        Op::Load(Some((sem, sc))) => format!("\tld.{sem}.{sc}.{sp}.u32 \t%r0, [%d2];"),
        Op::LoadVolatile => format!("\tld.volatile.{sp}.u32 \t%r0, [%d2];"),
        Op::Rmw(sem, sc) => format!("\tatom.{sem}.{sc}.{sp}.add.u32 \t%r0, [%d2], %r5;"),
        Op::Store(None) => format!("\tst.{sp}.u32 \t[%d2], %r5;"),
        Op::Store(Some((sem, sc))) => format!("\tst.{sem}.{sc}.{sp}.u32 \t[%d2], %r5;"),
        Op::StoreFence(sem, sc) => format!("\tst.{sp}.u32 \t[%d2], %r5;\n\tfence.{sem}.{sc};"),
    };
    let _ = writeln!(s, "{body}");
    let _ = writeln!(
        s,
        "\tadd.u32 \t%r2, %r2, 1;\n\tsetp.lt.u32 \t%p0, %r2, %r1;\n\t@%p0 bra \tLOOP;"
    );
    let _ = writeln!(
        s,
        "\tmov.u64 \t%d5, %clock64;\n\tsub.s64 \t%d5, %d5, %d4;\n\tld.param.u64 \t%d6, [p_out];\n\tcvta.to.global.u64 \t%d6, %d6;\n\tst.global.u64 \t[%d6], %d5;\n\tst.global.u32 \t[%d6+8], %r0;\n\tret;\n}}\n"
    );
}

/// Ping (block 0 thread 0) and pong (block 1 thread 0, or warp 1 of block 0, or the host).
fn round_trip_kernel(s: &mut String, name: &str, rt: &RoundTrip) {
    let sc = rt.scope;
    let sp = if rt.space == Space::Shared {
        "shared"
    } else {
        "global"
    };
    let _ = writeln!(
        s,
        ".visible .entry {name}(.param .u64 p_flag, .param .u64 p_out, .param .u32 p_iters)\n{{"
    );
    let _ = writeln!(
        s,
        "\t.reg .pred %p<4>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %d<10>;"
    );
    let _ = writeln!(s, "\tld.param.u32 \t%r1, [p_iters];\n\tld.param.u64 \t%d6, [p_out];\n\tcvta.to.global.u64 \t%d6, %d6;");
    if rt.space == Space::Shared {
        let _ = writeln!(s, "\tmov.u64 \t%d0, s_buf;");
    } else {
        let _ = writeln!(
            s,
            "\tld.param.u64 \t%d0, [p_flag];\n\tcvta.to.global.u64 \t%d0, %d0;"
        );
    }
    // Who plays which part.
    let _ = writeln!(s, "\tmov.u32 \t%r2, %tid.x;\n\tmov.u32 \t%r3, %ctaid.x;");
    if rt.space == Space::Shared {
        // Thread 0 clears the flag and every thread of the block waits for it, before the
        // parts diverge.
        let _ = writeln!(
            s,
            "\tsetp.eq.u32 \t%p2, %r2, 0;\n\t@%p2 st.shared.u32 \t[%d0], 0;\n\tbar.sync \t0;"
        );
    }
    let pong_cond = match rt.parties {
        Parties::Warps => "\tsetp.eq.u32 \t%p1, %r2, 32;",
        Parties::Blocks => "\tsetp.eq.u32 \t%p1, %r3, 1;",
        Parties::HostDevice => "\tsetp.ne.u32 \t%p1, %r2, %r2;",
    };
    let _ = writeln!(s, "{pong_cond}");
    let _ = writeln!(s, "\t@%p1 bra \tPONG;");
    let _ = writeln!(
        s,
        "\tor.b32 \t%r4, %r2, %r3;\n\tsetp.ne.u32 \t%p1, %r4, 0;\n\t@%p1 bra \tEXIT;"
    );
    let _ = writeln!(s, "\tmov.u32 \t%r9, 0;\n\tmov.u64 \t%d4, %globaltimer;\n\tmov.u64 \t%d7, %clock64;\n\tmov.u32 \t%r5, 0;");
    let _ = writeln!(
        s,
        "PING_LOOP:\n\tsetp.ge.u32 \t%p0, %r5, %r1;\n\t@%p0 bra \tPING_DONE;"
    );
    let _ = writeln!(
        s,
        "\tshl.b32 \t%r6, %r5, 1;\n\tadd.u32 \t%r7, %r6, 1;\n\tadd.u32 \t%r8, %r6, 2;"
    );
    let _ = writeln!(
        s,
        "\tst.release.{sc}.{sp}.u32 \t[%d0], %r7;\n\tmov.u32 \t%r10, 0;"
    );
    let _ = writeln!(s, "PING_SPIN:\n\tld.acquire.{sc}.{sp}.u32 \t%r11, [%d0];\n\tsetp.eq.u32 \t%p0, %r11, %r8;\n\t@%p0 bra \tPING_NEXT;");
    let _ = writeln!(s, "\tadd.u32 \t%r10, %r10, 1;\n\tsetp.lt.u32 \t%p0, %r10, {SPIN_CAP};\n\t@%p0 bra \tPING_SPIN;\n\tmov.u32 \t%r9, 1;\n\tbra.uni \tPING_DONE;");
    let _ = writeln!(
        s,
        "PING_NEXT:\n\tadd.u32 \t%r5, %r5, 1;\n\tbra.uni \tPING_LOOP;"
    );
    let _ = writeln!(s, "PING_DONE:\n\tmov.u64 \t%d5, %globaltimer;\n\tsub.s64 \t%d5, %d5, %d4;\n\tmov.u64 \t%d8, %clock64;\n\tsub.s64 \t%d8, %d8, %d7;");
    let _ = writeln!(s, "\tst.global.u64 \t[%d6], %d5;\n\tst.global.u64 \t[%d6+8], %d8;\n\tst.global.u32 \t[%d6+16], %r9;\n\tst.global.u32 \t[%d6+20], %r5;\n\tbra.uni \tEXIT;");
    let _ = writeln!(s, "PONG:");
    let _ = writeln!(s, "\tmov.u32 \t%r5, 0;");
    let _ = writeln!(
        s,
        "PONG_LOOP:\n\tsetp.ge.u32 \t%p0, %r5, %r1;\n\t@%p0 bra \tEXIT;"
    );
    let _ = writeln!(s, "\tshl.b32 \t%r6, %r5, 1;\n\tadd.u32 \t%r7, %r6, 1;\n\tadd.u32 \t%r8, %r6, 2;\n\tmov.u32 \t%r10, 0;");
    let _ = writeln!(s, "PONG_SPIN:\n\tld.acquire.{sc}.{sp}.u32 \t%r11, [%d0];\n\tsetp.eq.u32 \t%p0, %r11, %r7;\n\t@%p0 bra \tPONG_REPLY;");
    let _ = writeln!(s, "\tadd.u32 \t%r10, %r10, 1;\n\tsetp.lt.u32 \t%p0, %r10, {SPIN_CAP};\n\t@%p0 bra \tPONG_SPIN;\n\tbra.uni \tEXIT;");
    let _ = writeln!(s, "PONG_REPLY:\n\tst.release.{sc}.{sp}.u32 \t[%d0], %r8;\n\tadd.u32 \t%r5, %r5, 1;\n\tbra.uni \tPONG_LOOP;");
    let _ = writeln!(s, "EXIT:\n\tret;\n}}\n");
}

/// One latency measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    pub op: String,
    pub space: Space,
    pub cycles: f64,
}

/// One round trip measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundTripTime {
    pub label: String,
    pub ns: f64,
    pub cycles: f64,
    /// Whether every token came back within the spin cap.
    pub complete: bool,
}

/// Everything `cost` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    pub device: String,
    pub clock_khz: u32,
    pub latencies: Vec<Latency>,
    pub round_trips: Vec<RoundTripTime>,
}

/// Runs every benchmark on `dev`.
pub fn measure(dev: &Device) -> Result<Costs, RunError> {
    let stream = &dev.stream;
    let module = dev
        .ctx
        .load_module(Ptx::from_src(module_ptx()))
        .map_err(driver_err("loading the benchmark PTX"))?;
    let clock_khz = dev
        .ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
        .map_err(driver_err("reading the clock rate"))? as u32;
    let alloc = driver_err("allocating memory");
    let copy = driver_err("copying from the GPU");
    let launch = driver_err("running a benchmark");
    let dmem = stream.alloc_zeros::<u32>(64).map_err(&alloc)?;
    let out = stream.alloc_zeros::<u64>(4).map_err(&alloc)?;
    // Pinned host memory mapped into the device's address space.
    // SAFETY: the memory is zeroed below before any kernel reads it.
    let mut host = unsafe {
        dev.ctx.alloc_pinned_with_flags::<u32>(
            64,
            sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
        )
    }
    .map_err(&alloc)?;
    host.as_mut_slice().map_err(&alloc)?.fill(0);
    let host_ptr = host.as_mut_ptr().map_err(&alloc)?;
    let mut host_dev: sys::CUdeviceptr = 0;
    // SAFETY: `host_ptr` was allocated with DEVICEMAP in this context.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut host_dev, host_ptr as *mut _, 0) }
        .result()
        .map_err(driver_err("mapping host memory"))?;

    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut latencies = Vec::new();
    for (i, op) in operations().iter().enumerate() {
        for space in SPACES {
            let f = module
                .load_function(&kernel_name(i, space))
                .map_err(driver_err("finding a benchmark kernel"))?;
            let mut cycles = 0u64;
            // The first run warms caches and TLBs; the second is timed.
            for _ in 0..2 {
                let mut b = stream.launch_builder(&f);
                match space {
                    Space::HostMapped => b.arg(&host_dev),
                    _ => b.arg(&dmem),
                };
                b.arg(&out).arg(&CHAIN_ITERS);
                // SAFETY: (address, output, iterations) match the kernel's parameters.
                unsafe { b.launch(one) }.map_err(&launch)?;
                cycles = stream.clone_dtoh(&out).map_err(&copy)?[0];
            }
            latencies.push(Latency {
                op: op.label(),
                space,
                cycles: cycles as f64 / CHAIN_ITERS as f64,
            });
        }
    }

    let mut round = Vec::new();
    let mut flag_dev = stream.alloc_zeros::<u32>(32).map_err(&alloc)?;
    for (i, rt) in round_trips().iter().enumerate() {
        let f = module
            .load_function(&rt_name(i))
            .map_err(driver_err("finding a benchmark kernel"))?;
        // Reset the flag: the host side and the device side start from 0.
        host.as_mut_slice().map_err(&alloc)?.fill(0);
        let cfg = match rt.parties {
            Parties::Warps => LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (64, 1, 1),
                shared_mem_bytes: 0,
            },
            Parties::Blocks => LaunchConfig {
                grid_dim: (2, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            },
            Parties::HostDevice => one,
        };
        stream.memset_zeros(&mut flag_dev).map_err(&copy)?;
        let mut b = stream.launch_builder(&f);
        match rt.space {
            Space::HostMapped => b.arg(&host_dev),
            _ => b.arg(&flag_dev),
        };
        b.arg(&out).arg(&ROUND_TRIPS);
        // SAFETY: (flag, output, round trips) match the kernel's parameters.
        unsafe { b.launch(cfg) }.map_err(&launch)?;
        let mut complete = true;
        if rt.parties == Parties::HostDevice {
            // SAFETY: the pinned word is 4-aligned and lives until `host` is dropped; the
            // device accesses it only through atomics-compatible .sys loads and stores.
            let flag = unsafe { &*(host_ptr as *const AtomicU32) };
            'trips: for k in 0..ROUND_TRIPS {
                let waited = Instant::now();
                while flag.load(Ordering::Acquire) != 2 * k + 1 {
                    if waited.elapsed() > HOST_SPIN_LIMIT {
                        complete = false;
                        break 'trips;
                    }
                    std::hint::spin_loop();
                }
                flag.store(2 * k + 2, Ordering::Release);
            }
        }
        let r = stream.clone_dtoh(&out).map_err(&copy)?;
        let failed = (r[2] & 0xffff_ffff) != 0;
        let done = (r[2] >> 32) as f64;
        round.push(RoundTripTime {
            label: rt.label(),
            ns: r[0] as f64 / done.max(1.0),
            cycles: r[1] as f64 / done.max(1.0),
            complete: complete && !failed,
        });
    }
    Ok(Costs {
        device: dev.name.clone(),
        clock_khz,
        latencies,
        round_trips: round,
    })
}

impl Costs {
    fn cell(&self, op: &str, space: Space) -> String {
        self.latencies
            .iter()
            .find(|l| l.op == op && l.space == space)
            .map_or("–".into(), |l| format!("{:.0}", l.cycles))
    }

    /// A table like docs/H200.md's.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let ghz = self.clock_khz as f64 / 1e6;
        let _ = writeln!(
            s,
            "{}: latency of one operation in cycles (SM clock {:.2} GHz); chains of {CHAIN_ITERS}",
            self.device, ghz
        );
        let _ = writeln!(s, "| operation | device | shared | host-mapped |");
        let _ = writeln!(s, "|---|---|---|---|");
        for op in operations() {
            let l = op.label();
            let _ = writeln!(
                s,
                "| `{l}` | {} | {} | {} |",
                self.cell(&l, Space::Device),
                self.cell(&l, Space::Shared),
                self.cell(&l, Space::HostMapped)
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Round trip through one flag (release store, acquire-load spin), {ROUND_TRIPS} trips"
        );
        let _ = writeln!(s, "| parties | round trip |");
        let _ = writeln!(s, "|---|---|");
        for r in &self.round_trips {
            let note = if r.complete {
                ""
            } else {
                " (incomplete: a token was lost)"
            };
            let _ = writeln!(
                s,
                "| {} | {:.0} ns ({:.0} cycles){note} |",
                r.label, r.ns, r.cycles
            );
        }
        s
    }

    /// A cost file the checker can read to price its suggestions.
    pub fn toml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# scopecheck cost file, written by `scopecheck cost --toml`"
        );
        let _ = writeln!(s, "device = \"{}\"", self.device.replace('"', "'"));
        let _ = writeln!(s, "clock_khz = {}", self.clock_khz);
        for space in SPACES {
            let _ = writeln!(s, "\n[latency_cycles.{}]", space.name().replace('-', "_"));
            for l in self.latencies.iter().filter(|l| l.space == space) {
                let _ = writeln!(s, "\"{}\" = {:.1}", l.op, l.cycles);
            }
        }
        let _ = writeln!(s, "\n[round_trip_ns]");
        for r in &self.round_trips {
            let _ = writeln!(s, "\"{}\" = {:.0}", r.label, r.ns);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_gets_a_kernel_per_space() {
        let ptx = module_ptx();
        for (i, _) in operations().iter().enumerate() {
            for space in SPACES {
                assert!(ptx.contains(&format!(".entry {}(", kernel_name(i, space))));
            }
        }
        assert!(ptx.contains("fence.sc.sys;"));
        assert!(ptx.contains("atom.acq_rel.gpu.global.add.u32"));
        assert_eq!(ptx.matches(".entry rt_").count(), round_trips().len());
    }
}
