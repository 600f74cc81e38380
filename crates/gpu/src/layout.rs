//! Where each test thread (a *role*) runs on the GPU, and where each instance's locations and
//! results live in memory.
//!
//! One launch runs many *instances* of a test at once. The threads of the test are grouped by
//! the CTA their placement names; each group needs one hardware block per instance set, and a
//! block hosts the roles of one group for many instances. Blocks are grouped in *sets* of one
//! block per group, so instance `i` of set `s` has its group-`g` roles in one block and its other
//! groups' roles in other blocks, as the placement asks.
//!
//! *Thread randomisation*: which hardware block plays which logical block, which hardware thread
//! plays which role, and which instance slot pairs with which across groups are decided by a
//! [`Shuffle`] drawn afresh for every launch. The generated PTX computes the same mapping as
//! [`Layout::assign`], which the host uses to name the hardware threads of an instance when it
//! reports a disagreement.
//!
//! Two shapes of block exist. Tests without barriers use one hardware *thread* per role, packed
//! `roles_per_slot` to a slot. Tests with barriers use one *warp* per role (the 32 lanes of a
//! warp are 32 instances of that role) because `barrier.sync` counts threads in whole warps.
//! When a test uses `bar.red`, whose reduction would mix the lanes, only lane 0 of each warp
//! counts as an instance; the other lanes are decoys that arrive with neutral predicates.
//! Tests with warp collectives (shuffle, vote, `__syncwarp`, `__activemask`) place each test
//! warp of an instance in one hardware warp, each test thread at its own lane number
//! ([`Program::lane`]), so a collective's mask and lane operands mean on the GPU what they mean
//! in the test; the hardware warps are shuffled, the lanes are not.

use scopecheck_ir::{
    InstrKind, LocId, MemorySpace, Observable, Operand, Placement, Program, RegId, Thread,
    ThreadId, Value,
};

use crate::GenError;

/// Bytes of one L2 cache line on the GPUs we target: test locations of one instance each get a
/// line of their own, so that one instance's locations never share a line.
pub const LINE_BYTES: u32 = 128;
/// Threads per warp.
pub const WARP: u32 = 32;
/// The barrier the generated code reserves for itself (initialising and reading back shared
/// memory); tests may use barriers `0..RESERVED_BARRIER`.
pub const RESERVED_BARRIER: u32 = 15;
/// Most threads a block may have (CUDA limit).
pub const MAX_BLOCK_THREADS: u32 = 1024;
/// Default threads per block for tests without barriers.
pub const DEFAULT_BLOCK_THREADS: u32 = 256;
/// Default warps of each block kept for memory stress.
pub const DEFAULT_STRESS_WARPS: u32 = 2;
/// Default number of instances whose copies of one location share a 128-byte line: instances
/// interleaved in memory contend for lines as real data structures do. Tuned on an H200
/// (docs/hardware/h200.md): a full line of 32 instances showed the weak outcomes of the MP family
/// 2 to 4 times as often as 8, and 1 almost never.
pub const DEFAULT_PER_LINE: u32 = 32;
/// Most CTAs of one cluster the runner launches (the portable cluster size of CUDA).
pub const MAX_CLUSTER_CTAS: u32 = 8;
/// Default bound on how often one backward branch may be taken before the role gives up.
pub const DEFAULT_LOOP_CAP: u32 = 64;

/// The memory a location that is not in shared memory lives in: each has its own buffer, laid
/// out the same way (every instance's copy of a location on a line of its own, `per_line`
/// instances interleaved on one line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// Device global memory (`cuMemAlloc`).
    Device,
    /// Pinned host memory mapped into the device's address space
    /// (`cuMemHostAlloc(DEVICEMAP)`, reached through `cuMemHostGetDevicePointer`).
    Host,
    /// Managed memory (`cuMemAllocManaged`).
    Managed,
}

impl Buffer {
    pub const ALL: [Buffer; 3] = [Buffer::Device, Buffer::Host, Buffer::Managed];
}

/// Options of the generated kernel's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOptions {
    /// Threads per block for tests without barriers (a power of two, 32 to 1024). Tests with
    /// barriers use one warp per role plus the stress warps.
    pub block_threads: u32,
    /// Warps of each block that run no role and stress memory instead.
    pub stress_warps: u32,
    /// Instances whose copies of one location share a 128-byte line (a power of two, 1 to 32).
    pub per_line: u32,
    /// How often one backward branch may be taken before the role stops and the instance is
    /// counted as cut (so that a spin can never hang the GPU).
    pub loop_cap: u32,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            block_threads: DEFAULT_BLOCK_THREADS,
            stress_warps: DEFAULT_STRESS_WARPS,
            per_line: DEFAULT_PER_LINE,
            loop_cap: DEFAULT_LOOP_CAP,
        }
    }
}

/// The threads of the test that share one CTA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub cluster: u32,
    pub cta: u32,
    /// The test threads of this CTA, in thread order.
    pub roles: Vec<ThreadId>,
    /// Each role's unit code within the group (its `sub`): its index in `roles`, or in the
    /// lane layout its test warp's index in the group times 32 plus its lane.
    pub subs: Vec<u32>,
}

/// What one hardware unit (thread or warp) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// One thread per role.
    Thread,
    /// One warp per role; `lane_instances` is false when only lane 0 is a real instance. With
    /// `uniform` (a thread meets different barriers on different paths) the other lanes also
    /// take lane 0's branches, so a role warp arrives at a barrier whole or not at all, as the
    /// one test thread it plays does.
    Warp { lane_instances: bool, uniform: bool },
    /// One hardware warp per test warp, each role at its lane; `warps` test warps (the most
    /// one group has) make an instance slot.
    Lanes { warps: u32 },
}

/// The per-launch random choices of thread randomisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Shuffle {
    /// Cluster permutation `c -> (c * bmul + badd) % nclusters` (`nclusters`: blocks / CTAs per
    /// cluster; with no cluster launch a cluster is one block); `bmul` is coprime with it.
    pub bmul: u32,
    pub badd: u32,
    /// Unit permutation `t -> ((t * tmul + tadd) & (n - 1)) ^ txor`; `tmul` odd, `txor < n`.
    pub tmul: u32,
    pub tadd: u32,
    pub txor: u32,
    /// Rotation of instance slots between groups (`< slots`).
    pub rot: u32,
    /// Rotation of warps within a block (warp layout).
    pub wrot: u32,
}

/// What a hardware thread does in one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assignment {
    /// Runs `role` (an index into the program's threads) of `instance`.
    Role { instance: u32, role: ThreadId },
    /// Stresses memory (spare warps and units with no role).
    Stress,
}

/// How the per-instance result record is laid out (32-bit words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Registers the report prints, in this order.
    pub regs: Vec<(ThreadId, RegId)>,
    /// Per register of `regs`, whether it is a 64-bit one: two words, low word first.
    pub wide: Vec<bool>,
    /// Shared locations the report prints (read back inside the test kernel).
    pub shared: Vec<LocId>,
    /// One status word per test thread follows.
    pub threads: u32,
}

impl Record {
    pub fn words(&self) -> u32 {
        self.reg_words() + self.shared.len() as u32 + self.threads
    }
    pub fn status_word(&self, t: ThreadId) -> u32 {
        self.reg_words() + self.shared.len() as u32 + t.0
    }
    /// The first word of register number `k` of `regs`.
    pub fn reg_word(&self, k: usize) -> u32 {
        k as u32
            + self.wide[..k.min(self.wide.len())]
                .iter()
                .filter(|&&w| w)
                .count() as u32
    }
    /// The words of the registers: the shared locations' words follow.
    pub fn reg_words(&self) -> u32 {
        self.reg_word(self.regs.len())
    }
}

/// The whole placement of a test on the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub unit: Unit,
    pub groups: Vec<Group>,
    /// The test's clusters, in order of first appearance: the groups (indices into
    /// [`Layout::groups`]) of each, in CTA order; a group's index here is its rank in the
    /// hardware cluster that plays it.
    pub clusters: Vec<Vec<u32>>,
    /// CTAs per hardware cluster: the most CTAs one test cluster has (1: no cluster launch).
    /// A test cluster with fewer leaves its other ranks to stress.
    pub cluster_ctas: u32,
    pub block_threads: u32,
    /// Thread layout: threads per block that take roles; warp layout: warps that take roles.
    pub role_units: u32,
    /// Most roles of one group (thread layout: threads of one slot).
    pub roles_per_slot: u32,
    /// Instances per block set.
    pub slots: u32,
    pub per_line: u32,
    /// Device global locations, in the order of their lines.
    pub global: Vec<LocId>,
    /// Locations in pinned, mapped host memory, in the order of their lines.
    pub host: Vec<LocId>,
    /// Locations in managed memory, in the order of their lines.
    pub managed: Vec<LocId>,
    /// Test threads that run on the host (CPU threads, see [`crate::host`]), in thread order.
    pub host_roles: Vec<ThreadId>,
    /// Shared locations, in the order of their words in a slot.
    pub shared: Vec<LocId>,
    pub record: Record,
    /// Launch order, per test thread: the threads whose completion it waits for in its own
    /// instance before it starts (`Thread::after`: a kernel after another on its stream, host
    /// code after a synchronization, a launch after host code).
    pub waits: Vec<Vec<ThreadId>>,
    /// The threads some thread waits for, in thread order: each has one completion flag per
    /// instance (see [`Layout::flag_word`]).
    pub signals: Vec<ThreadId>,
}

fn uses_barrier(p: &Program) -> (bool, bool) {
    let mut any = false;
    let mut red = false;
    for t in &p.threads {
        for i in &t.code {
            if let InstrKind::Barrier { kind, .. } = &i.kind {
                any = true;
                red |= matches!(kind, scopecheck_ir::BarrierKind::Red { .. });
            }
        }
    }
    (any, red)
}

/// The kernel-shape options in range.
fn check_options(opts: &GenOptions) -> Result<(), GenError> {
    if !opts.block_threads.is_power_of_two()
        || !(WARP..=MAX_BLOCK_THREADS).contains(&opts.block_threads)
    {
        return Err(GenError::Options(format!(
            "threads per block must be a power of two from {WARP} to {MAX_BLOCK_THREADS}, not {}",
            opts.block_threads
        )));
    }
    if !opts.per_line.is_power_of_two() || opts.per_line > LINE_BYTES / 4 {
        return Err(GenError::Options(format!(
            "instances per line must be a power of two from 1 to {}, not {}",
            LINE_BYTES / 4,
            opts.per_line
        )));
    }
    Ok(())
}

/// The test's CTAs (one group per CTA of the test, in order of first appearance) and its host
/// threads; every device thread must be on one GPU.
fn groups_of(program: &Program) -> Result<(Vec<Group>, Vec<ThreadId>), GenError> {
    let mut groups: Vec<Group> = Vec::new();
    let mut host_roles = Vec::new();
    let mut gpu = None;
    for (i, t) in program.threads.iter().enumerate() {
        let d = match t.placement {
            Placement::Host => {
                host_role_hazard(program, t)?;
                host_roles.push(ThreadId(i as u32));
                continue;
            }
            Placement::Device(d) => d,
        };
        if *gpu.get_or_insert(d.gpu) != d.gpu {
            return Err(GenError::Unsupported(format!(
                "{} is on GPU {}, another GPU than the first thread's: the test is about \
                 two GPUs, where a .gpu scope does not reach the other GPU; on one GPU every \
                 .gpu access between them would be morally strong, so a run there could \
                 not show what the test asks, and the runner drives one GPU (running it \
                 needs a launch on each of two GPUs with peer access)",
                t.name, d.gpu
            )));
        }
        let id = ThreadId(i as u32);
        match groups
            .iter_mut()
            .find(|g| g.cta == d.cta && g.cluster == d.cluster)
        {
            Some(g) => g.roles.push(id),
            None => groups.push(Group {
                cluster: d.cluster,
                cta: d.cta,
                roles: vec![id],
                subs: Vec::new(),
            }),
        }
    }
    if groups.is_empty() {
        if host_roles.is_empty() {
            return Err(GenError::Unsupported("the test has no thread".into()));
        }
        // Host threads only: the kernel still runs (stress, the pacing word, the collect
        // kernel), with one group of no roles.
        groups.push(Group {
            cluster: 0,
            cta: 0,
            roles: Vec::new(),
            subs: Vec::new(),
        });
    }
    Ok((groups, host_roles))
}

/// The test's clusters (see [`Layout::clusters`]) and the CTAs of the largest.
fn clusters_of(groups: &[Group]) -> Result<(Vec<Vec<u32>>, u32), GenError> {
    // Groups sharing a cluster run in one hardware cluster (a cluster launch).
    let mut clusters: Vec<(u32, Vec<u32>)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        match clusters.iter_mut().find(|(c, _)| *c == g.cluster) {
            Some((_, members)) => members.push(gi as u32),
            None => clusters.push((g.cluster, vec![gi as u32])),
        }
    }
    for (_, members) in &mut clusters {
        members.sort_by_key(|&gi| groups[gi as usize].cta);
    }
    let clusters: Vec<Vec<u32>> = clusters.into_iter().map(|(_, m)| m).collect();
    let cluster_ctas = clusters.iter().map(|m| m.len() as u32).max().unwrap_or(1);
    if cluster_ctas > MAX_CLUSTER_CTAS {
        return Err(GenError::Unsupported(format!(
            "a cluster of {cluster_ctas} CTAs; the runner launches clusters of at most \
             {MAX_CLUSTER_CTAS} (the portable cluster size)"
        )));
    }
    Ok((clusters, cluster_ctas))
}

/// The locations of device global, pinned host, managed and shared memory, in that order.
fn locations_by_buffer(program: &Program) -> Result<[Vec<LocId>; 4], GenError> {
    let mut global = Vec::new();
    let mut host = Vec::new();
    let mut managed = Vec::new();
    let mut shared = Vec::new();
    for i in 0..program.locations.len() {
        let id = LocId(i as u32);
        let list = match buffer_of(program, id)? {
            None => {
                shared.push(id);
                continue;
            }
            Some(Buffer::Device) => &mut global,
            Some(Buffer::Host) => &mut host,
            Some(Buffer::Managed) => &mut managed,
        };
        list.push(id);
        // A 64-bit location takes the places of two lines: its instances' copies are 8 bytes
        // apart (see `Layout::loc_offset`).
        if program.location(id).ty.bits == 64 {
            list.push(id);
        }
    }
    Ok([global, host, managed, shared])
}

/// A shared location is one CTA's: every thread touching it must sit in the same group.
fn shared_hazard(program: &Program, shared: &[LocId], groups: &[Group]) -> Result<(), GenError> {
    for &l in shared {
        let users: Vec<usize> = program
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.code.iter().any(|i| may_touch(program, &i.kind, l)))
            .filter_map(|(ti, _)| {
                groups
                    .iter()
                    .position(|g| g.roles.contains(&ThreadId(ti as u32)))
            })
            .collect();
        if users.windows(2).any(|w| w[0] != w[1]) {
            return Err(GenError::Unsupported(format!(
                "shared location {} is used by threads of different CTAs",
                program.location(l).name
            )));
        }
    }
    Ok(())
}

/// The runner needs every barrier's number and thread count as immediates, and keeps barrier
/// [`RESERVED_BARRIER`] for itself.
fn barrier_operand_hazard(program: &Program) -> Result<(), GenError> {
    for t in &program.threads {
        for i in &t.code {
            if let InstrKind::Barrier { .. } = i.kind {
                let Some((id, _)) = barrier_immediates(&i.kind) else {
                    return Err(GenError::Unsupported(format!(
                        "{}: `{}`: the runner needs a barrier's number and thread count \
                         as immediates",
                        t.name, i.text
                    )));
                };
                if id >= RESERVED_BARRIER {
                    return Err(GenError::Unsupported(format!(
                        "{}: barrier {id}: the runner reserves barrier {RESERVED_BARRIER} and \
                         supports barriers 0 to {}",
                        t.name,
                        RESERVED_BARRIER - 1
                    )));
                }
            }
        }
    }
    Ok(())
}

/// What a block is made of: [`Layout`]'s fields of the same names.
struct Shape {
    unit: Unit,
    block_threads: u32,
    role_units: u32,
    roles_per_slot: u32,
    slots: u32,
}

impl Shape {
    /// The lane layout when the test has warp collectives (`lane_warps`: test warps per slot),
    /// the warp layout when it has CTA barriers (`bar.red` makes only lane 0 an instance), else
    /// the thread layout.
    fn of(
        opts: &GenOptions,
        lane_warps: Option<u32>,
        (barriers, red, uniform): (bool, bool, bool),
        roles_per_slot: u32,
    ) -> Result<Shape, GenError> {
        let (unit, block_threads, role_units, roles_per_slot, slots) = if let Some(w) = lane_warps {
            // Hardware warps of role warps and stress warps; at least one slot.
            let warps = (opts.block_threads / WARP).max(w + opts.stress_warps);
            if warps * WARP > MAX_BLOCK_THREADS {
                return Err(GenError::Options(format!(
                    "{w} test warps and {} stress warps exceed {MAX_BLOCK_THREADS} threads",
                    opts.stress_warps
                )));
            }
            let slots = (warps - opts.stress_warps) / w;
            (
                Unit::Lanes { warps: w },
                warps * WARP,
                slots * w,
                w * WARP,
                slots,
            )
        } else if barriers {
            let warps = roles_per_slot + opts.stress_warps;
            if warps * WARP > MAX_BLOCK_THREADS {
                return Err(GenError::Options(format!(
                    "{roles_per_slot} role warps and {} stress warps exceed {MAX_BLOCK_THREADS} threads",
                    opts.stress_warps
                )));
            }
            (
                Unit::Warp {
                    lane_instances: !red && !uniform,
                    uniform,
                },
                warps * WARP,
                roles_per_slot,
                roles_per_slot,
                WARP,
            )
        } else {
            let spare = opts.stress_warps * WARP;
            if spare >= opts.block_threads || opts.block_threads - spare < roles_per_slot {
                return Err(GenError::Options(format!(
                    "{} stress warps leave no room for {roles_per_slot} roles in {} threads",
                    opts.stress_warps, opts.block_threads
                )));
            }
            let role_threads = opts.block_threads - spare;
            let slots = role_threads / roles_per_slot;
            (
                Unit::Thread,
                opts.block_threads,
                slots * roles_per_slot,
                roles_per_slot,
                slots,
            )
        };
        Ok(Shape {
            unit,
            block_threads,
            role_units,
            roles_per_slot,
            slots,
        })
    }
}

impl Record {
    /// The record of `program`'s observables: the registers, then the shared locations.
    fn of(program: &Program) -> Record {
        let mut regs = Vec::new();
        let mut wide = Vec::new();
        let mut shared_obs = Vec::new();
        let widths = crate::width::wide_observables(program);
        for (o, w) in program.observables().into_iter().zip(widths) {
            match o {
                Observable::Reg(t, r) => {
                    regs.push((t, r));
                    wide.push(w);
                }
                Observable::Loc(l) if program.location(l).space == MemorySpace::Shared => {
                    shared_obs.push(l)
                }
                Observable::Loc(_) => {}
            }
        }
        Record {
            regs,
            wide,
            shared: shared_obs,
            threads: program.threads.len() as u32,
        }
    }
}

impl Layout {
    /// Places `program`'s threads; refuses placements the runner cannot give yet.
    pub fn new(program: &Program, opts: &GenOptions) -> Result<Layout, GenError> {
        check_options(opts)?;
        crate::width::word_hazard(program)?;
        let collective = program.threads.iter().find(|t| {
            t.code
                .iter()
                .any(|i| matches!(i.kind, InstrKind::Warp { .. }))
        });
        let (mut groups, host_roles) = groups_of(program)?;
        let (clusters, cluster_ctas) = clusters_of(&groups)?;
        let [global, host, managed, shared] = locations_by_buffer(program)?;
        shared_hazard(program, &shared, &groups)?;
        let (barriers, red) = uses_barrier(program);
        if let (Some(t), true) = (collective, barriers) {
            // The barrier layout makes the 32 lanes of a warp 32 instances of one role.
            return Err(GenError::Unsupported(format!(
                "{} uses a warp collective in a test with CTA barriers; the runner places one \
                 or the other",
                t.name
            )));
        }
        let lane_warps = match collective {
            Some(_) => Some(lane_subs(program, &mut groups)?),
            None => {
                for g in &mut groups {
                    g.subs = (0..g.roles.len() as u32).collect();
                }
                None
            }
        };
        let roles_per_slot = groups
            .iter()
            .map(|g| g.roles.len() as u32)
            .max()
            .unwrap_or(1)
            .max(1);
        let Shape {
            unit,
            block_threads,
            role_units,
            roles_per_slot,
            slots,
        } = Shape::of(
            opts,
            lane_warps,
            (barriers, red, divergent_barriers(program)),
            roles_per_slot,
        )?;
        barrier_operand_hazard(program)?;
        if let Some(why) = barrier_hazard(program, &groups) {
            return Err(GenError::Unsupported(why));
        }
        let waits = launch_order(program)?;
        let mut signals: Vec<ThreadId> = waits.iter().flatten().copied().collect();
        signals.sort();
        signals.dedup();
        Ok(Layout {
            unit,
            groups,
            clusters,
            cluster_ctas,
            block_threads,
            role_units,
            roles_per_slot,
            slots,
            per_line: opts.per_line,
            global,
            host,
            managed,
            host_roles,
            shared,
            record: Record::of(program),
            waits,
            signals,
        })
    }

    /// Whether some thread waits for another (the kernels then take the flag parameters).
    pub fn has_order(&self) -> bool {
        !self.signals.is_empty()
    }

    /// Whether the completion flags live in pinned host memory (a host thread takes part in
    /// the test) rather than in device memory.
    pub fn flags_on_host(&self) -> bool {
        !self.host_roles.is_empty()
    }

    /// Words of completion flags one instance has.
    pub fn flags_per_instance(&self) -> u32 {
        self.signals.len() as u32
    }

    /// The word (in the flag buffer) of `t`'s completion flag in `instance`, if some thread
    /// waits for `t`. A flag holds the number of the last launch (plus one) in which its role
    /// finished that instance, so flags never need resetting between launches.
    pub fn flag_word(&self, instance: u32, t: ThreadId) -> Option<u32> {
        let k = self.signals.iter().position(|&s| s == t)? as u32;
        Some(instance * self.flags_per_instance() + k)
    }

    /// Blocks per instance set: one hardware cluster per test cluster, one block per group
    /// (and spare ranks where a test cluster has fewer CTAs than another).
    pub fn blocks_per_set(&self) -> u32 {
        self.clusters.len() as u32 * self.cluster_ctas
    }

    /// Instances one launch of `nblocks` blocks runs (`nblocks` a multiple of the groups).
    pub fn instances(&self, nblocks: u32) -> u32 {
        nblocks / self.blocks_per_set() * self.slots
    }

    /// Whether `instance` counts (in the `bar.red` warp layout only lane 0 does).
    pub fn counts(&self, instance: u32) -> bool {
        match self.unit {
            Unit::Warp {
                lane_instances: false,
                ..
            } => instance.is_multiple_of(WARP),
            _ => true,
        }
    }

    /// Byte offset of location number `index` (in [`Layout::global`]) of `instance`.
    pub fn global_offset(&self, instance: u32, index: u32) -> u64 {
        self.offset(Buffer::Device, instance, index)
    }

    /// Bytes of global memory one launch of `nblocks` blocks needs for its locations.
    pub fn global_bytes(&self, nblocks: u32) -> u64 {
        self.bytes(Buffer::Device, nblocks)
    }

    /// The locations `buffer` holds, in the order of their lines.
    pub fn locs(&self, buffer: Buffer) -> &[LocId] {
        match buffer {
            Buffer::Device => &self.global,
            Buffer::Host => &self.host,
            Buffer::Managed => &self.managed,
        }
    }

    /// The buffer and index there of a location outside shared memory.
    pub fn place(&self, loc: LocId) -> Option<(Buffer, u32)> {
        Buffer::ALL.into_iter().find_map(|b| {
            self.locs(b)
                .iter()
                .position(|&l| l == loc)
                .map(|i| (b, i as u32))
        })
    }

    /// Whether the location at `index` of `buffer` is a 64-bit one (it takes two places).
    pub fn is_wide_at(&self, buffer: Buffer, index: u32) -> bool {
        let locs = self.locs(buffer);
        let i = index as usize;
        i + 1 < locs.len() && locs[i] == locs[i + 1]
    }

    /// Whether some location outside shared memory is a 64-bit one.
    pub fn has_wide_locs(&self) -> bool {
        Buffer::ALL
            .into_iter()
            .any(|b| self.locs(b).windows(2).any(|w| w[0] == w[1]))
    }

    /// The buffer of `loc` (outside shared memory), the byte offset there of `instance`'s copy,
    /// and whether it is a 64-bit location. A 64-bit location's places are two lines, where the
    /// `per_line` instances sharing them have their copies 8 bytes apart: at twice the offset
    /// within the line a 32-bit location's copy has.
    pub fn loc_offset(&self, loc: LocId, instance: u32) -> Option<(Buffer, u64, bool)> {
        let (b, i) = self.place(loc)?;
        let wide = self.is_wide_at(b, i);
        let mut at = self.offset(b, instance, i);
        if wide {
            let w = self.per_line as u64;
            at += (instance as u64 % w) * (LINE_BYTES as u64 / w);
        }
        Some((b, at, wide))
    }

    /// Byte offset in `buffer` of its location number `index` of `instance`.
    pub fn offset(&self, buffer: Buffer, instance: u32, index: u32) -> u64 {
        let w = self.per_line as u64;
        let i = instance as u64;
        ((i / w) * self.locs(buffer).len().max(1) as u64 + index as u64) * LINE_BYTES as u64
            + (i % w) * (LINE_BYTES as u64 / w)
    }

    /// Bytes of `buffer` one launch of `nblocks` blocks needs for its locations.
    pub fn bytes(&self, buffer: Buffer, nblocks: u32) -> u64 {
        let n = self.instances(nblocks) as u64;
        n.div_ceil(self.per_line as u64) * self.locs(buffer).len().max(1) as u64 * LINE_BYTES as u64
    }

    /// Whether the kernels take the host parameters: host or managed locations, or host roles.
    pub fn uses_host(&self) -> bool {
        !self.host.is_empty() || !self.managed.is_empty() || !self.host_roles.is_empty()
    }

    /// Shared-memory words one block needs.
    pub fn shared_words(&self) -> u32 {
        self.slots * self.shared.len() as u32
    }

    /// Units (threads or warps) per block that the unit permutation shuffles.
    fn units(&self) -> u32 {
        match self.unit {
            Unit::Thread => self.block_threads,
            Unit::Warp { .. } | Unit::Lanes { .. } => self.block_threads / WARP,
        }
    }

    /// What hardware thread `thread` of hardware block `block` runs under `s`; the generated
    /// PTX computes exactly this.
    pub fn assign(&self, s: &Shuffle, nblocks: u32, block: u32, thread: u32) -> Assignment {
        // Clusters are consecutive blocks: hardware cluster `block / C`, rank `block % C`.
        let c = self.cluster_ctas;
        let (hc, rank) = (block / c, block % c);
        let nclusters = nblocks / c;
        let lc = ((hc as u64 * s.bmul as u64 + s.badd as u64) % nclusters as u64) as u32;
        let kc = self.clusters.len() as u32;
        let (ci, set) = (lc % kc, lc / kc);
        let Some(&g) = self.clusters[ci as usize].get(rank as usize) else {
            return Assignment::Stress;
        };
        let group = &self.groups[g as usize];
        let (sub, slot) = match self.unit {
            Unit::Thread => {
                let n = self.block_threads;
                let lt = (thread.wrapping_mul(s.tmul).wrapping_add(s.tadd) & (n - 1)) ^ s.txor;
                if lt >= self.role_units {
                    return Assignment::Stress;
                }
                (lt % self.roles_per_slot, lt / self.roles_per_slot)
            }
            Unit::Warp { .. } => {
                let (w, lane) = (thread / WARP, thread % WARP);
                let lw = (w + s.wrot) % self.units();
                let ll = (lane.wrapping_mul(s.tmul).wrapping_add(s.tadd) & (WARP - 1))
                    ^ (s.txor & (WARP - 1));
                if lw >= self.role_units {
                    return Assignment::Stress;
                }
                (lw, ll)
            }
            Unit::Lanes { warps } => {
                let (w, lane) = (thread / WARP, thread % WARP);
                let lw = (w + s.wrot) % self.units();
                if lw >= self.role_units {
                    return Assignment::Stress;
                }
                ((lw % warps) * WARP + lane, lw / warps)
            }
        };
        let Some(j) = group.subs.iter().position(|&x| x == sub) else {
            return Assignment::Stress;
        };
        let role = group.roles[j];
        let instance = set * self.slots + (slot + g * s.rot) % self.slots;
        Assignment::Role { instance, role }
    }

    /// The hardware (block, thread) that ran each role of `instance` under `s`, in thread
    /// order; found by running the forward mapping over every thread (used for reports only).
    pub fn placement_of(
        &self,
        s: &Shuffle,
        nblocks: u32,
        instance: u32,
        roles: usize,
    ) -> Vec<Option<(u32, u32)>> {
        let mut out = vec![None; roles];
        for b in 0..nblocks {
            for t in 0..self.block_threads {
                if let Assignment::Role { instance: i, role } = self.assign(s, nblocks, b, t) {
                    if i == instance {
                        out[role.0 as usize] = Some((b, t));
                    }
                }
            }
        }
        out
    }
}

/// Every thread's launch-order predecessors, checked: an edge names another thread of the test,
/// and the edges have no cycle (which would leave every thread of it waiting until its bound).
fn launch_order(program: &Program) -> Result<Vec<Vec<ThreadId>>, GenError> {
    let n = program.threads.len();
    let mut waits = Vec::with_capacity(n);
    for (i, t) in program.threads.iter().enumerate() {
        let mut w: Vec<ThreadId> = Vec::new();
        for &a in &t.after {
            if a.0 as usize >= n || a.0 as usize == i {
                return Err(GenError::Unsupported(format!(
                    "{} is ordered after a thread that is not another thread of the test",
                    t.name
                )));
            }
            if !w.contains(&a) {
                w.push(a);
            }
        }
        waits.push(w);
    }
    // Depth-first search for a cycle: 0 unvisited, 1 on the path, 2 done.
    fn visit(v: usize, waits: &[Vec<ThreadId>], mark: &mut [u8]) -> Option<usize> {
        mark[v] = 1;
        for &u in &waits[v] {
            let u = u.0 as usize;
            match mark[u] {
                1 => return Some(u),
                0 => {
                    if let Some(c) = visit(u, waits, mark) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        mark[v] = 2;
        None
    }
    let mut mark = vec![0u8; n];
    for v in 0..n {
        if mark[v] == 0 {
            if let Some(c) = visit(v, &waits, &mut mark) {
                return Err(GenError::Unsupported(format!(
                    "the launch order has a cycle through {}",
                    program.threads[c].name
                )));
            }
        }
    }
    Ok(waits)
}

/// Why host thread `t` cannot run as a CPU thread, if it cannot: a CPU thread reaches pinned host
/// and managed memory only, and has no CTA barrier.
fn host_role_hazard(program: &Program, t: &scopecheck_ir::Thread) -> Result<(), GenError> {
    for i in &t.code {
        if matches!(i.kind, InstrKind::Barrier { .. }) {
            return Err(GenError::Unsupported(format!(
                "{} is a host thread and uses a CTA barrier",
                t.name
            )));
        }
        if let Some(l) = i.kind.named_loc() {
            let loc = program.location(l);
            if matches!(buffer_of(program, l), Ok(None | Some(Buffer::Device))) {
                return Err(GenError::Unsupported(format!(
                    "{} is a host thread and accesses {}, which is in {:?} memory; host threads \
                     run on pinned host or managed memory only",
                    t.name, loc.name, loc.space
                )));
            }
            if let Some(a) = program.array_of(l).filter(|_| indexed(&i.kind)) {
                return Err(GenError::Unsupported(format!(
                    "{}: `{}`: a host thread indexes into array {} at run time, which the \
                     runner's host threads do not do yet",
                    t.name,
                    i.text.trim(),
                    a.name
                )));
            }
        }
    }
    Ok(())
}

/// Which threads may access `loc`: (some host thread, some device thread).
fn users(program: &Program, loc: LocId) -> (bool, bool) {
    let (mut host, mut device) = (false, false);
    for t in &program.threads {
        if t.code.iter().any(|i| may_touch(program, &i.kind, loc)) {
            if t.placement == Placement::Host {
                host = true;
            } else {
                device = true;
            }
        }
    }
    (host, device)
}

/// The buffer the runner places `loc` in (None: shared memory). A location in device memory
/// that a host thread accesses (a harness's `cudaMemcpy` to or from it, which the front-end
/// makes host accesses ordered by the launches) goes to managed memory, the one memory both
/// the CPU threads and the GPU reach while the kernel runs; a location in pageable host memory
/// that only host threads access (a harness's host array) goes to pinned host memory, which
/// the CPU threads treat like any other. Pageable memory a device thread accesses is refused:
/// the CUDA platforms without `pageableMemoryAccess` (the model checks that) have no such
/// access, and those with it are not what the runner places.
fn buffer_of(program: &Program, loc: LocId) -> Result<Option<Buffer>, GenError> {
    let l = program.location(loc);
    let (host, device) = users(program, loc);
    Ok(Some(match l.space {
        MemorySpace::Shared => return Ok(None),
        MemorySpace::Global if host => Buffer::Managed,
        MemorySpace::Global => Buffer::Device,
        MemorySpace::HostMapped => Buffer::Host,
        MemorySpace::Managed => Buffer::Managed,
        MemorySpace::HostPageable if !device => Buffer::Host,
        MemorySpace::HostPageable => {
            return Err(GenError::Unsupported(format!(
                "location {} is in pageable host memory and a device thread accesses it; the \
                 runner places such locations in device, shared, pinned host or managed memory \
                 only",
                l.name
            )))
        }
    }))
}

/// Why the test's barriers could leave a role waiting forever, if they could. A CTA barrier that
/// never completes is the one hang the iteration cap cannot bound, so the runner only runs
/// barriers whose arrivals fill whole rounds: the same barriers on every path of each thread
/// ([`barrier_sequence`]), every user of a barrier arriving equally often (`n` times) with one
/// thread count `c` no larger than its users, and the `users * n` arrivals a multiple of `c`
/// (PTX ISA, barrier{.cta}: a round completes once `c` threads have arrived, and the barrier
/// then resets for the next ones). Rounds of fewer threads than the users (`bar.sync 1, 2`
/// among four) are the execution's choice of partners, on the GPU as in the model. Whether
/// the rounds meet in an order that completes (two barriers taken in opposite orders) is the
/// watchdog's to cut.
pub fn barrier_hazard(program: &Program, groups: &[Group]) -> Option<String> {
    let sequences: Vec<Option<BarrierSequence>> = program
        .threads
        .iter()
        .map(|t| barrier_sequence(t).ok())
        .collect();
    for g in groups {
        // A thread whose barriers depend on its path runs in the uniform warp layout
        // ([`divergent_barriers`]): its arrivals are not known before it runs, and a CTA whose
        // threads part ways at a barrier hangs, as in the model, until the watchdog cuts it.
        if g.roles.iter().any(|r| sequences[r.0 as usize].is_none()) {
            continue;
        }
        let mut ids: Vec<u32> = Vec::new();
        for &r in &g.roles {
            for i in &program.thread(r).code {
                if let Some((id, _)) = barrier_immediates(&i.kind) {
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
            }
        }
        for id in ids {
            let uses: Vec<Vec<Option<u32>>> = g
                .roles
                .iter()
                .map(|&r| {
                    sequences[r.0 as usize]
                        .iter()
                        .flatten()
                        .filter(|&&(b, _)| b == id)
                        .map(|&(_, count)| count)
                        .collect()
                })
                .filter(|u: &Vec<Option<u32>>| !u.is_empty())
                .collect();
            let users = uses.len() as u32;
            let same_length = uses.windows(2).all(|w| w[0].len() == w[1].len());
            let arrivals: u32 = uses.iter().map(|u| u.len() as u32).sum();
            let mut counts = uses
                .iter()
                .flatten()
                .map(|c| c.unwrap_or(g.roles.len() as u32));
            let c = counts.next().unwrap_or(users);
            let counts_fit =
                counts.all(|x| x == c) && (1..=users).contains(&c) && arrivals.is_multiple_of(c);
            if !same_length || !counts_fit {
                return Some(format!(
                    "barrier {id} of CTA {}: its users do not all arrive equally often with one \
                     thread count, at most their number, that their arrivals fill whole rounds \
                     of, so it might never complete and hang the GPU",
                    g.cta
                ));
            }
        }
    }
    None
}

/// Whether some thread meets different barriers on different paths (a barrier on one side of a
/// branch, or in a loop): then each role warp plays one instance, its lanes following lane 0's
/// branches (`Unit::Warp { uniform: true }`), so that it arrives at a barrier whole or not at
/// all. With 32 instances to a warp, lanes whose instances took different ways would leave
/// every round short and hang the CTA.
pub fn divergent_barriers(program: &Program) -> bool {
    program.threads.iter().any(|t| barrier_sequence(t).is_err())
}

/// Whether thread `t` has a barrier instruction.
pub fn meets_barriers(t: &Thread) -> bool {
    t.code
        .iter()
        .any(|i| matches!(i.kind, InstrKind::Barrier { .. }))
}

/// The barriers a thread arrives at: (id, thread count), in order.
pub type BarrierSequence = Vec<(u32, Option<u32>)>;

/// The barriers (id, count) thread `t` arrives at, in order, when that order is the same on
/// every path through its code; otherwise why its barriers could hang the GPU. Branches are
/// fine when both ways meet the same barriers (a tree barrier that branches on the thread's
/// index); a barrier inside a loop, or on one side of a branch only, is refused. A role that
/// meets barriers and is cut at the loop cap leaves the loop where it stands (codegen: it falls
/// through its backward branch with its instance marked cut) and still arrives at every barrier
/// after it, so that way out counts as a path too.
pub fn barrier_sequence(t: &Thread) -> Result<BarrierSequence, String> {
    let code = &t.code;
    let n = code.len();
    if !meets_barriers(t) {
        return Ok(Vec::new());
    }
    // A backward branch may also fall through: the way out of a loop cut at the loop cap.
    let succ = |i: usize| -> Vec<usize> {
        let mut s: Vec<usize> = code[i]
            .successors(i)
            .into_iter()
            .map(|t| t.min(n))
            .collect();
        if matches!(code[i].kind, InstrKind::Branch { target, .. } if target <= i)
            && !s.contains(&(i + 1))
        {
            s.insert(0, i + 1);
        }
        s
    };
    // The barriers met on the way to each instruction must not depend on the way.
    let mut at: Vec<Option<BarrierSequence>> = vec![None; n + 1];
    at[0] = Some(Vec::new());
    let mut work = vec![0usize];
    while let Some(i) = work.pop() {
        if i >= n {
            continue;
        }
        let mut seq = at[i].clone().unwrap_or_default();
        if let Some(b) = barrier_immediates(&code[i].kind) {
            seq.push(b);
        }
        for s in succ(i) {
            match &at[s] {
                None => {
                    at[s] = Some(seq.clone());
                    work.push(s);
                }
                Some(other) if *other != seq => {
                    let place = code
                        .get(s)
                        .map_or("its end".to_string(), |x| format!("`{}`", x.text));
                    return Err(format!(
                        "{} reaches {place} having met different barriers on different paths (a \
                         barrier on one side of a branch only): a thread that skips a barrier \
                         would hang the GPU, so the runner does not run such tests",
                        t.name
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(at[n].clone().unwrap_or_default())
}

/// Gives each role its lane layout code (`subs`): its test warp's index among its group's test
/// warps, times 32, plus its lane. Returns the most test warps one group has.
fn lane_subs(program: &Program, groups: &mut [Group]) -> Result<u32, GenError> {
    let mut most = 1;
    for g in groups.iter_mut() {
        let mut warps: Vec<ThreadId> = Vec::new();
        g.subs.clear();
        for &t in &g.roles {
            // A test warp is named by its first thread (lane 0).
            let first = program
                .warp_members(t, u32::MAX)
                .first()
                .copied()
                .unwrap_or(t);
            let wi = match warps.iter().position(|&w| w == first) {
                Some(i) => i,
                None => {
                    warps.push(first);
                    warps.len() - 1
                }
            };
            let lane = program.lane(t).unwrap_or(0);
            if lane >= WARP {
                return Err(GenError::Unsupported(format!(
                    "{} is lane {lane} of its warp; a warp has {WARP} lanes",
                    program.threads[t.0 as usize].name
                )));
            }
            g.subs.push(wi as u32 * WARP + lane);
        }
        most = most.max(warps.len() as u32);
    }
    Ok(most)
}

/// Whether `kind` accesses memory at an index computed at run time (`[a+r]`).
fn indexed(kind: &InstrKind) -> bool {
    matches!(
        kind,
        InstrKind::Load { addr, .. } | InstrKind::Store { addr, .. } | InstrKind::Rmw { addr, .. }
            if addr.reg().is_some()
    )
}

/// Whether `kind` may access `loc`: the location it names, or with an index at run time any
/// element of the array of the one it names.
pub(crate) fn may_touch(program: &Program, kind: &InstrKind, loc: LocId) -> bool {
    let Some(named) = kind.named_loc() else {
        return false;
    };
    if !indexed(kind) {
        return named == loc;
    }
    let (first, len) = program.allocation_of(named);
    (first.0..first.0 + len).contains(&loc.0)
}

/// A small deterministic generator (SplitMix64) for the shuffles: reproducible from a seed, and
/// no dependency for a few random numbers per launch.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % n as u64) as u32
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Shuffle {
    /// The identity mapping.
    pub fn identity() -> Shuffle {
        Shuffle {
            bmul: 1,
            tmul: 1,
            ..Shuffle::default()
        }
    }

    /// A fresh random shuffle for a launch of `nblocks` blocks of `layout`.
    pub fn draw(rng: &mut Rng, layout: &Layout, nblocks: u32) -> Shuffle {
        // The permutation moves whole clusters (blocks when there is no cluster launch).
        let nclusters = nblocks / layout.cluster_ctas.max(1);
        let bmul = loop {
            let m = 1 + rng.below(nclusters.max(2) - 1);
            if gcd(m, nclusters) == 1 {
                break m;
            }
        };
        let n = layout.units();
        let lanes = match layout.unit {
            Unit::Thread => layout.block_threads,
            Unit::Warp { .. } | Unit::Lanes { .. } => WARP,
        };
        Shuffle {
            bmul,
            badd: rng.below(nclusters),
            tmul: rng.below(lanes) | 1,
            tadd: rng.below(lanes),
            txor: rng.below(lanes),
            rot: rng.below(layout.slots),
            wrot: rng.below(n),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod barrier_paths;

/// `program` with each barrier operand held in a register made an immediate where the register
/// can hold one value only at the barrier: written once in the thread, by a `mov` of an
/// immediate, before the barrier and with no branch before it (so the `mov` has run). The runner
/// needs a barrier's number and count to lay it out and to show it completes.
pub fn fold_barrier_operands(program: &Program) -> std::borrow::Cow<'_, Program> {
    let mut out: Option<Program> = None;
    for (ti, t) in program.threads.iter().enumerate() {
        for (ii, ins) in t.code.iter().enumerate() {
            let InstrKind::Barrier { id, count, .. } = ins.kind else {
                continue;
            };
            let fold = |op: Operand| match op {
                Operand::Imm(_) => None,
                Operand::Reg(r) => constant_at(t, r, ii),
            };
            let (new_id, new_count) = (fold(id), count.and_then(fold));
            if new_id.is_none() && new_count.is_none() {
                continue;
            }
            let p = out.get_or_insert_with(|| program.clone());
            if let InstrKind::Barrier { id, count, .. } = &mut p.threads[ti].code[ii].kind {
                if let Some(v) = new_id {
                    *id = Operand::Imm(v);
                }
                if let Some(v) = new_count {
                    *count = Some(Operand::Imm(v));
                }
            }
        }
    }
    out.map_or(std::borrow::Cow::Borrowed(program), std::borrow::Cow::Owned)
}

/// The one value register `r` of `t` can hold at instruction `at` (see
/// [`fold_barrier_operands`]).
fn constant_at(t: &Thread, r: RegId, at: usize) -> Option<Value> {
    if t.code[..at]
        .iter()
        .any(|i| matches!(i.kind, InstrKind::Branch { .. }))
    {
        return None;
    }
    let mut writes = t
        .code
        .iter()
        .enumerate()
        .filter(|(_, i)| i.kind.written_registers().any(|w| w == r));
    let (wi, w) = writes.next()?;
    if writes.next().is_some() || wi >= at {
        return None;
    }
    match w.kind {
        InstrKind::Mov {
            src: Operand::Imm(v),
            ..
        } => Some(v),
        _ => None,
    }
}

/// A barrier's number and thread count, when both are immediates (the runner refuses others
/// before it lays a test out).
pub(crate) fn barrier_immediates(kind: &InstrKind) -> Option<(u32, Option<u32>)> {
    let InstrKind::Barrier { id, count, .. } = *kind else {
        return None;
    };
    let id = id.imm()? as u32;
    let count = match count {
        None => None,
        Some(c) => Some(c.imm()? as u32),
    };
    Some((id, count))
}
