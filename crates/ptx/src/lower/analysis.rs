//! Walking bodies, and the analysis before lowering: which module variables the kernel
//! uses, the width of the accesses made to byte arrays, and which registers may hold a
//! variable's address.

use std::collections::{BTreeSet, HashMap, HashSet};

use scopecheck_ir::{IntType, Span};

use crate::ast::{
    Body, Function, Instruction, Module, Operand as Op, StateSpace, Statement, Variable,
};

use super::qualifiers::{bits_of, int_of, mnemonic, quals};
use super::{LowerError, R};

fn visit<'m>(body: &'m Body, f: &mut impl FnMut(&'m Instruction)) {
    for s in &body.statements {
        match s {
            Statement::Instruction(i) => f(i),
            Statement::Block(b) => visit(b, f),
            Statement::Label(..) => {}
        }
    }
}

fn all_locals<'m>(body: &'m Body, out: &mut Vec<&'m Variable>) {
    out.extend(&body.locals);
    for s in &body.statements {
        if let Statement::Block(b) = s {
            all_locals(b, out);
        }
    }
}

/// Every symbol an operand names (address bases, vector and list elements included).
fn symbols<'m>(o: &'m Op, out: &mut Vec<&'m str>) {
    match o {
        Op::Symbol(s) => out.push(s),
        Op::Address { base, .. } | Op::Not(base) => symbols(base, out),
        Op::Vector(v) | Op::List(v) | Op::Texture(v) => v.iter().for_each(|o| symbols(o, out)),
        Op::Reg(_) | Op::Int(_) | Op::Float { .. } | Op::Sink => {}
    }
}

/// `call (ret), f, (args)`: the return list, the callee operand, the argument list.
pub(super) fn call_parts(ins: &Instruction) -> (&[Op], Option<&Op>, &[Op]) {
    let ops = ins.operands.as_slice();
    let (rets, rest) = match ops.first() {
        Some(Op::List(r)) => (r.as_slice(), &ops[1..]),
        _ => (&[][..], ops),
    };
    let args = match rest.get(1) {
        Some(Op::List(a)) => a.as_slice(),
        _ => &[],
    };
    (rets, rest.first(), args)
}

/// The function `name`: its definition when the module has one (a module may declare a
/// function before defining it).
pub(super) fn find_function<'m>(module: &'m Module, name: &str) -> Option<&'m Function> {
    let mut named = module.functions.iter().filter(|f| f.name == name);
    let first = named.clone().next();
    named.find(|f| f.body.is_some()).or(first)
}

fn is_memory_op(op: &str) -> bool {
    matches!(op, "ld" | "ldu" | "st" | "atom" | "red")
}

/// A variable: a module one (`None`) or a function's own (`Some(function name)`), by name.
pub(super) type VarKey = (Option<String>, String);

/// The taint of a register that holds an address of no known variable (no variable has an
/// empty name).
static SOME_ADDRESS: VarKey = (None, String::new());

/// What lowering needs to know about the code before it starts: which module variables the
/// kernel uses, the width of the accesses made to byte arrays, and which registers may hold
/// a variable's address.
pub(super) struct Analysis {
    pub(super) used: HashSet<String>,
    /// The type of the accesses to a `.b8` variable (the width its locations get).
    pub(super) widths: HashMap<VarKey, IntType>,
    /// Per function: registers that may hold the address of a variable (flow-insensitive:
    /// `nvcc` and NVRTC write fresh registers for fresh values, so this is precise there).
    pub(super) addr_regs: HashMap<String, HashSet<String>>,
    /// Per function: registers that hold addresses of `.local` variables only, with the
    /// width of those variables' locations (wider accesses through them are split).
    pub(super) local_regs: HashMap<String, HashMap<String, IntType>>,
    /// Bytes of dynamic shared memory the launch gives each CTA.
    pub(super) dynamic_shared: u64,
}

/// The variables a function can name: its own (not `.param`/`.reg`) before the module's.
struct Names<'m> {
    func: &'m str,
    locals: HashMap<&'m str, &'m Variable>,
    module_vars: &'m HashMap<&'m str, &'m Variable>,
}

impl<'m> Names<'m> {
    /// The variable `s` names here, with its key.
    fn var(&self, s: &str) -> Option<(VarKey, &'m Variable)> {
        if let Some(v) = self.locals.get(s) {
            Some(((Some(self.func.to_string()), s.to_string()), *v))
        } else {
            self.module_vars.get(s).map(|v| ((None, s.to_string()), *v))
        }
    }
}

/// Registers that may hold a variable's address, and which variables: a fixed point over
/// the instructions that carry an address from their sources to their destination.
fn taint<'m>(instrs: &[&'m Instruction], names: &Names<'m>) -> HashMap<&'m str, BTreeSet<VarKey>> {
    let mut taint: HashMap<&str, BTreeSet<VarKey>> = HashMap::new();
    loop {
        let mut changed = false;
        for ins in instrs {
            let Some(Op::Reg(dst)) = ins.operands.first() else {
                continue;
            };
            let srcs = match ins.opcode.as_str() {
                "mov" | "cvta" | "cvt" | "add" | "sub" | "and" | "or" => &ins.operands[1..],
                "mad" => ins.operands.get(3..4).unwrap_or(&[]),
                "selp" => ins.operands.get(1..3).unwrap_or(&[]),
                _ => continue,
            };
            let mut set = BTreeSet::new();
            // A 32-bit `cvta` result is a shared-window address, whatever it came
            // from (a pointer through a parameter, say).
            if ins.opcode == "cvta" && ins.modifiers.iter().any(|m| m == "u32") {
                set.insert(SOME_ADDRESS.clone());
            }
            for s in srcs {
                match s {
                    Op::Reg(r) => set.extend(taint.get(r.as_str()).into_iter().flatten().cloned()),
                    Op::Symbol(v) => set.extend(names.var(v).map(|(k, _)| k)),
                    _ => {}
                }
            }
            if !set.is_empty() {
                let e = taint.entry(dst).or_default();
                let before = e.len();
                e.extend(set);
                changed |= e.len() != before;
            }
        }
        if !changed {
            return taint;
        }
    }
}

impl Analysis {
    pub(super) fn new(module: &Module, kernel: &Function) -> R<Self> {
        let mut a = Analysis {
            used: HashSet::new(),
            widths: HashMap::new(),
            addr_regs: HashMap::new(),
            local_regs: HashMap::new(),
            dynamic_shared: 0,
        };
        let module_vars: HashMap<&str, &Variable> = module
            .variables
            .iter()
            .map(|v| (v.name.as_str(), v))
            .collect();
        let mut todo = vec![kernel];
        let mut seen: HashSet<&str> = HashSet::from([kernel.name.as_str()]);
        let mut first_width: HashMap<VarKey, Span> = HashMap::new();
        while let Some(func) = todo.pop() {
            let Some(body) = &func.body else { continue };
            let mut locals = Vec::new();
            all_locals(body, &mut locals);
            let names = Names {
                func: &func.name,
                locals: locals
                    .into_iter()
                    .filter(|v| !matches!(v.space, StateSpace::Param | StateSpace::Reg))
                    .map(|v| (v.name.as_str(), v))
                    .collect(),
                module_vars: &module_vars,
            };
            let mut instrs = Vec::new();
            visit(body, &mut |i| instrs.push(i));
            for ins in &instrs {
                let mut syms = Vec::new();
                ins.operands.iter().for_each(|o| symbols(o, &mut syms));
                for s in syms {
                    if !names.locals.contains_key(s) && module_vars.contains_key(s) {
                        a.used.insert(s.to_string());
                    }
                }
                if ins.opcode == "call" {
                    if let (_, Some(Op::Symbol(name)), _) = call_parts(ins) {
                        if let Some(callee) = find_function(module, name) {
                            if seen.insert(&callee.name) {
                                todo.push(callee);
                            }
                        }
                    }
                }
            }
            let taint = taint(&instrs, &names);
            for ins in &instrs {
                a.access_width(ins, &names, &taint, &mut first_width)?;
            }
            let local_regs = a.local_regs_of(&names, &taint);
            a.local_regs.insert(func.name.clone(), local_regs);
            a.addr_regs.insert(
                func.name.clone(),
                taint.keys().map(|s| s.to_string()).collect(),
            );
        }
        // A used variable initialised with another's address uses that one too.
        loop {
            let more: Vec<String> = module
                .variables
                .iter()
                .filter(|v| a.used.contains(&v.name))
                .flat_map(|v| &v.init_symbols)
                .filter(|s| module_vars.contains_key(s.symbol.as_str()))
                .map(|s| s.symbol.clone())
                .filter(|s| !a.used.contains(s))
                .collect();
            if more.is_empty() {
                break;
            }
            a.used.extend(more);
        }
        Ok(a)
    }

    /// Records the width of memory access `ins` to the byte arrays it may reach (directly or
    /// through a tainted register); `first_width` remembers where each width was first seen.
    fn access_width(
        &mut self,
        ins: &Instruction,
        names: &Names<'_>,
        taint: &HashMap<&str, BTreeSet<VarKey>>,
        first_width: &mut HashMap<VarKey, Span>,
    ) -> R<()> {
        if !is_memory_op(&ins.opcode) {
            return Ok(());
        }
        let q = quals(ins, true);
        if q.space == Some(StateSpace::Param) {
            return Ok(());
        }
        let Some(ty) = q.types.last().and_then(|t| int_of(*t, true)) else {
            return Ok(());
        };
        let Some(Op::Address { base, .. }) = ins
            .operands
            .iter()
            .find(|o| matches!(o, Op::Address { .. }))
        else {
            return Ok(());
        };
        let targets: Vec<(VarKey, &Variable, bool)> = match base.as_ref() {
            Op::Symbol(s) => names
                .var(s)
                .map(|(k, v)| (k, v, true))
                .into_iter()
                .collect(),
            Op::Reg(r) => taint
                .get(r.as_str())
                .into_iter()
                .flatten()
                .filter_map(|k| names.var(&k.1).map(|(k, v)| (k, v, false)))
                .collect(),
            _ => vec![],
        };
        for (key, v, direct) in targets {
            let declared = bits_of(v.ty);
            if declared != 8 {
                // A typed variable keeps its type; a pointer that may point to it
                // but accesses it at another width faults at run time, if ever.
                if direct && declared != ty.bits {
                    return Err(LowerError::at(
                        ins,
                        format!(
                            "mixed-size access to `{}` is not supported: it holds {}-bit values, `{}` accesses {} bits",
                            v.name,
                            declared,
                            mnemonic(ins),
                            ty.bits
                        ),
                    ));
                }
                continue;
            }
            match self.widths.get(&key) {
                // `.local` memory is the thread's own: no other thread can see how
                // wide an access was, so its locations take the narrowest width and
                // a wider access is split (printf's argument buffer needs this).
                Some(w) if v.space == StateSpace::Local => {
                    if ty.bits < w.bits {
                        self.widths.insert(key, IntType::new(ty.bits, false));
                    }
                }
                Some(w) if w.bits != ty.bits => {
                    let first = first_width[&key];
                    return Err(LowerError::at(
                        ins,
                        format!(
                            "mixed-size access to `{}` is not supported: accessed as {} bits at line {} and as {} bits here",
                            v.name, w.bits, first.line, ty.bits
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    self.widths
                        .insert(key.clone(), IntType::new(ty.bits, false));
                    first_width.insert(key, ins.span);
                }
            }
        }
        Ok(())
    }

    /// The registers of a function that hold addresses of `.local` variables only, all of
    /// one width, with that width.
    fn local_regs_of(
        &self,
        names: &Names<'_>,
        taint: &HashMap<&str, BTreeSet<VarKey>>,
    ) -> HashMap<String, IntType> {
        let mut local_regs = HashMap::new();
        for (reg, keys) in taint {
            let widths: BTreeSet<u8> = keys
                .iter()
                .filter_map(|k| names.var(&k.1))
                .filter(|(_, v)| v.space == StateSpace::Local)
                .map(|(k, v)| self.widths.get(&k).map_or(bits_of(v.ty), |w| w.bits))
                .collect();
            let all_local = keys.iter().all(|k| {
                names
                    .var(&k.1)
                    .is_some_and(|(_, v)| v.space == StateSpace::Local)
            });
            if let (true, [w]) = (all_local, widths.iter().collect::<Vec<_>>().as_slice()) {
                local_regs.insert(reg.to_string(), IntType::new(**w, false));
            }
        }
        local_regs
    }
}
