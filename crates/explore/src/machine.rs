//! The register machine a thread's code runs on, shared by both explorers: register values,
//! the reads each value was computed from (data and address dependencies) and the reads that
//! decided a conditional branch (control dependencies), with the meaning of operands,
//! addresses, arithmetic, branches and the value an RMW writes. The graph explorer
//! (`interp`) gives reads the value of the write they read from; the candidate enumerator
//! (`paths`) gives them guessed values.
//!
//! Each register also carries the allocation window its value was derived from, and an access
//! through a pointer that leaves it is a fault (`provenance.rs`).

use scopecheck_ir::{
    Address, Arithmetic, BinOp, BranchCond, FloatMode, IntType, LocId, Operand, Order, Program,
    RegId, RmwKind, Scope, Thread, Value,
};

use std::sync::Arc;

use crate::provenance::{allocation_count, allocation_locations, combine_windows, window_of};
use crate::trace::{EventKind, TraceEvent};

/// The sorted union of two dependency lists.
pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The operands of a memory access (a load, a store, an RMW) before its address is resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub addr: Address,
    pub ty: IntType,
    pub order: Order,
    pub scope: Scope,
}

impl Access {
    pub fn new(addr: Address, ty: IntType, order: Order, scope: Scope) -> Self {
        Access {
            addr,
            ty,
            order,
            scope,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Machine {
    pub regs: Vec<Value>,
    /// For each register, the window of the allocation its value was derived from (0: none;
    /// `provenance.rs`).
    pub windows: Vec<u32>,
    /// The number of allocations of the program: a window above it names none.
    allocations: u32,
    /// For each register, the reads (path indices) its value was computed from.
    reg_deps: Vec<Arc<[u32]>>,
    /// Reads that decided a conditional branch so far: every later event depends on them.
    ctrl: Arc<[u32]>,
}

impl Machine {
    /// The registers at the thread's start: its initial values, the others 0.
    pub fn new(program: &Program, thread: &Thread) -> Self {
        let mut regs = vec![0; thread.registers.len()];
        for (r, v) in &thread.init_regs {
            regs[r.0 as usize] = *v;
        }
        let allocations = allocation_count(program);
        Machine {
            reg_deps: vec![Arc::from(Vec::new()); regs.len()],
            windows: regs.iter().map(|&v| window_of(allocations, v)).collect(),
            allocations,
            regs,
            ctrl: Arc::from(Vec::new()),
        }
    }

    /// The allocation window of an operand's value (`provenance.rs`).
    pub fn window(&self, o: Operand) -> u32 {
        match o {
            Operand::Reg(r) => self.windows[r.0 as usize],
            Operand::Imm(v) => window_of(self.allocations, v),
        }
    }

    /// Gives register `r` the window `w` (after [`Machine::set`], which clears it).
    pub fn set_window(&mut self, r: RegId, w: u32) {
        self.windows[r.0 as usize] = w;
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

    /// Sets register `r` to a value that is derived from no allocation (read from memory,
    /// received); [`Machine::set_window`] gives it one.
    pub fn set(&mut self, r: RegId, v: Value, deps: Vec<u32>) {
        self.regs[r.0 as usize] = v;
        self.reg_deps[r.0 as usize] = Arc::from(deps);
        self.windows[r.0 as usize] = 0;
    }

    /// Makes register `r` depend on exactly the read at path index `read`.
    pub fn set_deps(&mut self, r: RegId, read: u32) {
        self.reg_deps[r.0 as usize] = Arc::from(vec![read]);
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
        events.push(TraceEvent {
            instr,
            kind,
            deps: Arc::from(deps),
        });
        (events.len() - 1) as u32
    }

    /// The location an access of type `ty` through address `a` touches, with the reads the
    /// address depends on, or the fault when it names no location of that width.
    pub fn address(
        &self,
        program: &Program,
        a: Address,
        ty: IntType,
    ) -> Result<(LocId, Vec<u32>), String> {
        let (loc, deps) = match a {
            Address::Loc { loc, index: None } => (loc, vec![]),
            Address::Loc {
                loc,
                index: Some(r),
            } => (
                program
                    .element(loc, self.regs[r.0 as usize])
                    .map_err(|f| f.0)?,
                self.reg_deps[r.0 as usize].to_vec(),
            ),
            Address::Ptr { reg, disp } => {
                let target = self.regs[reg.0 as usize].wrapping_add(disp);
                let w = self.windows[reg.0 as usize];
                if w != 0 && window_of(self.allocations, target) != w {
                    return Err(left_allocation(program, w, target));
                }
                (
                    program.resolve(target, ty).map_err(|f| f.0)?,
                    self.reg_deps[reg.0 as usize].to_vec(),
                )
            }
        };
        let held = program.location(loc).ty;
        if held.bits != ty.bits {
            return Err(format!(
                "a {}-bit access to `{}`, which holds a {held} (mixed-size accesses are not supported)",
                ty.bits,
                program.location(loc).name
            ));
        }
        Ok((loc, deps))
    }

    /// `a op b` in type `ty` with the reads it depends on, or why it is undefined.
    pub fn binary(
        &self,
        op: BinOp,
        ty: IntType,
        rules: Arithmetic,
        a: Operand,
        b: Operand,
    ) -> Result<(Value, Vec<u32>), &'static str> {
        Ok((
            op.eval(ty, rules, self.operand(a), self.operand(b))?,
            union(self.operand_deps(a), self.operand_deps(b)),
        ))
    }

    /// `a * b + c` in float type `ty`, rounded once, with the reads it depends on.
    pub fn fma(
        &self,
        ty: IntType,
        mode: FloatMode,
        [a, b, c]: [Operand; 3],
    ) -> Result<(Value, Vec<u32>), &'static str> {
        let v =
            scopecheck_ir::float::fma(ty, mode, self.operand(a), self.operand(b), self.operand(c))?;
        let deps = union(self.operand_deps(a), self.operand_deps(b));
        Ok((v, union(&deps, self.operand_deps(c))))
    }

    /// The window of `a op b` (`provenance.rs`).
    pub fn binary_window(&self, op: BinOp, a: Operand, b: Operand) -> u32 {
        combine_windows(op, self.window(a), self.window(b))
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
        if !deps.is_empty() {
            self.ctrl = Arc::from(union(&self.ctrl, &deps));
        }
        taken
    }

    /// What an RMW of type `ty` that read `old` writes, with the reads the written value and
    /// the address (`addr_deps`) depend on; `None` for a CAS that fails (a read only). A CAS
    /// compares in its type.
    pub fn rmw_write(
        &self,
        kind: RmwKind,
        ty: IntType,
        addr_deps: &[u32],
        old: Value,
    ) -> Option<(Value, Vec<u32>)> {
        match kind {
            RmwKind::Op(op, v) => Some((
                op.apply(ty, old, self.operand(v)),
                union(addr_deps, self.operand_deps(v)),
            )),
            RmwKind::Cas { expected, new } => (ty.wrap(old) == ty.wrap(self.operand(expected)))
                .then(|| {
                    let d = union(self.operand_deps(expected), self.operand_deps(new));
                    (ty.wrap(self.operand(new)), union(addr_deps, &d))
                }),
        }
    }
}

/// The fault of an access at `target` through a pointer derived from the allocation with
/// window `w`.
fn left_allocation(program: &Program, w: u32, target: Value) -> String {
    let name = allocation_locations(program, w)
        .first()
        .map(|&first| match program.array_of(first) {
            Some(a) => a.name.clone(),
            None => program.location(first).name.clone(),
        })
        .unwrap_or_default();
    format!(
        "address {target:#x} is out of bounds of `{name}`, the allocation its pointer was computed from (C and CUDA leave pointer arithmetic that leaves its allocation undefined)"
    )
}
