//! PTX generation: one module per test, holding the test kernel and the collect kernel.
//!
//! `scopecheck_test` runs one role per hardware unit (see [`crate::layout`]): a prologue computes
//! from the launch's [`Shuffle`](crate::layout::Shuffle) parameters which role and instance this
//! thread takes, spare units stress scratch memory, role threads pre-stress and then run the
//! test thread's instructions, translated one by one, on their instance's locations; each role
//! writes the registers the report prints and a status word to the instance's record.
//!
//! `scopecheck_collect` runs after it, one thread per instance: it reads the final values, resets
//! the locations and status words for the next launch, turns the final state into a dense
//! histogram index through a value table the host computed from the model's allowed states, and
//! records instances whose state is outside the table or forbidden.
//!
//! Every backward branch counts its iterations; past `loop_cap` the role stops with status
//! [`STATUS_CUT`], so no generated spin can hang the GPU.

use std::fmt::Write;

use scopecheck_ir::{
    Address, BarrierKind, BranchCond, InstrKind, IntType, LocId, MemorySpace, Operand, Program,
    RmwKind, Scope, ShflMode, Thread, ThreadId, VoteOp, WarpOp,
};

use crate::layout::{
    meets_barriers, Buffer, GenOptions, Layout, Unit, LINE_BYTES, RESERVED_BARRIER, WARP,
};
use crate::width::{fits32, wide_registers};
use crate::GenError;

/// PTX ISA version of the generated modules (CUDA 12.0 and later load it).
pub const PTX_VERSION: &str = "8.0";
/// The target: Hopper, the oldest architecture with every scope (`.cluster`) the dialect uses.
pub const PTX_TARGET: &str = "sm_90";
/// Name of the test kernel.
pub const TEST_KERNEL: &str = "scopecheck_test";
/// Name of the collect kernel.
pub const COLLECT_KERNEL: &str = "scopecheck_collect";
/// Status word of a role that ran to its end.
pub const STATUS_DONE: u32 = 1;
/// Status word of a role stopped by the iteration cap.
pub const STATUS_CUT: u32 = 2;
/// Most distinct values the value table holds per observable.
pub const MAX_VALUES: u32 = 16;
/// Most dense states (product of the table's value counts) the histogram holds.
pub const MAX_DENSE: u32 = 4096;
/// Histogram bin of states with a value outside the table.
pub const BIN_OTHER: u32 = MAX_DENSE;
/// Histogram bin of instances cut by the iteration cap.
pub const BIN_CUT: u32 = MAX_DENSE + 1;
/// Histogram bins.
pub const BINS: u32 = MAX_DENSE + 2;
/// Most anomalous instances (forbidden or out-of-table states) recorded per launch batch.
pub const MAX_ANOMALIES: u32 = 64;
/// Words of the stress scratch step between iterations: odd, so consecutive iterations of one
/// thread touch different lines and threads spread over the region.
const STRESS_STEP_WORDS: u32 = 97;
/// Multiplier spreading stress threads' starting words.
const STRESS_SPREAD_WORDS: u32 = 33;
/// Parameters both kernels take after their own when the test uses host or managed memory or
/// host threads: the device addresses of the pinned host and the managed location buffers.
const HOST_PARAMS: [&str; 2] = [".u64 p_host", ".u64 p_managed"];
/// Parameters the test kernel takes after those when the test has host threads: the device
/// address of the pacing word and the launch number, which hardware thread 0 of block 0 stores
/// there when the launch starts, so that the host threads start their instances with the kernel.
const PACING_PARAMS: [&str; 2] = [".u64 p_go", ".u32 p_launch"];
/// Parameters the test kernel takes last when some thread of the test waits for another
/// (launch order): the device address of the completion flags and this launch's epoch (the
/// launch number plus one, the value a role's flag takes when it has finished its instance).
const ORDER_PARAMS: [&str; 2] = [".u64 p_flags", ".u32 p_epoch"];
/// How long a role waits for a launch-order predecessor of its instance before it gives up
/// and the instance counts as cut (nanoseconds of `%globaltimer`). Every block of a launch is
/// resident, so a predecessor is only ever late, never unscheduled; the bound keeps a lost
/// flag from hanging the launch.
pub const ORDER_WAIT_NS: u64 = 200_000_000;

/// A generated module and the layout it assumes.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub ptx: String,
    pub layout: Layout,
    /// The iteration cap of backward branches, which host roles obey too.
    pub loop_cap: u32,
}

/// Words of one anomaly record: instance, launch, then one word per observable, two for a
/// 64-bit one (`wide`, per observable).
pub fn anomaly_words(wide: &[bool]) -> u32 {
    2 + wide.iter().map(|&w| if w { 2 } else { 1 }).sum::<u32>()
}

/// Generates the module for `program`.
pub fn generate(program: &Program, opts: &GenOptions) -> Result<Kernel, GenError> {
    let folded = crate::layout::fold_barrier_operands(program);
    let program: &Program = &folded;
    let layout = Layout::new(program, opts)?;
    let wide: Vec<Vec<bool>> = program.threads.iter().map(wide_registers).collect();
    check_values(program, &wide)?;
    let mut g = Gen {
        p: program,
        l: &layout,
        opts,
        out: String::new(),
        wide,
    };
    g.header();
    g.test_kernel()?;
    g.collect_kernel();
    Ok(Kernel {
        ptx: g.out,
        layout,
        loop_cap: opts.loop_cap,
    })
}

/// Every value must fit the word that holds it: 32 bits, except in 64-bit locations, wide
/// registers ([`wide_registers`]) and the operands of 64-bit instructions and of moves and
/// comparisons of wide registers.
fn check_values(p: &Program, wide: &[Vec<bool>]) -> Result<(), GenError> {
    let bad = |v: i64| GenError::Unsupported(format!("value {v} does not fit in 32 bits"));
    for l in &p.locations {
        if l.ty.bits != 64 && !fits32(l.init) {
            return Err(bad(l.init));
        }
    }
    for (t, w) in p.threads.iter().zip(wide) {
        let is_wide = |r: scopecheck_ir::RegId| w.get(r.0 as usize).copied().unwrap_or(false);
        for &(r, v) in &t.init_regs {
            if !fits32(v) && !is_wide(r) {
                return Err(bad(v));
            }
        }
        for i in &t.code {
            let wide_ok = match i.kind {
                InstrKind::Store { ty, .. }
                | InstrKind::Rmw { ty, .. }
                | InstrKind::Binary { ty, .. } => ty.bits == 64,
                InstrKind::Mov { dst, .. } => is_wide(dst),
                InstrKind::Branch { .. } => true,
                _ => false,
            };
            for op in operands(&i.kind) {
                if let Operand::Imm(v) = op {
                    if !fits32(v) && !wide_ok {
                        return Err(bad(v));
                    }
                }
            }
        }
    }
    Ok(())
}

fn operands(k: &InstrKind) -> Vec<Operand> {
    match k {
        InstrKind::Store { value, .. } => vec![*value],
        InstrKind::Rmw { kind, .. } => match kind {
            RmwKind::Op(_, v) => vec![*v],
            RmwKind::Cas { expected, new } => vec![*expected, *new],
        },
        InstrKind::Barrier {
            kind: BarrierKind::Red { pred, .. },
            ..
        } => vec![*pred],
        InstrKind::Mov { src, .. } => vec![*src],
        InstrKind::Binary { a, b, .. } => vec![*a, *b],
        InstrKind::Branch {
            cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
            ..
        } => vec![*a, *b],
        _ => vec![],
    }
}

fn scope(s: Scope) -> &'static str {
    match s {
        // PTX has no thread or warp scope; the CTA scope includes both, which is a valid (if
        // stronger) implementation of the narrower scope.
        Scope::Thread | Scope::Warp | Scope::Cta => "cta",
        Scope::Cluster => "cluster",
        Scope::Gpu => "gpu",
        Scope::Sys => "sys",
    }
}

fn imm(v: i64) -> String {
    // Values were checked to fit 32 bits; print them as the signed 32-bit word they are.
    (v as i32).to_string()
}

/// An immediate operand of an instruction of type `ty`: the same 32-bit word, spelled as a value
/// of the type (`4294967295`, not `-1`, for a `.u32` operand).
fn imm_in(v: i64, ty: IntType) -> String {
    if ty.signed {
        imm(v)
    } else {
        (v as u32).to_string()
    }
}

/// The PTX type suffix of a 32-bit operation that depends on signedness (`s32`, `u32`).
fn int32(ty: IntType) -> &'static str {
    if ty.signed {
        "s32"
    } else {
        "u32"
    }
}

/// The location an address names. [`Layout::new`] refuses pointer accesses, so every address the
/// generator meets names one.
fn named(a: &Address) -> Result<LocId, GenError> {
    a.named_loc().ok_or_else(|| {
        GenError::Unsupported("an access through a pointer has no PTX form in the runner".into())
    })
}

struct Gen<'a> {
    p: &'a Program,
    l: &'a Layout,
    opts: &'a GenOptions,
    out: String,
    /// Per thread, per register, whether the kernel holds it in 64 bits.
    wide: Vec<Vec<bool>>,
}

/// Appends one line of PTX; writing to a `String` cannot fail.
macro_rules! e {
    ($g:expr, $($arg:tt)*) => {{
        let _ = writeln!($g.out, $($arg)*);
    }};
}

mod collect;
mod instr;

impl Gen<'_> {
    fn header(&mut self) {
        e!(
            self,
            "// Generated by scopecheck from litmus test {}",
            self.p.name
        );
        e!(
            self,
            "// layout: {:?}, {} threads per block, {} groups, {} instance slots per block set",
            self.l.unit,
            self.l.block_threads,
            self.l.groups.len(),
            self.l.slots
        );
        e!(self, ".version {PTX_VERSION}");
        e!(self, ".target {PTX_TARGET}");
        e!(self, ".address_size 64");
        e!(self, "");
    }

    fn space(&self, loc: LocId) -> &'static str {
        match self.p.location(loc).space {
            MemorySpace::Shared => "shared",
            _ => "global",
        }
    }

    fn reg(t: ThreadId, r: scopecheck_ir::RegId) -> String {
        format!("%v{}_{}", t.0, r.0)
    }

    /// The operand as a 32-bit register name, moving an immediate into temporary `tmp` first,
    /// and a wide register's low word (what the IR reads of it in a 32-bit instruction: it
    /// wraps every operand to the instruction's type).
    fn opnd(&mut self, t: ThreadId, op: Operand, tmp: &str) -> String {
        match op {
            Operand::Reg(r) if self.is_wide(t, r) => {
                e!(self, "\tcvt.u32.u64 \t{tmp}, {};", Self::reg(t, r));
                tmp.to_string()
            }
            Operand::Reg(r) => Self::reg(t, r),
            Operand::Imm(v) => {
                e!(self, "\tmov.b32 \t{tmp}, {};", imm(v));
                tmp.to_string()
            }
        }
    }

    /// A warp collective. The lane layout puts every test thread at its own lane of one
    /// hardware warp per test warp, so the test's masks and lane operands are used as they are.
    /// A result the test does not keep goes to a scratch register.
    fn collective(
        &mut self,
        t: ThreadId,
        op: WarpOp,
        mask: Operand,
        value: Operand,
        dst: Option<scopecheck_ir::RegId>,
        pred_dst: Option<scopecheck_ir::RegId>,
    ) {
        let m = self.opnd(t, mask, "%x13");
        let d = dst.map_or_else(|| "%x15".to_string(), |r| Self::reg(t, r));
        match op {
            WarpOp::Sync => e!(self, "\tbar.warp.sync \t{m};"),
            WarpOp::ActiveMask => e!(self, "\tactivemask.b32 \t{d};"),
            WarpOp::Shfl { mode, lane, clamp } => {
                let v = self.opnd(t, value, "%x12");
                let b = self.opnd(t, lane, "%x14");
                let c = self.opnd(t, clamp, "%xi");
                let mode = match mode {
                    ShflMode::Idx => "idx",
                    ShflMode::Up => "up",
                    ShflMode::Down => "down",
                    ShflMode::Bfly => "bfly",
                };
                e!(
                    self,
                    "\tshfl.sync.{mode}.b32 \t{d}|%p3, {v}, {b}, {c}, {m};"
                );
                if let Some(p) = pred_dst {
                    e!(self, "\tselp.u32 \t{}, 1, 0, %p3;", Self::reg(t, p));
                }
            }
            WarpOp::Vote(vote) => {
                let v = self.opnd(t, value, "%x12");
                e!(self, "\tsetp.ne.u32 \t%p2, {v}, 0;");
                match vote {
                    VoteOp::Ballot => e!(self, "\tvote.sync.ballot.b32 \t{d}, %p2, {m};"),
                    VoteOp::Any | VoteOp::All | VoteOp::Uni => {
                        let name = match vote {
                            VoteOp::Any => "any",
                            VoteOp::All => "all",
                            _ => "uni",
                        };
                        e!(self, "\tvote.sync.{name}.pred \t%p3, %p2, {m};");
                        e!(self, "\tselp.u32 \t{d}, 1, 0, %p3;");
                    }
                }
            }
        }
    }

    /// The address of `a` as a 64-bit register. An index into an array moves from the named
    /// element by whole elements: the layout keeps an allocation's elements in order, one line
    /// (128 bytes) apart in global, host and managed memory and one word apart in shared
    /// memory, in each instance's copy. An index the model would fault on (out of the array) is
    /// clamped into it, so the GPU never touches another instance's memory; such a run ends in
    /// a state the model does not allow and is reported as one. On a location of its own an
    /// index is the address dependency `[x+r]`, where any value but 0 is a fault in the model
    /// and leaves the location here.
    fn addr(&mut self, t: ThreadId, a: &Address) -> Result<String, GenError> {
        let loc = named(a)?;
        let base = format!("%a{}", loc.0);
        let (first, len) = self.p.allocation_of(loc);
        let index = a.reg().map(|r| {
            if self.is_wide(t, r) {
                // A 64-bit index: past the 32-bit range it is out of the array either way.
                e!(self, "\tmin.u64 \t%d5, {}, 4294967295;", Self::reg(t, r));
                e!(self, "\tcvt.u32.u64 \t%xi, %d5;");
                "%xi".to_string()
            } else {
                Self::reg(t, r)
            }
        });
        Ok(match index {
            None => base,
            Some(r) if len > 1 => {
                let off = loc.0 - first.0;
                let stride = if self.space(loc) == "shared" {
                    4
                } else {
                    LINE_BYTES
                };
                e!(self, "	add.u32 	%xi, {r}, {off};");
                e!(self, "	min.u32 	%xi, %xi, {};", len - 1);
                e!(self, "	sub.s32 	%xi, %xi, {off};");
                e!(self, "	mul.wide.s32 	%d3, %xi, {stride};");
                e!(self, "	add.s64 	%d3, {base}, %d3;");
                "%d3".into()
            }
            Some(r) => {
                e!(self, "\tmul.wide.s32 \t%d3, {r}, 4;");
                e!(self, "\tadd.s64 \t%d3, {base}, %d3;");
                "%d3".into()
            }
        })
    }

    /// The base register and byte offset from it of `loc`'s copy of the current instance, for a
    /// location outside shared memory.
    fn loc_base(&self, loc: LocId) -> Option<(&'static str, u32)> {
        self.l.place(loc).map(|(buf, i)| {
            let base = match buf {
                Buffer::Device => "%ibase",
                Buffer::Host => "%hbase",
                Buffer::Managed => "%mbase",
            };
            (base, i * LINE_BYTES)
        })
    }

    fn shared_index(&self, loc: LocId) -> Option<u32> {
        self.l
            .shared
            .iter()
            .position(|&g| g == loc)
            .map(|i| i as u32)
    }

    /// Emits `%ibase = mem + offset of instance %inst's line block`, mirroring
    /// [`Layout::global_offset`].
    fn instance_base(&mut self) {
        let w = self.l.per_line;
        let per_block = self.l.global.len().max(1) as u32 * LINE_BYTES;
        e!(self, "\tshr.u32 \t%x7, %inst, {};", w.trailing_zeros());
        e!(self, "\tand.b32 \t%x8, %inst, {};", w - 1);
        e!(self, "\tmul.wide.u32 \t%d0, %x7, {per_block};");
        e!(self, "\tmul.wide.u32 \t%d1, %x8, {};", LINE_BYTES / w);
        if self.l.has_wide_locs() {
            // A 64-bit location's copies are twice as far apart (Layout::loc_offset).
            e!(self, "\tmov.b64 \t%iline, %d1;");
        }
        e!(self, "\tadd.s64 \t%d0, %d0, %d1;");
        e!(self, "\tadd.s64 \t%ibase, %mem, %d0;");
        if self.l.uses_host() {
            for (buf, base, param) in [
                (Buffer::Host, "%hbase", "p_host"),
                (Buffer::Managed, "%mbase", "p_managed"),
            ] {
                let per_block = self.l.locs(buf).len().max(1) as u32 * LINE_BYTES;
                e!(self, "\tld.param.u64 \t%d4, [{param}];");
                e!(self, "\tcvta.to.global.u64 \t%d4, %d4;");
                e!(self, "\tmul.wide.u32 \t%d0, %x7, {per_block};");
                e!(self, "\tadd.s64 \t%d0, %d0, %d1;");
                e!(self, "\tadd.s64 \t{base}, %d4, %d0;");
            }
        }
        let words = self.l.record.words();
        e!(self, "\tmul.wide.u32 \t%d0, %inst, {};", words * 4);
        e!(self, "\tadd.s64 \t%recp, %rec, %d0;");
    }

    fn test_kernel(&mut self) -> Result<(), GenError> {
        let has_shared = !self.l.shared.is_empty();
        self.test_entry(has_shared);
        self.test_pointers();
        self.logical_cluster();
        self.logical_unit();
        self.dispatch(has_shared);
        let p = self.p;
        for (ti, t) in p.threads.iter().enumerate() {
            // Host roles run on CPU threads (crate::host), not in the kernel.
            if !self.l.host_roles.contains(&ThreadId(ti as u32)) {
                self.role(ThreadId(ti as u32), t)?;
            }
        }
        self.test_final(has_shared);
        Ok(())
    }

    /// The shared locations, the parameters and the registers of the test kernel.
    fn test_entry(&mut self, has_shared: bool) {
        let l = self.l;
        if has_shared {
            e!(
                self,
                ".shared .align 4 .b32 s_loc[{}];",
                l.shared_words().max(1)
            );
            e!(self, "");
        }
        e!(self, ".visible .entry {TEST_KERNEL}(");
        let params = [
            ".u64 p_mem",
            ".u64 p_rec",
            ".u64 p_scratch",
            ".u32 p_scratch_mask",
            ".u32 p_nblocks",
            ".u32 p_bmul",
            ".u32 p_badd",
            ".u32 p_tmul",
            ".u32 p_tadd",
            ".u32 p_txor",
            ".u32 p_rot",
            ".u32 p_wrot",
            ".u32 p_stress_iters",
            ".u32 p_pre_iters",
            ".u32 p_zero",
        ];
        let mut params = params.to_vec();
        if l.uses_host() {
            params.extend(HOST_PARAMS);
        }
        if !l.host_roles.is_empty() {
            params.extend(PACING_PARAMS);
        }
        if l.has_order() {
            params.extend(ORDER_PARAMS);
        }
        self.entry_head(
            &params,
            "%t_id, %b_id, %lb, %g, %set, %sub, %slot, %inst, %loops, %status, %n_iter",
            "%mem, %rec, %scratch, %recp, %ibase, %sbase",
            l.uses_host(),
        );
        e!(self, "\t.reg .b32 \t%zero;");
        if l.has_order() {
            e!(self, "\t.reg .b64 \t%fbase, %owait;");
            e!(self, "\t.reg .b32 \t%epoch;");
        }
        for (ti, t) in self.p.threads.iter().enumerate() {
            for (bits, want) in [(32, false), (64, true)] {
                let names: Vec<String> = (0..t.registers.len())
                    .filter(|&r| self.wide[ti].get(r).copied().unwrap_or(false) == want)
                    .map(|r| format!("%v{ti}_{r}"))
                    .collect();
                if !names.is_empty() {
                    e!(self, "\t.reg .b{bits} \t{};", names.join(", "));
                }
            }
        }
        if self.wide.iter().flatten().any(|&w| w) {
            // The 32-bit result of an instruction writing a wide register, before it is
            // extended as the instruction's type says.
            e!(self, "\t.reg .b32 \t%xw;");
        }
        let addrs: Vec<String> = (0..self.p.locations.len())
            .map(|i| format!("%a{i}"))
            .collect();
        if !addrs.is_empty() {
            e!(self, "\t.reg .b64 \t{};", addrs.join(", "));
        }
    }

    /// The buffers' addresses; with host threads, thread 0 of block 0 tells them the launch
    /// has started.
    fn test_pointers(&mut self) {
        let l = self.l;
        e!(self, "");
        e!(self, "\tld.param.u64 \t%mem, [p_mem];");
        e!(self, "\tcvta.to.global.u64 \t%mem, %mem;");
        e!(self, "\tld.param.u64 \t%rec, [p_rec];");
        e!(self, "\tcvta.to.global.u64 \t%rec, %rec;");
        e!(self, "\tld.param.u64 \t%scratch, [p_scratch];");
        e!(self, "\tcvta.to.global.u64 \t%scratch, %scratch;");
        e!(self, "\tld.param.u32 \t%zero, [p_zero];");
        e!(self, "\tmov.u32 \t%t_id, %tid.x;");
        e!(self, "\tmov.u32 \t%b_id, %ctaid.x;");
        if !l.host_roles.is_empty() {
            e!(
                self,
                "\t// pacing: thread 0 of block 0 tells the host threads this launch has started"
            );
            e!(self, "\tor.b32 \t%x0, %t_id, %b_id;");
            e!(self, "\tsetp.ne.u32 \t%p0, %x0, 0;");
            e!(self, "\t@%p0 bra \tGO_DONE;");
            e!(self, "\tld.param.u64 \t%d4, [p_go];");
            e!(self, "\tcvta.to.global.u64 \t%d4, %d4;");
            e!(self, "\tld.param.u32 \t%x0, [p_launch];");
            e!(self, "\tst.relaxed.sys.global.u32 \t[%d4], %x0;");
            e!(self, "GO_DONE:");
        }
    }

    /// `%g` and `%set`: the test cluster (group) and block set of this CTA.
    fn logical_cluster(&mut self) {
        let l = self.l;
        let c = l.cluster_ctas;
        let kc = l.clusters.len() as u32;
        e!(
            self,
            "\t// logical cluster: (cluster * bmul + badd) % clusters; test cluster and set"
        );
        if c > 1 {
            e!(self, "\tmov.u32 \t%x3, %clusterid.x;");
            e!(self, "\tmov.u32 \t%x4, %cluster_ctarank;");
        } else {
            e!(self, "\tmov.u32 \t%x3, %b_id;");
            e!(self, "\tmov.u32 \t%x4, 0;");
        }
        e!(self, "\tld.param.u32 \t%x0, [p_bmul];");
        e!(self, "\tld.param.u32 \t%x1, [p_badd];");
        e!(self, "\tld.param.u32 \t%x2, [p_nblocks];");
        if c > 1 {
            e!(self, "\tdiv.u32 \t%x2, %x2, {c};");
        }
        e!(self, "\tmul.wide.u32 \t%d0, %x3, %x0;");
        e!(self, "\tcvt.u64.u32 \t%d1, %x1;");
        e!(self, "\tadd.s64 \t%d0, %d0, %d1;");
        e!(self, "\tcvt.u64.u32 \t%d1, %x2;");
        e!(self, "\trem.u64 \t%d0, %d0, %d1;");
        e!(self, "\tcvt.u32.u64 \t%lb, %d0;");
        e!(self, "\tdiv.u32 \t%set, %lb, {kc};");
        if c > 1 || l.clusters.iter().enumerate().any(|(i, m)| m != &[i as u32]) {
            // group = clusters[lb % kc][rank]; a rank with no CTA of its test cluster stresses
            // (group k matches no role).
            e!(self, "\trem.u32 \t%x3, %lb, {kc};");
            e!(self, "\tmad.lo.u32 \t%x3, %x3, {c}, %x4;");
            e!(self, "\tmov.u32 \t%g, {};", l.groups.len());
            for (ci, members) in l.clusters.iter().enumerate() {
                for (rank, &g) in members.iter().enumerate() {
                    e!(
                        self,
                        "\tsetp.eq.u32 \t%p0, %x3, {};",
                        ci as u32 * c + rank as u32
                    );
                    e!(self, "\t@%p0 mov.u32 \t%g, {g};");
                }
            }
        } else {
            e!(self, "\trem.u32 \t%g, %lb, {kc};");
        }
    }

    /// `%sub`, `%slot` and `%p6`: this thread's unit in its group and its instance slot, and
    /// whether it runs a role.
    fn logical_unit(&mut self) {
        let l = self.l;
        let c = l.cluster_ctas;
        e!(self, "\tld.param.u32 \t%x0, [p_tmul];");
        e!(self, "\tld.param.u32 \t%x1, [p_tadd];");
        e!(self, "\tld.param.u32 \t%x2, [p_txor];");
        match l.unit {
            Unit::Thread => {
                e!(
                    self,
                    "\t// logical thread: ((tid * tmul + tadd) & (n - 1)) ^ txor"
                );
                e!(self, "\tmad.lo.u32 \t%x3, %t_id, %x0, %x1;");
                e!(self, "\tand.b32 \t%x3, %x3, {};", l.block_threads - 1);
                e!(self, "\txor.b32 \t%x3, %x3, %x2;");
                e!(self, "\tsetp.lt.u32 \t%p6, %x3, {};", l.role_units);
                e!(self, "\trem.u32 \t%sub, %x3, {};", l.roles_per_slot);
                e!(self, "\tdiv.u32 \t%slot, %x3, {};", l.roles_per_slot);
            }
            Unit::Warp { .. } => {
                e!(self, "\t// logical warp: (warp + wrot) % warps; logical lane: ((lane * tmul + tadd) & 31) ^ (txor & 31)");
                e!(self, "\tld.param.u32 \t%x4, [p_wrot];");
                e!(self, "\tshr.u32 \t%x3, %t_id, 5;");
                e!(self, "\tadd.u32 \t%x3, %x3, %x4;");
                e!(self, "\trem.u32 \t%sub, %x3, {};", l.block_threads / WARP);
                e!(self, "\tsetp.lt.u32 \t%p6, %sub, {};", l.role_units);
                e!(self, "\tand.b32 \t%x3, %t_id, {};", WARP - 1);
                e!(self, "\tmad.lo.u32 \t%x3, %x3, %x0, %x1;");
                e!(self, "\tand.b32 \t%x3, %x3, {};", WARP - 1);
                e!(self, "\tand.b32 \t%x2, %x2, {};", WARP - 1);
                e!(self, "\txor.b32 \t%slot, %x3, %x2;");
            }
            Unit::Lanes { warps } => {
                e!(
                    self,
                    "\t// logical warp: (warp + wrot) % warps; the lane is the test's lane"
                );
                e!(self, "\tld.param.u32 \t%x4, [p_wrot];");
                e!(self, "\tshr.u32 \t%x3, %t_id, 5;");
                e!(self, "\tadd.u32 \t%x3, %x3, %x4;");
                e!(self, "\trem.u32 \t%x3, %x3, {};", l.block_threads / WARP);
                e!(self, "\tsetp.lt.u32 \t%p6, %x3, {};", l.role_units);
                e!(self, "\tdiv.u32 \t%slot, %x3, {warps};");
                e!(self, "\trem.u32 \t%x3, %x3, {warps};");
                e!(self, "\tand.b32 \t%x4, %t_id, {};", WARP - 1);
                e!(self, "\tmad.lo.u32 \t%sub, %x3, {WARP}, %x4;");
            }
        }
        if l.clusters.iter().any(|m| (m.len() as u32) < c) {
            e!(self, "\t// a spare rank of a smaller cluster runs no role");
            e!(self, "\tsetp.lt.u32 \t%p4, %g, {};", l.groups.len());
            e!(self, "\tand.pred \t%p6, %p6, %p4;");
        }
    }

    /// `%inst`, the role code `%x6` and the branch to the role (or to the stress loop).
    fn dispatch(&mut self, has_shared: bool) {
        let l = self.l;
        e!(
            self,
            "\t// instance: set * slots + (slot + group * rot) % slots"
        );
        e!(self, "\tld.param.u32 \t%x0, [p_rot];");
        e!(self, "\tmad.lo.u32 \t%x5, %g, %x0, %slot;");
        e!(self, "\trem.u32 \t%x5, %x5, {};", l.slots);
        e!(self, "\tmad.lo.u32 \t%inst, %set, {}, %x5;", l.slots);
        if let Unit::Warp {
            lane_instances: false,
            ..
        } = l.unit
        {
            e!(
                self,
                "\t// bar.red layout: only lane 0 of the instance slots is counted"
            );
            e!(self, "\tsetp.eq.u32 \t%p7, %x5, 0;");
        }
        // Which role: a group's roles are its first units; others stress.
        e!(self, "\tmad.lo.u32 \t%x6, %g, {}, %sub;", l.roles_per_slot);
        if has_shared {
            self.shared_prologue();
        }
        e!(self, "\t@!%p6 bra \tSTRESS;");
        self.instance_base();
        if l.has_order() {
            self.flag_base();
        }
        e!(self, "\tld.param.u32 \t%n_iter, [p_pre_iters];");
        self.stress_loop("PRE");
        for (gi, grp) in l.groups.iter().enumerate() {
            for (&t, &sub) in grp.roles.iter().zip(&grp.subs) {
                let code = gi as u32 * l.roles_per_slot + sub;
                e!(self, "\tsetp.eq.u32 \t%p0, %x6, {code};");
                e!(self, "\t@%p0 bra \tROLE_{};", t.0);
            }
        }
        e!(self, "STRESS:");
        e!(self, "\tld.param.u32 \t%n_iter, [p_stress_iters];");
        self.stress_loop("STR");
        e!(self, "\tbra.uni \tFINAL;");
    }

    /// `FINAL`: with shared memory, the slot's first role copies the final shared values to
    /// the record.
    fn test_final(&mut self, has_shared: bool) {
        e!(self, "FINAL:");
        if has_shared {
            e!(self, "\tbarrier.sync \t{RESERVED_BARRIER};");
            e!(
                self,
                "\t// the slot's first role copies the final shared values to the record"
            );
            e!(self, "\tsetp.eq.and.u32 \t%p5, %sub, 0, %p6;");
            e!(self, "\t@!%p5 bra \tDONE;");
            let regs = self.l.record.reg_words();
            for (k, &loc) in self.l.record.shared.clone().iter().enumerate() {
                let si = self.shared_index(loc).unwrap_or(0);
                e!(self, "\tld.shared.u32 \t%x0, [%sbase+{}];", si * 4);
                e!(
                    self,
                    "\tst.global.u32 \t[%recp+{}], %x0;",
                    (regs + k as u32) * 4
                );
            }
            e!(self, "DONE:");
        }
        e!(self, "\tret;");
        e!(self, "}}");
        e!(self, "");
    }

    /// Shared locations live per slot in the block's `s_loc`; the slot's first role sets their
    /// initial values and the whole block waits at the reserved barrier before any role runs.
    fn shared_prologue(&mut self) {
        let n = self.l.shared.len() as u32;
        e!(self, "\tmov.u64 \t%sbase, s_loc;");
        e!(self, "\tmul.wide.u32 \t%d0, %slot, {};", n * 4);
        e!(self, "\tadd.s64 \t%sbase, %sbase, %d0;");
        e!(self, "\tsetp.eq.and.u32 \t%p5, %sub, 0, %p6;");
        e!(self, "\t@!%p5 bra \tSHARED_READY;");
        for (i, &loc) in self.l.shared.clone().iter().enumerate() {
            let init = self.p.location(loc).init;
            e!(self, "\tmov.b32 \t%x0, {};", imm(init));
            e!(self, "\tst.shared.u32 \t[%sbase+{}], %x0;", i * 4);
        }
        e!(self, "SHARED_READY:");
        e!(self, "\tbarrier.sync \t{RESERVED_BARRIER};");
    }

    /// `%n_iter` rounds of volatile load-increment-store on scratch lines spread by thread.
    fn stress_loop(&mut self, tag: &str) {
        e!(self, "\tld.param.u32 \t%x9, [p_scratch_mask];");
        e!(
            self,
            "\tmad.lo.u32 \t%x10, %b_id, {}, %t_id;",
            self.l.block_threads
        );
        e!(self, "\tmul.lo.u32 \t%x10, %x10, {STRESS_SPREAD_WORDS};");
        e!(self, "\tmov.u32 \t%x11, 0;");
        e!(self, "{tag}_LOOP:");
        e!(self, "\tsetp.ge.u32 \t%p1, %x11, %n_iter;");
        e!(self, "\t@%p1 bra \t{tag}_DONE;");
        e!(self, "\tand.b32 \t%x12, %x10, %x9;");
        e!(self, "\tmul.wide.u32 \t%d2, %x12, 4;");
        e!(self, "\tadd.s64 \t%d2, %scratch, %d2;");
        e!(self, "\tld.volatile.global.u32 \t%x13, [%d2];");
        e!(self, "\tadd.u32 \t%x13, %x13, 1;");
        e!(self, "\tst.volatile.global.u32 \t[%d2], %x13;");
        e!(self, "\tadd.u32 \t%x10, %x10, {STRESS_STEP_WORDS};");
        e!(self, "\tadd.u32 \t%x11, %x11, 1;");
        e!(self, "\tbra.uni \t{tag}_LOOP;");
        e!(self, "{tag}_DONE:");
    }

    fn role(&mut self, t: ThreadId, th: &Thread) -> Result<(), GenError> {
        let n = th.code.len();
        e!(self, "ROLE_{}:\t// {}", t.0, th.name);
        for r in 0..th.registers.len() {
            let init = th
                .init_regs
                .iter()
                .find(|(id, _)| id.0 as usize == r)
                .map_or(0, |&(_, v)| v);
            if self.is_wide(t, scopecheck_ir::RegId(r as u32)) {
                e!(self, "\tmov.b64 \t%v{}_{r}, {init};", t.0);
            } else {
                e!(self, "\tmov.b32 \t%v{}_{r}, {};", t.0, imm(init));
            }
        }
        e!(self, "\tmov.u32 \t%loops, 0;");
        e!(self, "\tmov.u32 \t%status, {STATUS_DONE};");
        self.await_predecessors(t);
        let mut used: Vec<LocId> = th.code.iter().filter_map(|i| i.kind.named_loc()).collect();
        used.sort();
        used.dedup();
        for loc in used {
            if let Some((base, off)) = self.loc_base(loc) {
                e!(self, "\tadd.s64 \t%a{}, {base}, {off};", loc.0);
                if self.is_wide_loc(loc) {
                    e!(self, "\tadd.s64 \t%a{0}, %a{0}, %iline;", loc.0);
                }
            } else if let Some(si) = self.shared_index(loc) {
                e!(self, "\tadd.s64 \t%a{}, %sbase, {};", loc.0, si * 4);
            }
        }
        let targets: Vec<usize> = th
            .code
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::Branch { target, .. } => Some(target),
                _ => None,
            })
            .collect();
        for (idx, instr) in th.code.iter().enumerate() {
            if targets.contains(&idx) {
                e!(self, "R{}_I{idx}:", t.0);
            }
            e!(self, "\t// {}", instr.text.replace('\n', " "));
            self.instr(t, idx, n, &instr.kind)?;
        }
        e!(self, "R{}_END:", t.0);
        for (k, &(tt, r)) in self.l.record.regs.clone().iter().enumerate() {
            if tt != t {
                continue;
            }
            let at = self.l.record.reg_word(k) * 4;
            if self.is_wide(t, r) {
                // Two words, low word first (the record is 4-byte aligned only).
                e!(self, "\tmov.b64 \t{{%x12, %x13}}, {};", Self::reg(t, r));
                e!(self, "\tst.global.u32 \t[%recp+{at}], %x12;");
                e!(self, "\tst.global.u32 \t[%recp+{}], %x13;", at + 4);
            } else {
                e!(self, "\tst.global.u32 \t[%recp+{at}], {};", Self::reg(t, r));
            }
        }
        e!(
            self,
            "\tst.global.u32 \t[%recp+{}], %status;",
            self.l.record.status_word(t) * 4
        );
        if let Some(k) = self.l.flag_word(0, t) {
            // Finished (or cut): the roles launched after this one may start on this instance.
            e!(
                self,
                "\t// launch order: {} has finished this instance",
                th.name
            );
            e!(
                self,
                "\tst.release.sys.global.u32 \t[%fbase+{}], %epoch;",
                k * 4
            );
        }
        e!(self, "\tbra.uni \tFINAL;");
        e!(self, "R{}_CUT:", t.0);
        e!(self, "\tmov.u32 \t%status, {STATUS_CUT};");
        e!(self, "\tbra.uni \tR{}_END;", t.0);
        Ok(())
    }

    /// Emits `%fbase` (this instance's completion flags) and `%epoch`, mirroring
    /// [`Layout::flag_word`].
    fn flag_base(&mut self) {
        e!(self, "\tld.param.u64 \t%fbase, [p_flags];");
        e!(self, "\tcvta.to.global.u64 \t%fbase, %fbase;");
        e!(
            self,
            "\tmul.wide.u32 \t%d0, %inst, {};",
            self.l.flags_per_instance() * 4
        );
        e!(self, "\tadd.s64 \t%fbase, %fbase, %d0;");
        e!(self, "\tld.param.u32 \t%epoch, [p_epoch];");
    }

    /// Launch order: before its first instruction, role `t` waits until every thread it is
    /// launched after has finished this instance (acquire at system scope pairs with the
    /// predecessor's release of its flag, so all it did is visible), at most
    /// [`ORDER_WAIT_NS`]; past that the role is cut.
    fn await_predecessors(&mut self, t: ThreadId) {
        let waits = self.l.waits[t.0 as usize].clone();
        if waits.is_empty() {
            return;
        }
        // A role that meets barriers must arrive at them whatever happens, or its CTA hangs:
        // past the bound it runs anyway, with its instance marked cut.
        let barriers = meets_barriers(&self.p.threads[t.0 as usize]);
        e!(self, "\tmov.u64 \t%owait, %globaltimer;");
        for a in waits {
            let Some(k) = self.l.flag_word(0, a) else {
                continue;
            };
            let name = &self.p.threads[a.0 as usize].name;
            e!(
                self,
                "\t// launch order: wait for {name} to finish this instance"
            );
            e!(self, "R{}_WAIT_{}:", t.0, a.0);
            e!(
                self,
                "\tld.acquire.sys.global.u32 \t%x0, [%fbase+{}];",
                k * 4
            );
            e!(self, "\tsetp.eq.u32 \t%p0, %x0, %epoch;");
            e!(self, "\t@%p0 bra \tR{}_GO_{};", t.0, a.0);
            e!(self, "\tmov.u64 \t%d0, %globaltimer;");
            e!(self, "\tsub.s64 \t%d0, %d0, %owait;");
            e!(self, "\tsetp.gt.u64 \t%p0, %d0, {ORDER_WAIT_NS};");
            if barriers {
                e!(self, "\t@%p0 mov.u32 \t%status, {STATUS_CUT};");
                e!(self, "\t@%p0 bra \tR{}_GO_{};", t.0, a.0);
            } else {
                e!(self, "\t@%p0 bra \tR{}_CUT;", t.0);
            }
            e!(self, "\tnanosleep.u32 \t64;");
            e!(self, "\tbra \tR{}_WAIT_{};", t.0, a.0);
            e!(self, "R{}_GO_{}:", t.0, a.0);
        }
    }

    fn label(t: ThreadId, target: usize, n: usize) -> String {
        if target >= n {
            format!("R{}_END", t.0)
        } else {
            format!("R{}_I{target}", t.0)
        }
    }

    /// The parameter list and register declarations every kernel of the module starts with:
    /// scratch predicates and registers, the kernel's own named registers (`b32`, `b64`), and
    /// the host-memory bases when the test uses host memory.
    fn entry_head(&mut self, params: &[&str], b32: &str, b64: &str, host: bool) {
        for (i, p) in params.iter().enumerate() {
            let sep = if i + 1 < params.len() { "," } else { "" };
            e!(self, "\t.param {p}{sep}");
        }
        e!(self, ")");
        e!(self, "{{");
        e!(self, "\t.reg .pred \t%p<8>;");
        e!(self, "\t.reg .b32 \t%x<16>, %xi;");
        e!(self, "\t.reg .b64 \t%d<8>;");
        e!(self, "\t.reg .b32 \t{b32};");
        e!(self, "\t.reg .b64 \t{b64};");
        if host {
            e!(self, "\t.reg .b64 \t%hbase, %mbase;");
        }
        if self.l.has_wide_locs() {
            e!(self, "\t.reg .b64 \t%iline;");
        }
    }

    /// Whether the kernel holds register `r` of thread `t` in 64 bits.
    fn is_wide(&self, t: ThreadId, r: scopecheck_ir::RegId) -> bool {
        self.wide
            .get(t.0 as usize)
            .and_then(|w| w.get(r.0 as usize))
            .copied()
            .unwrap_or(false)
    }

    /// Whether `loc` is a 64-bit location outside shared memory.
    fn is_wide_loc(&self, loc: LocId) -> bool {
        self.l
            .place(loc)
            .is_some_and(|(b, i)| self.l.is_wide_at(b, i))
    }
}

#[cfg(test)]
mod tests;
