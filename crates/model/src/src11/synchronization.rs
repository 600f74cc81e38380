//! Release sequences, synchronizes-with and happens-before (RC11, Lahav et al. PLDI 2017, with
//! the scopes of Lustig et al. ASPLOS 2019).
//!
//! `rs = [W] ; (sb ∩ loc)? ; [W ∩ A] ; (strong[rf] ; rmw)*`
//! `sw = [E ⊒ rel] ; ([F] ; sb)? ; rs ; strong[rf] ; [R ∩ A] ; (sb ; [F])? ; [E ⊒ acq]`,
//! kept only where its two ends are in each other's scope;
//! `hb = (sb ∪ sw ∪ barrier ∪ launch)⁺` (launch: a thread that starts after another finished).
//!
//! OpenCL fences name the memory they order (`CLK_GLOBAL_MEM_FENCE`, `CLK_LOCAL_MEM_FENCE`):
//! synchronization through a fence orders only accesses to the memory it names, so
//! happens-before is computed per memory space, dropping for each space the synchronization
//! edges that start or end at a fence not naming it.
//!
//! In an OpenCL program (`Arch::OpenCl`) the rest follows the API specification's memory
//! ordering rules ("global-synchronizes-with" and "local-synchronizes-with"): a release or
//! acquire *operation* on an atomic object in global memory synchronizes global accesses
//! only, one on an object in local memory local accesses only; a fence synchronizes the
//! region its flags name through atomic objects of that region only ("Fence Operations");
//! two seq_cst operations, or two fences naming both regions, that synchronize in one region
//! synchronize in both; a barrier orders the regions its flags name ("Work-group
//! Functions"). CUDA atomics order all memory: there every access endpoint takes part in both
//! spaces.

use scopecheck_explore::{Event, EventKind, EventSet, Graph, Relation};
use scopecheck_ir::{Arch, FenceSpaces, InstrKind, MemorySpace};

use super::scope::{is_acquire, is_atomic, is_fence, is_release, is_seq_cst};

/// `rs`: from a write to every write of its release sequence.
pub fn release_sequence(g: &Graph, strong_rf: &Relation) -> Relation {
    let n = g.len();
    let atomic_writes = EventSet::from_fn(n, |i| {
        g.events[i].kind.is_write() && is_atomic(&g.events[i])
    });
    // [W] ; (sb ∩ loc)? ; [W ∩ A]
    let mut rs = Relation::new(n);
    for w in g.writes.iter() {
        if atomic_writes.contains(w) {
            rs.insert(w, w);
        }
        for w2 in g.po.successors(w) {
            if atomic_writes.contains(w2) && g.same_loc.contains(w, w2) {
                rs.insert(w, w2);
            }
        }
    }
    if g.rmw.is_empty() {
        return rs;
    }
    let step = strong_rf.compose(&g.rmw);
    loop {
        let longer = rs.compose(&step);
        let before = rs.clone();
        rs.union_with(&longer);
        if rs == before {
            return rs;
        }
    }
}

/// `[E ⊒ rel] ; ([F] ; sb)? ; [W]`: from each release, where `covers` it, to the writes that
/// may head its release sequences.
fn release_heads(g: &Graph, covers: &dyn Fn(&Event) -> bool) -> Relation {
    let n = g.len();
    let mut head = Relation::new(n);
    for i in (0..n).filter(|&i| is_release(&g.events[i]) && covers(&g.events[i])) {
        head.insert(i, i);
        if is_fence(&g.events[i]) {
            head.insert_row_of(i, &g.po, i);
        }
    }
    head.keep_columns(&g.writes);
    head
}

/// Whether read `r` ends `sw` itself (`[R ∩ A] ; [E ⊒ acq]`), for `covers` and `channel` as in
/// [`synchronizes_with`].
fn acquires_itself(
    r: &Event,
    covers: &dyn Fn(&Event) -> bool,
    channel: &dyn Fn(&Event) -> bool,
) -> bool {
    is_atomic(r) && channel(r) && is_acquire(r) && covers(r)
}

/// `sw` before the scope restriction, as (first, last) pairs; `covers(e)` says whether an
/// endpoint takes part (all do, except fences not naming the space being computed and, in
/// OpenCL, accesses to an atomic object of the other space); `channel(r)` whether the atomic
/// read `r` may carry the synchronization (in OpenCL, the synchronization of one region goes
/// through atomic objects of that region only).
fn synchronizes_with(
    g: &Graph,
    rs: &Relation,
    strong_rf: &Relation,
    covers: &dyn Fn(&Event) -> bool,
    channel: &dyn Fn(&Event) -> bool,
) -> Relation {
    let n = g.len();
    let ev = |i: usize| &g.events[i];
    // [R ∩ A] ; (sb ; [F])? ; [E ⊒ acq]
    let acquire = EventSet::from_fn(n, |i| is_acquire(ev(i)) && covers(ev(i)));
    let mut tail = Relation::new(n);
    for i in g
        .reads
        .iter()
        .filter(|&i| is_atomic(ev(i)) && channel(ev(i)))
    {
        // `acquires_itself(i)`: the filter above already made `i` an atomic of the channel.
        if acquire.contains(i) {
            tail.insert(i, i);
        }
        for j in g.po.successors(i) {
            if acquire.contains(j) && is_fence(ev(j)) {
                tail.insert(i, j);
            }
        }
    }
    release_heads(g, covers)
        .compose(rs)
        .compose(strong_rf)
        .compose(&tail)
}

/// Happens-before per memory space. The two are identical unless some fence names only one.
pub struct HappensBefore {
    pub global: Relation,
    /// `None` when local memory is ordered as global memory is.
    shared: Option<Relation>,
}

/// Whether event `e` accesses local (CUDA: shared) memory.
fn is_local(g: &Graph, e: &Event) -> bool {
    e.kind
        .loc()
        .is_some_and(|l| g.program.location(l).space == MemorySpace::Shared)
}

impl HappensBefore {
    /// The happens-before that orders accesses to event `i`'s location.
    pub fn of(&self, g: &Graph, i: usize) -> &Relation {
        match &self.shared {
            Some(shared) if is_local(g, &g.events[i]) => shared,
            _ => &self.global,
        }
    }

    pub fn is_irreflexive(&self) -> bool {
        self.global.is_irreflexive() && self.shared.as_ref().is_none_or(Relation::is_irreflexive)
    }
}

/// Whether event `e` takes part in the synchronization of global memory (`global`) or of local
/// memory: a fence when it names that space; in OpenCL an access when its object is in it.
fn takes_part(g: &Graph, e: &Event, opencl: bool, global: bool) -> bool {
    match e.kind {
        EventKind::Fence { spaces, .. } => {
            if global {
                spaces.global
            } else {
                spaces.shared
            }
        }
        _ => !opencl || is_local(g, e) != global,
    }
}

/// `sw` of global memory (`global`) or of local memory, restricted to scope inclusion, before
/// OpenCL's rules that make some pairs synchronize both (`region_sw`).
fn one_region_sw(
    g: &Graph,
    rs: &Relation,
    strong_rf: &Relation,
    inclusion: &Relation,
    global: bool,
) -> Relation {
    let opencl = g.program.arch == Arch::OpenCl;
    // The atomic object the synchronization goes through must be of the region too (OpenCL:
    // "both operating on some global atomic object M", "... local atomic object M"); CUDA
    // atomics order all memory.
    let object = |r: &Event| !opencl || is_local(g, r) != global;
    synchronizes_with(
        g,
        rs,
        strong_rf,
        &|e: &Event| takes_part(g, e, opencl, global),
        &object,
    )
    .intersect(inclusion)
}

/// `sw` of global memory and of local memory, restricted to scope inclusion.
fn region_sw(
    g: &Graph,
    rs: &Relation,
    strong_rf: &Relation,
    inclusion: &Relation,
) -> (Relation, Relation) {
    let opencl = g.program.arch == Arch::OpenCl;
    let sw = |global: bool| one_region_sw(g, rs, strong_rf, inclusion, global);
    let (mut global_sw, mut local_sw) = (sw(true), sw(false));
    if opencl {
        // Two cases synchronize both regions once either region's conditions hold (API
        // specification, memory ordering rules): two seq_cst operations ("if X
        // local-synchronizes-with or global-synchronizes-with Y then X both
        // local-synchronizes-with Y and global-synchronizes-with Y"), and two fences that each
        // name both CLK_GLOBAL_MEM_FENCE and CLK_LOCAL_MEM_FENCE.
        let both_fence = |e: &Event| matches!(e.kind, EventKind::Fence { spaces, .. } if spaces.global && spaces.shared);
        let cross = |a: usize, b: usize| {
            let (a, b) = (&g.events[a], &g.events[b]);
            (is_seq_cst(a) && is_seq_cst(b)) || (both_fence(a) && both_fence(b))
        };
        let either = global_sw.union(&local_sw);
        for (a, b) in either.pairs() {
            if cross(a, b) {
                global_sw.insert(a, b);
                local_sw.insert(a, b);
            }
        }
    }
    (global_sw, local_sw)
}

/// `sw` of both memory spaces together, restricted to scope inclusion: the synchronization a
/// picture of the execution shows.
pub fn sync_edges(g: &Graph, rf: &Relation, inclusion: &Relation) -> Relation {
    let strong_rf = rf.intersect(inclusion);
    let rs = release_sequence(g, &strong_rf);
    let (global, local) = region_sw(g, &rs, &strong_rf, inclusion);
    global.union(&local)
}

pub fn happens_before(g: &Graph, rf: &Relation, inclusion: &Relation) -> HappensBefore {
    happens_before_and_new_read(g, rf, inclusion, None).0
}

/// What a read that reads from no write yet, and that nothing follows, gains by reading from
/// each write it might: the synchronization that ends at it (`Model::readable`). Kept where
/// one memory space is in effect.
pub struct NewRead {
    read: usize,
    /// What happens before the read already.
    past: EventSet,
    /// `[E ⊒ rel] ; ([F] ; sb)? ; rs`: from each release to the writes of its release
    /// sequences.
    released: Relation,
    /// Whether the read ends `sw` itself (an atomic acquire read; an acquire fence after it
    /// would be later in program order, and there is none).
    acquires: bool,
}

impl NewRead {
    /// The events that happen before the read once it reads from `write`: those that do
    /// already, and each release whose release sequence `write` is in, when `write` and the
    /// release are both in scope with the read (strong `rf`, `sw ∩ incl`), with what happens
    /// before it (`hb`). Nothing else changes: the new edges all end at the read, which
    /// nothing follows.
    pub fn past(&self, hb: &Relation, inclusion: &Relation, write: usize) -> EventSet {
        let mut past = self.past.clone();
        if self.acquires && inclusion.contains(write, self.read) {
            for h in (0..hb.len()).filter(|&h| self.released.contains(h, write)) {
                if inclusion.contains(h, self.read) {
                    past.insert(h);
                    past.union_with(&hb.column(h));
                }
            }
        }
        past
    }
}

/// Happens-before, and for `read` (a read that reads from nothing yet), what reading from each
/// write would add (`None` where more than one memory space is in effect).
pub fn happens_before_and_new_read(
    g: &Graph,
    rf: &Relation,
    inclusion: &Relation,
    read: Option<usize>,
) -> (HappensBefore, Option<NewRead>) {
    let strong_rf = rf.intersect(inclusion);
    let rs = release_sequence(g, &strong_rf);
    let opencl = g.program.arch == Arch::OpenCl;
    let partial = g.events.iter().any(|e| match e.kind {
        EventKind::Fence { spaces, .. } => !(spaces.global && spaces.shared),
        // OpenCL atomics order their own region only: local accesses need their own
        // happens-before as soon as there are any.
        EventKind::Read { .. } | EventKind::Write { .. } => opencl && is_local(g, e),
        _ => barrier_spaces(g, e).is_some_and(|s| !(s.global && s.shared)),
    });
    let barrier = |shared: bool| {
        // A barrier's entry fence synchronizes with the others' exit fences in the regions
        // its flags name.
        let names = EventSet::from_fn(g.len(), |i| {
            barrier_spaces(g, &g.events[i]).is_none_or(|s| if shared { s.shared } else { s.global })
        });
        g.barrier_sync.restrict(&names, &names)
    };
    let hb_of = |sw: &Relation, barrier: &Relation| {
        let mut hb = g.po.union(sw);
        hb.union_with(barrier);
        hb.union_with(&g.launch);
        hb.close();
        hb
    };
    if !partial {
        // One region in effect: both are ordered alike.
        let global_sw = one_region_sw(g, &rs, &strong_rf, inclusion, true);
        let global = hb_of(&global_sw, &g.barrier_sync);
        let new_read = read.map(|read| {
            // The endpoints of global memory's synchronization, as `one_region_sw` has them.
            let covers = |e: &Event| takes_part(g, e, opencl, true);
            let object = |r: &Event| !opencl || !is_local(g, r);
            NewRead {
                read,
                past: global.column(read),
                released: release_heads(g, &covers).compose(&rs),
                acquires: acquires_itself(&g.events[read], &covers, &object),
            }
        });
        let hb = HappensBefore {
            global,
            shared: None,
        };
        return (hb, new_read);
    }
    let (global_sw, local_sw) = region_sw(g, &rs, &strong_rf, inclusion);
    let hb = HappensBefore {
        global: hb_of(&global_sw, &barrier(false)),
        shared: Some(hb_of(&local_sw, &barrier(true))),
    };
    (hb, None)
}

/// The regions a barrier event's instruction orders (`None` for events of no barrier).
fn barrier_spaces(g: &Graph, e: &Event) -> Option<FenceSpaces> {
    let (t, i) = (e.thread?, e.instr?);
    match g.program.thread(t).code.get(i)?.kind {
        InstrKind::Barrier { spaces, .. } => Some(spaces),
        _ => None,
    }
}
