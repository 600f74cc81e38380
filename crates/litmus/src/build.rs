//! The code of one thread as a C lowering builds it, shared by the two C front-ends: the litmus
//! C dialect (`c::lower`, over this crate's own syntax tree) and CUDA / OpenCL
//! (`scopecheck_cuda`'s `lower`, over a tree-sitter tree).
//!
//! Both front-ends walk their own tree (the litmus frame names its parameters, registers and
//! condition in its own syntax, which the CUDA grammar cannot read), but what they build is the
//! same: registers named as written (a shadowing declaration gets `name#2`) each with a C type,
//! temporaries `$t0`, `$t1`, ... (names no C identifier and no condition can spell), nested
//! scopes of names, labels, and branches whose targets are resolved once the code is complete.
//! [`CodeBuilder`] holds that, so the two front-ends name and number alike by construction.

use scopecheck_ir::{BinOp, BranchCond, Instr, InstrKind, IntType, Operand, RegId, Span};

use crate::vocab::{common_type, compares_raw};

/// One thread's code being built, with the names in scope bound to `B` (each front-end's own
/// kind of binding: a register, a pointer, ...).
pub struct CodeBuilder<B> {
    /// The registers by [`RegId`], as they are named in the program.
    pub registers: Vec<String>,
    /// The C type of each register (a register always holds a value canonical in it).
    pub reg_types: Vec<IntType>,
    pub code: Vec<Instr>,
    /// The names in scope, innermost scope last (a later binding of a scope shadows).
    pub scopes: Vec<Vec<(String, B)>>,
    /// Each label's instruction index once placed; label 0 is the end of the code.
    pub labels: Vec<Option<usize>>,
    /// Branches to resolve: (instruction index, label).
    fixups: Vec<(usize, usize)>,
    /// The label the code's end gets (`return` jumps there).
    pub end_label: usize,
    /// The temporaries made so far (the next one is `$t{temps}`).
    pub temps: u32,
}

impl<B: Copy> CodeBuilder<B> {
    /// Empty code with one scope holding `outer` (parameters, namespace-scope constants).
    pub fn new(outer: Vec<(String, B)>) -> Self {
        CodeBuilder {
            registers: Vec::new(),
            reg_types: Vec::new(),
            code: Vec::new(),
            scopes: vec![outer],
            labels: vec![None],
            fixups: Vec::new(),
            end_label: 0,
            temps: 0,
        }
    }

    /// What `name` is bound to in the innermost scope that has it.
    pub fn lookup(&self, name: &str) -> Option<B> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| *b))
    }

    pub fn bind(&mut self, name: &str, b: B) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.to_string(), b));
        }
    }

    /// Replaces the innermost binding of `name` (a pointer being allocated, a stream created).
    pub fn rebind(&mut self, name: &str, b: B) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(e) = s.iter_mut().rev().find(|(n, _)| n == name) {
                e.1 = b;
                return;
            }
        }
    }

    /// A new register named `name`, or `name#2`, `name#3`, ... when that name is taken.
    pub fn new_reg(&mut self, name: &str, ty: IntType) -> RegId {
        let mut n = name.to_string();
        let mut k = 2;
        while self.registers.contains(&n) {
            n = format!("{name}#{k}");
            k += 1;
        }
        self.registers.push(n);
        self.reg_types.push(ty);
        RegId((self.registers.len() - 1) as u32)
    }

    /// A new temporary register `$tN`.
    pub fn temp(&mut self, ty: IntType) -> RegId {
        let n = format!("$t{}", self.temps);
        self.temps += 1;
        self.registers.push(n);
        self.reg_types.push(ty);
        RegId((self.registers.len() - 1) as u32)
    }

    /// The register a result of type `ty` goes to: the hint when it has that type.
    pub fn dst_for(&mut self, hint: Option<RegId>, ty: IntType) -> RegId {
        match hint {
            Some(h) if self.reg_ty(h) == ty => h,
            _ => self.temp(ty),
        }
    }

    pub fn reg_ty(&self, r: RegId) -> IntType {
        self.reg_types[r.0 as usize]
    }

    /// The type of an operand: a register's, or a constant's as C types a literal (`int` when
    /// it fits, else `long long`).
    pub fn operand_ty(&self, o: Operand) -> IntType {
        match o {
            Operand::Reg(r) => self.reg_ty(r),
            Operand::Imm(v) if IntType::S32.holds(i128::from(v)) => IntType::S32,
            Operand::Imm(_) => IntType::S64,
        }
    }

    pub fn new_label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    /// Places `label` at the next instruction.
    pub fn set_label(&mut self, label: usize) {
        let here = self.code.len();
        if let Some(l) = self.labels.get_mut(label) {
            *l = Some(here);
        }
    }

    /// Appends an instruction from the source text `source` at `span`; its text is the source
    /// with its runs of white space made one space.
    pub fn emit(&mut self, kind: InstrKind, span: Span, source: &str) {
        let text = source.split_whitespace().collect::<Vec<_>>().join(" ");
        self.code.push(Instr { kind, span, text });
    }

    /// Appends a branch to `label` (resolved by [`Self::resolve`]).
    pub fn branch(&mut self, cond: BranchCond, label: usize, span: Span, source: &str) {
        self.fixups.push((self.code.len(), label));
        self.emit(InstrKind::Branch { cond, target: 0 }, span, source);
    }

    /// Branches to `label` when `a == b` (`eq`) or `a != b` (`!eq`), for operands (with their
    /// C types) that are not both constants (those the front-end folds). A branch compares raw
    /// values: operands of different types compare in their common type first, through a
    /// typed `Eq` into an `int` temporary.
    pub fn branch_eq(
        &mut self,
        eq: bool,
        (a, ta): (Operand, IntType),
        (b, tb): (Operand, IntType),
        label: usize,
        (span, source): (Span, &str),
    ) {
        let (a, b) = if compares_raw(a, ta, b, tb) {
            (a, b)
        } else {
            let ty = common_type(ta, tb);
            let t = self.temp(IntType::S32);
            let kind = InstrKind::Binary {
                dst: t,
                op: BinOp::Eq,
                ty,
                a,
                b,
            };
            self.emit(kind, span, source);
            (Operand::Reg(t), Operand::Imm(1))
        };
        let cond = if eq {
            BranchCond::Eq(a, b)
        } else {
            BranchCond::Ne(a, b)
        };
        self.branch(cond, label, span, source);
    }

    /// Places the end label and resolves the branch targets; the code is then complete.
    pub fn resolve(&mut self) {
        let end = self.end_label;
        self.set_label(end);
        for &(instr, label) in &self.fixups {
            let target = self.labels.get(label).copied().flatten().unwrap_or(0);
            if let Some(Instr {
                kind: InstrKind::Branch { target: t, .. },
                ..
            }) = self.code.get_mut(instr)
            {
                *t = target;
            }
        }
        self.fixups.clear();
    }
}
