//! The register machine a thread's code runs on, shared by both explorers: register values,
//! the reads each value was computed from (data and address dependencies) and the reads that
//! decided a conditional branch (control dependencies), with the meaning of operands,
//! addresses, arithmetic, branches and the value an RMW writes. The graph explorer
//! (`interp`) gives reads the value of the write they read from; the candidate enumerator
//! (`trace`) gives them guessed values.

use scopecheck_ir::{Address, BinOp, BranchCond, LocId, Operand, RegId, RmwKind, Thread, Value};

use crate::trace::{EventKind, TraceEvent};

/// The sorted union of two dependency lists.
pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Machine {
    pub regs: Vec<Value>,
    /// For each register, the reads (path indices) its value was computed from.
    reg_deps: Vec<Vec<u32>>,
    /// Reads that decided a conditional branch so far: every later event depends on them.
    ctrl: Vec<u32>,
}

impl Machine {
    /// The registers at the thread's start: its initial values, the others 0.
    pub fn new(thread: &Thread) -> Self {
        let mut regs = vec![0; thread.registers.len()];
        for (r, v) in &thread.init_regs {
            regs[r.0 as usize] = *v;
        }
        Machine {
            reg_deps: vec![vec![]; regs.len()],
            regs,
            ctrl: vec![],
        }
    }

    pub fn operand(&self, o: Operand) -> Value {
        match o {
            Operand::Reg(r) => self.regs[r.0 as usize],
            Operand::Imm(v) => v,
        }
    }

    pub fn operand_deps(&self, o: Operand) -> &[u32] {
        match o {
            Operand::Reg(r) => &self.reg_deps[r.0 as usize],
            Operand::Imm(_) => &[],
        }
    }

    pub fn set(&mut self, r: RegId, v: Value, deps: Vec<u32>) {
        self.regs[r.0 as usize] = v;
        self.reg_deps[r.0 as usize] = deps;
    }

    /// Makes register `r` depend on exactly the read at path index `read`.
    pub fn set_deps(&mut self, r: RegId, read: u32) {
        self.reg_deps[r.0 as usize] = vec![read];
    }

    /// Appends an event to `events` with its dependencies and the control dependencies so
    /// far; returns its path index.
    pub fn push(
        &self,
        events: &mut Vec<TraceEvent>,
        instr: usize,
        kind: EventKind,
        deps: &[u32],
    ) -> u32 {
        let deps = union(deps, &self.ctrl);
        events.push(TraceEvent { instr, kind, deps });
        (events.len() - 1) as u32
    }

    /// The location an address names, with the reads its offset depends on, or the fault when
    /// its offset is not zero.
    pub fn address(&self, a: Address) -> Result<(LocId, Vec<u32>), String> {
        match a.offset {
            None => Ok((a.loc, vec![])),
            Some(r) => {
                let off = self.regs[r.0 as usize];
                if off == 0 {
                    Ok((a.loc, self.reg_deps[r.0 as usize].clone()))
                } else {
                    Err(format!("address offset {off} leaves the location"))
                }
            }
        }
    }

    /// `a op b` with the reads it depends on, or why it is undefined.
    pub fn binary(
        &self,
        op: BinOp,
        a: Operand,
        b: Operand,
    ) -> Result<(Value, Vec<u32>), &'static str> {
        if let Some(why) = op.undefined(self.operand(b)) {
            return Err(why);
        }
        Ok((
            op.apply(self.operand(a), self.operand(b)),
            union(self.operand_deps(a), self.operand_deps(b)),
        ))
    }

    /// Whether a branch on `cond` is taken. Everything after a conditional branch depends on
    /// what decided it, whichever way it went (control dependency).
    pub fn branch(&mut self, cond: BranchCond) -> bool {
        let (taken, deps) = match cond {
            BranchCond::Always => (true, vec![]),
            BranchCond::Eq(a, b) | BranchCond::Ne(a, b) => {
                let eq = self.operand(a) == self.operand(b);
                let taken = if matches!(cond, BranchCond::Eq(..)) {
                    eq
                } else {
                    !eq
                };
                (taken, union(self.operand_deps(a), self.operand_deps(b)))
            }
        };
        self.ctrl = union(&self.ctrl, &deps);
        taken
    }

    /// What an RMW that read `old` writes, with the reads the written value and the address
    /// (`addr_deps`) depend on; `None` for a CAS that fails (a read only).
    pub fn rmw_write(
        &self,
        kind: RmwKind,
        addr_deps: &[u32],
        old: Value,
    ) -> Option<(Value, Vec<u32>)> {
        match kind {
            RmwKind::Op(op, v) => Some((
                op.apply(old, self.operand(v)),
                union(addr_deps, self.operand_deps(v)),
            )),
            RmwKind::Cas { expected, new } => (old == self.operand(expected)).then(|| {
                let d = union(self.operand_deps(expected), self.operand_deps(new));
                (self.operand(new), union(addr_deps, &d))
            }),
        }
    }
}
