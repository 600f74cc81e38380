//! The explorer: finds every execution of a program that a memory model allows.
//!
//! The graph explorer (`search`) interprets each thread (`interp`) against an execution graph
//! grown event by event: reads branch over the writes they may read from, or wait for one not
//! yet made; the [`Model`] prunes partial graphs no completion could make consistent and
//! judges complete ones, quantifying over its own per-execution orders (coherence, Fence-SC)
//! with the help of `orders`. Where the graph explorer cannot vouch for its own completeness
//! (docs/explore.md), the candidate enumerator (`candidates`: every path with guessed values,
//! every reads-from) runs instead; it is also the tests' differential oracle. [`explore`]
//! alone decides which engine runs and with which reductions, and runs the program again
//! where one cannot stand.
//!
//! The explorer knows program semantics (paths, values, barriers) and nothing of any model.

pub mod budget;
mod candidates;
mod collectives;
pub mod commute;
pub mod count;
mod dead_ends;
mod digest;
mod gate;
pub mod graph;
pub mod interp;
mod leaf;
pub mod loops;
mod machine;
mod orbits;
pub mod orders;
pub mod paths;
pub mod progress;
mod provenance;
mod reach;
pub mod relation;
mod revisit;
mod rounds;
mod search;
pub mod sharing;
mod stale;
mod state;
pub mod statics;
pub mod symmetry;
pub mod trace;
mod walk;

pub use budget::{Budget, MemoryBound, Stop};
use leaf::Leaf;

use scopecheck_ir::{LocId, Program, ThreadId, Value};

pub use graph::{Event, Graph, NotAnExecution};
pub use paths::TraceLimit;
pub use relation::{EventSet, Relation};
pub use trace::{EventKind, PathEnd, Trace};

/// A memory model, as the explorer sees it.
pub trait Model: Sync {
    /// The name used in reports (`ptx`).
    fn name(&self) -> &'static str;

    /// Whether `read` may read from `write` at all, judged from the graph before reads-from is
    /// chosen. A cheap filter; it must never exclude a pair some consistent execution uses.
    fn may_read_from(&self, g: &Graph, read: usize, write: usize) -> bool {
        let _ = (g, read, write);
        true
    }

    /// Whether `g`, whose reads-from is chosen for some reads only (the others are `None`), may
    /// still be completed into a consistent execution. Must only say no when every completion
    /// breaks an axiom: only axioms that get harder with more reads-from edges may be checked.
    fn consistent_so_far(&self, g: &Graph) -> bool {
        let _ = g;
        true
    }

    /// For each of `writes` (of `read`'s location), what [`Model::consistent_so_far`] would say
    /// of `g` with `read` reading from it, leaving out what [`Model::may_read_from`] decides
    /// (the explorer asks that of each graph it makes). `g` holds `read` as the last event of
    /// its thread, reading from no write yet, and no other event after it in program order;
    /// the answer must hold as well for `g` with an RMW's write half added after `read`, which
    /// no read reads from. Lets a model judge every choice of a read with one look at the
    /// graph instead of one per choice; `None` asks `consistent_so_far` of each graph.
    fn readable(&self, g: &Graph, read: usize, writes: &[usize]) -> Option<Vec<bool>> {
        let _ = (g, read, writes);
        None
    }

    /// Pairs `(earlier, later)` of writes to one location that coherence orders so in every
    /// consistent completion of `g`, whose reads-from is chosen for some reads only. Must hold
    /// in every completion (only edges that more events and reads-from edges keep); may be any
    /// part of them, transitively closed or not (none by default). The hole search uses it to
    /// drop a branch as soon as a spinning read can no longer read the coherence-latest write.
    /// Giving reads-from to a read that nothing follows in program order but its own RMW
    /// write half must add edges only between writes of that read's location (the orders it
    /// is built from gain edges only into the read and its write half); the search relies on
    /// this to ask again only when a spinner read that location.
    fn coherence_forced(&self, g: &Graph) -> Relation {
        Relation::new(g.len())
    }

    /// Whether every consistent execution has an acyclic `po ∪ rf` (no load buffering at all,
    /// as RC11's No-Thin-Air demands). The graph explorer's completeness gate is then simpler:
    /// a thread waiting for a value can never feed, by a later write, another waiting read.
    fn porf_acyclic(&self) -> bool {
        false
    }

    /// Whether coherence is a strict total order over the writes of each location that the
    /// explorer may choose write by write (scoped C11's modification order). The revisiting
    /// search (`revisit`) then places each new write in it and asks [`Model::consistent_with`];
    /// it also needs [`Model::porf_acyclic`], and coherence must put a write after the writes of
    /// its location before it in program order and after the writes its thread's earlier reads
    /// of the location read (SC-per-location), which the explorer uses to skip placements. The
    /// model must be prefix-closed and maximally extensible, as TruSt requires: adding to a
    /// consistent graph an event with no successors that reads the coherence-latest write, or a
    /// write placed last in coherence (an RMW's right after a coherence-latest source), gives a
    /// consistent graph; the explorer does not ask about such steps.
    fn total_coherence(&self) -> bool {
        false
    }

    /// Whether the write half `write` of an RMW must come immediately after, in coherence, the
    /// write its read half reads (nothing between: Atomicity). Only asked when
    /// [`Model::total_coherence`] holds; `false` lets the explorer try every later position.
    fn rmw_write_adjacent(&self, g: &Graph, write: usize) -> bool {
        let _ = (g, write);
        false
    }

    /// Whether `g`, every read of which has its write, with coherence order `co`, satisfies
    /// every axiom; the first one it breaks otherwise. Called on partial graphs too: they are
    /// closed under `po ∪ rf`, and a model for which this holds must give the same answer on a
    /// graph as its axioms give on every such prefix of a consistent execution (true of every
    /// axiom that is an acyclicity or emptiness of relations built from the events).
    /// Only called when [`Model::total_coherence`] holds.
    fn consistent_with(&self, g: &Graph, co: &Relation) -> Result<(), &'static str> {
        let _ = (g, co);
        Ok(())
    }

    /// Extends the relations the model memoises on `g` (`Graph::memo_pairwise`) to its new
    /// events. Called where the explorer copies a graph into several branches before the model
    /// next looks at it, so that the memos are extended once, not once per branch.
    fn extend_memos(&self, g: &Graph) {
        let _ = g;
    }

    /// The races of a consistent execution `g` with coherence order `co`. Only called when
    /// [`Model::total_coherence`] holds.
    fn races_with(&self, g: &Graph, co: &Relation) -> Vec<Race> {
        let _ = (g, co);
        vec![]
    }

    /// The model's own synchronization relations in the consistent execution `g` with
    /// coherence order `co`, by the model's name for each (`sw`): the edges a picture of the
    /// execution should show besides program order, reads-from, coherence, barriers and launch
    /// order. Never asked during the search, only for the few executions a report draws.
    fn explain(&self, g: &Graph, co: &Relation) -> Vec<(&'static str, Relation)> {
        let _ = (g, co);
        vec![]
    }

    /// Calls `accept` once with the coherence order of each consistent execution of `g`, whose
    /// reads-from is chosen, and the races the model sees in it; counts each rejected candidate
    /// under the axiom that rejected it. `stop`, given how many consistent executions the
    /// model found and has not yet handed to `accept`, says whether a bound was reached: the
    /// enumeration of orders asks it at each step (`Stop::step`), the model between its
    /// pieces of work on the graph (`Stop::now`), and it ends when it says so (what was
    /// found may still be handed on; the caller takes no more than its bound).
    fn executions(
        &self,
        g: &Graph,
        rejected: &mut Rejections,
        stop: &dyn Stop,
        accept: &mut dyn FnMut(&Relation, &[Race]),
    );
}

/// What makes two conflicting accesses a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RaceKind {
    /// A plain (non-atomic, weak) access conflicts with another access and nothing orders them.
    Data,
    /// Two atomics conflict, nothing orders them, and their scopes do not include each other's
    /// thread (Hower et al., heterogeneous races).
    Heterogeneous,
}

/// Two conflicting accesses (events of the graph) that race in a consistent execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Race {
    pub first: usize,
    pub second: usize,
    pub kind: RaceKind,
}

/// How many candidates each axiom rejected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rejections {
    pub by_axiom: Vec<(&'static str, u64)>,
}

impl Rejections {
    pub fn add(&mut self, axiom: &'static str) {
        match self.by_axiom.iter_mut().find(|(a, _)| *a == axiom) {
            Some((_, n)) => *n += 1,
            None => self.by_axiom.push((axiom, 1)),
        }
    }

    /// Adds `later`'s counts, axioms first met there after those met here.
    pub fn absorb(&mut self, later: Rejections) {
        for (axiom, n) in later.by_axiom {
            match self.by_axiom.iter_mut().find(|(a, _)| *a == axiom) {
                Some((_, m)) => *m += n,
                None => self.by_axiom.push((axiom, n)),
            }
        }
    }
}

/// A loop whose unroll bound cut a feasible path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutLoop {
    pub thread: ThreadId,
    /// The backward branch's instruction index.
    pub instr: usize,
}

/// A fault some consistent execution reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub thread: ThreadId,
    pub instr: usize,
    pub message: String,
}

/// A thread spinning forever in an await loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spinner {
    pub thread: ThreadId,
    /// The loop's backward branch.
    pub instr: usize,
    /// What its failing iteration reads, and keeps reading: the latest value of each location.
    pub reads: Vec<(LocId, Value)>,
}

/// A consistent execution in which no thread can make progress: every thread has finished,
/// spins in an await loop reading the coherence-latest writes, waits at a barrier some
/// participant never reaches, or was never scheduled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hang {
    pub spinning: Vec<Spinner>,
    /// Threads waiting forever at a barrier, with the barrier instruction.
    pub at_barrier: Vec<(ThreadId, usize)>,
    /// Threads the scheduler never ran.
    pub starved: Vec<ThreadId>,
    /// Why the scheduler permits it, in words.
    pub reason: String,
}

/// What the exploration saw besides the consistent executions it reported.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    pub rejected: Rejections,
    /// Loops the unroll bound cut in some consistent execution prefix: the exploration is
    /// incomplete when this is not empty.
    pub cut: Vec<CutLoop>,
    /// Faults reached by consistent executions.
    pub faults: Vec<Fault>,
    /// Await loops explored by their exiting iteration alone, as (thread, backward branch).
    pub reduced_loops: Vec<(ThreadId, usize)>,
    /// Hangs the scheduler permits.
    pub hangs: Vec<Hang>,
    /// Graphs where some thread could not finish (spinning, at a barrier, cut, faulted).
    pub blocked: u64,
    /// Consistent finished executions handed to the caller, each counted with its weight
    /// ([`Found::weight`]); saturated at `u128::MAX` ([`count::at_least`]).
    pub reported: count::Count,
    /// Partial graphs the model was asked about.
    pub checks: u64,
    /// Graphs where every thread finished, handed to the model (each gives zero or more
    /// consistent executions, one per coherence order).
    pub finished: u64,
    /// States where every thread waited for a write no one could make.
    pub dead_ends: u64,
    /// Why the search stopped before it was complete (a budget), if it did.
    pub cut_short: Option<String>,
    /// The explorer that produced this exploration.
    pub engine: Engine,
    /// Why the graph explorer handed the program to the candidate enumerator, if it did.
    pub fallback: Option<String>,
    /// The classes of interchangeable threads explored in one order only (empty: none).
    pub symmetry: Vec<Vec<ThreadId>>,
    /// The symmetry reduction met a leaf with more automorphisms than it counts
    /// (`orbits::MAX_TIE_ORDERS`) and stopped: the search must run again without it.
    pub symmetry_abandoned: bool,
    /// The commuting-atomics reduction met a leaf whose update orders of two locations
    /// constrain each other (`commute::Chains::entangled`) and stopped: the search must run
    /// again without it.
    pub commute_abandoned: bool,
}

impl Exploration {
    /// Takes over what a search forked from this one found, after everything found here.
    pub(crate) fn absorb(&mut self, later: Exploration) {
        /// Appends the items of `more` that `to` does not hold yet.
        fn add_new<T: PartialEq>(to: &mut Vec<T>, more: Vec<T>) {
            for x in more {
                if !to.contains(&x) {
                    to.push(x);
                }
            }
        }
        self.rejected.absorb(later.rejected);
        add_new(&mut self.cut, later.cut);
        add_new(&mut self.faults, later.faults);
        add_new(&mut self.reduced_loops, later.reduced_loops);
        add_new(&mut self.hangs, later.hangs);
        self.blocked += later.blocked;
        self.reported = self.reported.saturating_add(later.reported);
        self.checks += later.checks;
        self.finished += later.finished;
        self.dead_ends += later.dead_ends;
        self.cut_short = self.cut_short.take().or(later.cut_short);
        self.symmetry_abandoned |= later.symmetry_abandoned;
        self.commute_abandoned |= later.commute_abandoned;
    }
}

/// Which explorer runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The graph explorer, or the candidate enumerator where the graph explorer's
    /// completeness gate fails.
    #[default]
    Auto,
    /// The graph explorer alone; a failed gate is reported in [`Exploration::fallback`] and
    /// the exploration must then not be trusted (tests use it to see where the gate fails).
    Graphs,
    /// The candidate enumerator alone (the differential oracle).
    Candidates,
    /// The graph explorer with reads that wait for writes to come under every model, never
    /// the revisiting search: its differential oracle where the model lets both run.
    Holes,
}

/// Options of the exploration.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// How often one backward branch may be taken per path.
    pub unroll: u32,
    /// The scheduler hangs are judged under.
    pub scheduler: progress::Scheduler,
    pub engine: Engine,
    /// Bounds on the search (the graph explorer honours them).
    pub budget: Budget,
    /// Where the graph explorer counts what it finds while it runs, for a progress display.
    pub progress: Option<std::sync::Arc<Counters>>,
    /// Whether the graph explorer may explore interchangeable threads in one order only.
    pub symmetry: bool,
    /// Whether relaxed RMWs of one commutative operation whose results nobody reads are
    /// explored in one coherence order, counted for all (`commute`; docs/explore.md).
    pub commute: bool,
    /// Whether the hole search may explore independent subtrees on rayon's threads. It
    /// reports what the sequential search does, but where its completeness gate fails a
    /// parallel search may have met a state the sequential one skipped: [`explore`] then
    /// searches again sequentially to learn whether the sequential search falls back too.
    pub parallel: bool,
}

/// Running totals of searches in progress (shared by every search that is given them).
#[derive(Debug, Default)]
pub struct Counters {
    /// Consistent finished executions found.
    pub executions: std::sync::atomic::AtomicU64,
    /// Graphs where some thread could not finish.
    pub blocked: std::sync::atomic::AtomicU64,
}

/// What receives each consistent, finished execution: the graph, each thread's path, the
/// coherence order, the races and where it stands ([`Found`]). Called from the threads of a
/// parallel search, in any order.
pub type OnExecution<'f, 'p> =
    dyn Fn(&Graph<'p>, &[&Trace], &Relation, &[Race], &Found) + Sync + 'f;

/// Where an execution handed to [`OnExecution`] stands.
#[derive(Clone, Copy, Debug)]
pub struct Found<'k> {
    /// How many executions it stands for (more than one under symmetry reduction: its images
    /// under permutations of interchangeable threads).
    pub weight: count::Count,
    /// Its place in the search order (lexicographic): of the executions that could show
    /// something (a witness, a picture), the one of least key is meant, whatever order a
    /// parallel search handed them on in.
    pub key: &'k [u64],
}

/// Explores every execution of `program` under `model`. `on_execution` receives each consistent
/// execution of paths that all finished: its graph, the path of each thread, its coherence
/// order and the races the model sees in it. Hangs are searched for under every starvation the
/// scheduler could allow.
///
/// Which engine runs, and with which reductions, is decided here (docs/explore.md, "Which
/// search runs"): where a run cannot stand, the program is explored again from the start with
/// less (see [`rerun`]), after `forget` tells the caller to drop everything `on_execution`
/// received so far. The exploration returned is the last run's.
pub fn explore<'p>(
    program: &'p Program,
    model: &dyn Model,
    opts: &ExploreOptions,
    on_execution: &OnExecution<'_, 'p>,
    forget: &dyn Fn(),
) -> Result<Exploration, TraceLimit> {
    let mut opts = opts.clone();
    loop {
        let raced = std::sync::atomic::AtomicBool::new(false);
        let seen = |g: &Graph<'p>, paths: &[&Trace], co: &Relation, races: &[Race], f: &Found| {
            if !races.is_empty() {
                raced.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            on_execution(g, paths, co, races, f)
        };
        let result = explore_once(program, model, &opts, &seen);
        let raced = raced.into_inner();
        match result {
            Ok(ref e) if rerun(&mut opts, e, raced) => forget(),
            _ => return result,
        }
    }
}

/// Whether the exploration `e`, made with `opts` (`raced`: some execution it handed on races),
/// must be made again, and with what (`opts` changed for it). In this order:
/// 1. The graph explorer's completeness gate failed in a parallel search: a parallel search
///    may have met a state that the sequential search skips, and its other workers went on
///    for a while; whether and where the search stops is the sequential search's call.
/// 2. It failed in the sequential search under [`Engine::Auto`]: the candidate enumerator
///    explores the program instead.
/// 3. The commuting-atomics reduction met two counters whose orders constrain each other:
///    every order is counted.
/// 4. The symmetry reduction explored interchangeable threads in one order, and races, hangs,
///    faults or cut loops name threads (their images under the permutations would be
///    missing), or it met a leaf with more automorphisms than it counts: no symmetry.
fn rerun(opts: &mut ExploreOptions, e: &Exploration, raced: bool) -> bool {
    let fell_back = e.fallback.is_some();
    if fell_back && opts.parallel {
        opts.parallel = false;
    } else if fell_back && opts.engine == Engine::Auto {
        opts.engine = Engine::Candidates;
    } else if opts.commute && e.commute_abandoned {
        opts.commute = false;
    } else if opts.symmetry && !e.symmetry.is_empty() && (raced || names_threads(e)) {
        opts.symmetry = false;
    } else {
        return false;
    }
    true
}

/// Whether `e` found something that names threads (a hang, a fault, a cut loop), or its
/// symmetry reduction gave up.
fn names_threads(e: &Exploration) -> bool {
    !e.hangs.is_empty() || !e.faults.is_empty() || !e.cut.is_empty() || e.symmetry_abandoned
}

/// One exploration with the engine and reductions `opts` names. With [`Engine::Auto`], when
/// the graph explorer's completeness gate fails the exploration is returned with `fallback`
/// set and nothing more is explored ([`explore`] then asks the candidate enumerator).
fn explore_once<'p>(
    program: &'p Program,
    model: &dyn Model,
    opts: &ExploreOptions,
    on_execution: &OnExecution<'_, 'p>,
) -> Result<Exploration, TraceLimit> {
    match opts.engine {
        Engine::Candidates => {
            let mut out = candidates::explore(program, model, opts, on_execution)?;
            out.engine = Engine::Candidates;
            Ok(out)
        }
        Engine::Auto | Engine::Graphs | Engine::Holes => {
            Ok(graphs(program, model, opts, on_execution))
        }
    }
}

/// The graph explorer: the search with nothing starved, then, when some thread spun, once per
/// set of threads the scheduler could starve.
fn graphs<'p>(
    program: &'p Program,
    model: &dyn Model,
    opts: &ExploreOptions,
    on_execution: &OnExecution<'_, 'p>,
) -> Exploration {
    let accessors = statics::accessors(program);
    let mut statics: Vec<statics::ThreadStatics> = (0..program.threads.len())
        .map(|t| statics::ThreadStatics::new(program, ThreadId(t as u32), opts.unroll, &accessors))
        .collect();
    commute::mark(program, &mut statics, opts.commute);
    let successors = search::launch_successors(program);
    let candidates = opts.scheduler.starvation_candidates(program);
    let classes = if opts.symmetry {
        symmetry::classes(program, candidates.len() > 1)
    } else {
        vec![]
    };
    // The revisiting search needs a total coherence it can place and an acyclic `po ∪ rf`.
    // It prunes no partial graph for symmetry (a later revisit may still change what a pruned
    // graph's threads read), so where threads are interchangeable the hole search, which
    // explores one order of them, runs instead (docs/explore.md, "Which search runs").
    let revisits = opts.engine != Engine::Holes
        && model.total_coherence()
        && model.porf_acyclic()
        && classes.is_empty();
    let mut out = Exploration {
        engine: Engine::Graphs,
        symmetry: classes
            .iter()
            .map(|c| c.iter().map(|&t| ThreadId(t as u32)).collect())
            .collect(),
        ..Default::default()
    };
    let setup = search::Setup {
        program,
        model,
        scheduler: &opts.scheduler,
        statics: &statics,
        successors: &successors,
        budget: opts.budget,
        progress: opts.progress.clone(),
        classes: &classes,
        parallel: opts.parallel,
    };
    let mut spun = false;
    for starved in candidates {
        if !starved.is_empty() && !spun {
            break;
        }
        let revisits_here = revisits && (starved.is_empty() || !opts.scheduler.preempts());
        let halt = std::sync::atomic::AtomicBool::new(false);
        let mut s = search::Search::new(
            &setup,
            starved,
            revisits_here,
            &mut out,
            on_execution,
            &halt,
        );
        s.run();
        spun |= s.spun;
        if let Some(why) = s.gate.failure.take() {
            out.fallback = Some(why.0);
            return out;
        }
        if out.cut_short.is_some() {
            break;
        }
    }
    out.reduced_loops.sort_unstable();
    out
}
