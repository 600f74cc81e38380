//! What checking a program produces: final states, the condition's verdict, witnesses.

use scopecheck_ir::{Observable, Quantifier, Value};

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

/// The verdict on one program under one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub model: &'static str,
    pub quantifier: Quantifier,
    /// Distinct final states, sorted.
    pub states: Vec<FinalState>,
    pub outcome: Outcome,
    pub observation: Observation,
    /// Executions (final-state choices included) that satisfy the proposition.
    pub positive: u64,
    /// Executions that do not.
    pub negative: u64,
    /// Consistent executions found (candidate graphs accepted by the model).
    pub executions: u64,
    /// Candidate executions the model rejected, by the axiom that rejected them.
    pub rejected: Vec<(&'static str, u64)>,
    /// Present when the exploration did not cover every execution.
    pub incomplete: Option<Incomplete>,
}

impl Verdict {
    pub fn is_complete(&self) -> bool {
        self.incomplete.is_none()
    }
}
