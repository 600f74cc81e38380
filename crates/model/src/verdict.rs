//! What checking a program produces: final states, the condition's verdict, witnesses.

use scopecheck_explore::RaceKind;
use scopecheck_ir::{LocId, Observable, Quantifier, Span, ThreadId, Value};

/// One reachable final state: the value of each observable the report prints, in the order of
/// [`scopecheck_ir::Program::observables`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FinalState {
    pub values: Vec<(Observable, Value)>,
    /// Whether the condition's proposition holds in this state.
    pub satisfies: bool,
}

/// The herd7 result: whether the condition is validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The condition is validated (`exists`: some execution satisfies it; `~exists`: none does;
    /// `forall`: all do).
    Ok,
    /// The condition is refuted.
    No,
    /// Exploration was cut short and the executions found so far do not settle the condition.
    Unknown,
}

/// herd7's observation: how many executions satisfy the proposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// Some do, some do not.
    Sometimes,
    /// None does.
    Never,
    /// All do.
    Always,
}

/// Why an exploration is incomplete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incomplete {
    pub reason: String,
}

/// One side of a race: who accessed what, where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    pub thread: ThreadId,
    /// Source line and text of the instruction.
    pub line: u32,
    pub text: String,
    /// Where the instruction is in the source.
    pub span: Span,
    pub loc: LocId,
    /// A write (or the write of an RMW); otherwise a read.
    pub write: bool,
}

/// Two conflicting accesses that race in some consistent execution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RaceReport {
    pub kind: RaceKind,
    pub first: Access,
    pub second: Access,
}

/// One read of the witness execution: what it read and from which write (`None`: the initial
/// value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessRead {
    pub reader: Access,
    pub value: Value,
    pub from: Option<Access>,
}

/// A thread spinning forever in an await loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spin {
    pub thread: ThreadId,
    /// Source line and text of the loop's backward branch.
    pub line: u32,
    pub text: String,
    /// Where that branch is in the source.
    pub span: Span,
    /// The latest value of each location it reads, which never lets it out.
    pub waits: Vec<(LocId, Value)>,
}

/// An execution in which some threads spin forever and none of the others can release them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HangReport {
    pub spinning: Vec<Spin>,
    /// Threads waiting forever at a barrier not every participant reaches (`waits` is empty).
    pub at_barrier: Vec<Spin>,
    /// Threads the scheduler never ran in this hang.
    pub starved: Vec<ThreadId>,
    /// The weakest scheduler guarantee under which it happens: `fair` when no thread is starved
    /// (every scheduler allows it), otherwise the chosen progress model.
    pub progress: String,
    /// Why, in words.
    pub reason: String,
}

/// The verdict on one program under one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub model: &'static str,
    pub quantifier: Quantifier,
    /// Distinct final states, sorted.
    pub states: Vec<FinalState>,
    pub outcome: Outcome,
    pub observation: Observation,
    /// Executions (final-state choices included) that satisfy the proposition. Like the
    /// other two counts, exact unless it saturated at `u128::MAX` ([`Verdict::counts_at_least`]).
    pub positive: u128,
    /// Executions that do not.
    pub negative: u128,
    /// Consistent executions found (candidate graphs accepted by the model).
    pub executions: u128,
    /// Candidate executions the model rejected, by the axiom that rejected them.
    pub rejected: Vec<(&'static str, u64)>,
    /// Present when the exploration did not cover every execution.
    pub incomplete: Option<Incomplete>,
    /// Await loops explored by their exiting iteration alone.
    pub reduced_loops: usize,
    /// Hangs the chosen scheduler permits; the program terminates when there is none.
    pub hangs: Vec<HangReport>,
    /// Races found in consistent executions: for the language models, any race makes the
    /// program's behaviour undefined, whatever the states say.
    pub races: Vec<RaceReport>,
    /// The platform checked on, and which final states only its missing capabilities allow.
    pub platform: String,
    pub platform_notes: Vec<String>,
    /// Patterns that are usually mistakes (see `lint`).
    pub lints: Vec<crate::Lint>,
    /// An execution that shows the answer: for `exists` one satisfying the proposition, for
    /// `~exists` and `forall` one breaking the requirement, as who read what from whom. Empty
    /// when there is none.
    pub witness: Vec<WitnessRead>,
    /// With [`crate::CheckOptions::state_witnesses`]: for each final state (keyed by its
    /// values, in the order of [`FinalState::values`]), the reads of the first execution
    /// (least keyed, so the same on every run) that ends in it. Empty otherwise.
    pub state_witnesses: std::collections::BTreeMap<Vec<Value>, Vec<WitnessRead>>,
    /// The execution that shows the answer (the one `witness` describes), or, when none does,
    /// the first execution found; captured only with [`crate::CheckOptions::graphs`].
    pub witness_graph: Option<ExecutionGraph>,
    /// The first execution found to race, with the racing pair marked; captured only with
    /// [`crate::CheckOptions::graphs`].
    pub race_graph: Option<ExecutionGraph>,
    /// The sizes of the classes of interchangeable threads the explorer explored in one order
    /// only (each execution found standing for its images); empty when none.
    pub symmetry: Vec<usize>,
}

impl Verdict {
    /// Whether the verdict is vacuous: the exploration is complete and no execution
    /// terminates (every one hangs), so a requirement holds of no final state at all.
    pub fn vacuous(&self) -> bool {
        self.is_complete() && self.executions == 0
    }

    /// Whether some count saturated at `u128::MAX` and so says "at least that many" (an
    /// orbit or a sum past 2^128 executions); the counts are exact otherwise.
    pub fn counts_at_least(&self) -> bool {
        use scopecheck_explore::count::at_least;
        at_least(self.positive) || at_least(self.negative) || at_least(self.executions)
    }

    pub fn is_complete(&self) -> bool {
        self.incomplete.is_none()
    }

    /// Whether some consistent execution has a race.
    pub fn is_racy(&self) -> bool {
        !self.races.is_empty()
    }

    /// Whether no thread can wait forever under the chosen scheduler: `Some(false)` when a hang
    /// was found, `Some(true)` when none was and the exploration was complete, `None` when a
    /// bound cut it short (a loop that was unrolled, not reduced, may spin beyond the bound).
    pub fn terminates(&self) -> Option<bool> {
        if !self.hangs.is_empty() {
            Some(false)
        } else if self.is_complete() {
            Some(true)
        } else {
            None
        }
    }
}

/// One execution as a picture's data (`scopecheck check --graph`): its events, one node per
/// instruction instance (an RMW's two halves, and a barrier's arrival and wait, are one node),
/// and the edges that explain it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionGraph {
    /// Initial writes first (in location order), then each thread's events in program order.
    pub events: Vec<GraphEvent>,
    /// Sorted by kind, then by endpoints; no duplicates.
    pub edges: Vec<GraphEdge>,
    /// One final state of this execution: the value of each observable.
    pub state: Vec<(Observable, Value)>,
    /// Whether the condition's proposition holds in that state.
    pub satisfies: bool,
}

/// One event of an [`ExecutionGraph`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEvent {
    /// `None` for an initial write.
    pub thread: Option<ThreadId>,
    /// The position among its thread's events (0 for initial writes).
    pub po_index: usize,
    /// Source line, text and span of the instruction (`None` for an initial write).
    pub source: Option<(u32, String, Span)>,
    /// What it does, in the model's words: `W.rel.gpu x=1`, `R.acq.gpu flag=1`,
    /// `RMW.relaxed.gpu c 0->1`, `F.sc.cta`, `bar.sync 0`.
    pub label: String,
    pub loc: Option<LocId>,
    /// The value read or written (an RMW: the value it wrote).
    pub value: Option<Value>,
    /// One of the accesses of the race the graph shows.
    pub racing: bool,
}

/// What an edge of an [`ExecutionGraph`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// Program order, immediate successors only.
    Po,
    /// Reads-from: from a write to a read of it.
    Rf,
    /// Coherence, immediate successors per location.
    Co,
    /// Synchronization the model names (`EdgeKind::Sync` edges carry its name).
    Sync,
    /// Barrier synchronization between threads meeting at one barrier round.
    Barrier,
    /// Launch order: a thread that starts only after another finished.
    Launch,
    /// The racing pair.
    Race,
}

impl EdgeKind {
    /// The edge's name in pictures and legends.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Po => "po",
            EdgeKind::Rf => "rf",
            EdgeKind::Co => "co",
            EdgeKind::Sync => "sync",
            EdgeKind::Barrier => "barrier",
            EdgeKind::Launch => "launch",
            EdgeKind::Race => "race",
        }
    }

    pub const ALL: [EdgeKind; 7] = [
        EdgeKind::Po,
        EdgeKind::Rf,
        EdgeKind::Co,
        EdgeKind::Sync,
        EdgeKind::Barrier,
        EdgeKind::Launch,
        EdgeKind::Race,
    ];
}

/// An edge between two events of an [`ExecutionGraph`] (indices into `events`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GraphEdge {
    pub kind: EdgeKind,
    pub from: usize,
    pub to: usize,
    /// The label drawn on the edge: the model's name of a synchronization edge (`sw`), the
    /// kind of a race (`data race`), empty for the others.
    pub label: String,
}
