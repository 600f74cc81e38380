//! Memory: the locations of the variables the kernel uses.

use std::collections::HashMap;

use scopecheck_ir::{IntType, LocId, Location, MemorySpace, Program, Value};

use crate::ast::{Module, ScalarType, StateSpace, Variable};

use super::analysis::{Analysis, VarKey};
use super::qualifiers::{bits_of, int_of};
use super::{LowerError, R};

/// A variable's locations: `len` consecutive ones of type `ty` from `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mem {
    pub(super) first: LocId,
    pub(super) len: u32,
    pub(super) ty: IntType,
    /// `.local`: the thread's own.
    pub(super) private: bool,
}

/// The most elements one variable may have (each is a location).
pub const MAX_VARIABLE_ELEMENTS: u64 = 65_536;

/// The most locations the variables of the kernels of one program may make together.
pub const MAX_LOCATIONS: usize = 262_144;

#[derive(Default)]
pub(super) struct Memory {
    pub(super) globals: HashMap<VarKey, Mem>,
    pub(super) shared: HashMap<(VarKey, u32), Mem>,
}

/// A variable's element type, element count and initial values: its declared type, or for a
/// `.b8` array the width the kernel accesses it with.
fn layout(a: &Analysis, key: &VarKey, v: &Variable) -> R<(IntType, u32, Vec<Value>)> {
    let err = |m: String| LowerError::new(v.span, m);
    let declared = match v.ty {
        ScalarType::Pred => return Err(err(format!("`.pred` variable `{}`", v.name))),
        t => int_of(t, true).expect("an integer or float type"),
    };
    let mut count: u64 = 1;
    for d in &v.dims {
        match d {
            Some(n) => count = count.saturating_mul(*n),
            None if !v.init.is_empty() && v.dims.len() == 1 => count = v.init.len() as u64,
            // Dynamic shared memory: as many elements as the launch's bytes hold.
            None if v.space == StateSpace::Shared && v.dims.len() == 1 && a.dynamic_shared > 0 => {
                count = a.dynamic_shared / declared.bytes();
            }
            None => {
                return Err(err(format!(
                    "`{}` has no size{}: not supported yet",
                    v.name,
                    if v.space == StateSpace::Shared {
                        " (dynamic shared memory, and the launch gives none: pass its size as the third <<<...>>> argument)"
                    } else {
                        ""
                    }
                )))
            }
        }
    }
    let elem = match a.widths.get(key) {
        Some(w) if w.bits != declared.bits => *w,
        _ => declared,
    };
    let bytes = count.saturating_mul(declared.bytes());
    if bytes % elem.bytes() != 0 {
        return Err(err(format!(
            "`{}` ({bytes} bytes) is not a whole number of the {}-byte values it is accessed as",
            v.name,
            elem.bytes()
        )));
    }
    let len = bytes / elem.bytes();
    if len == 0 {
        return Err(err(format!("`{}` has {len} elements", v.name)));
    }
    // Each element is a location: checked before any is made.
    if len > MAX_VARIABLE_ELEMENTS {
        return Err(err(format!(
            "`{}` has {len} elements: more than the {MAX_VARIABLE_ELEMENTS} a variable may have (each is a location)",
            v.name
        )));
    }
    let init = if elem == declared {
        v.init.iter().map(|&x| elem.wrap(x)).collect()
    } else {
        // Regroup the declared elements' little-endian bytes into the accessed width.
        let raw: Vec<u8> = v
            .init
            .iter()
            .flat_map(|x| x.to_le_bytes().into_iter().take(declared.bytes() as usize))
            .collect();
        raw.chunks(elem.bytes() as usize)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                elem.wrap(i64::from_le_bytes(b))
            })
            .collect()
    };
    Ok((elem, len as u32, init))
}

fn space(v: &Variable) -> MemorySpace {
    match v.space {
        StateSpace::Shared | StateSpace::SharedCluster => MemorySpace::Shared,
        _ => MemorySpace::Global,
    }
}

/// Appends the locations of variable `v` under a fresh name built from `base`.
pub(super) fn new_variable(
    program: &mut Program,
    a: &Analysis,
    key: &VarKey,
    v: &Variable,
    base: &str,
) -> R<Mem> {
    let (ty, len, init) = layout(a, key, v)?;
    if program.locations.len().saturating_add(len as usize) > MAX_LOCATIONS {
        return Err(LowerError::new(
            v.span,
            format!(
                "too many locations: with `{}`'s {len} elements the program would have more than {MAX_LOCATIONS}",
                v.name
            ),
        ));
    }
    let taken = |p: &Program, n: &str| p.loc(n).is_some() || p.arrays.iter().any(|a| a.name == n);
    let mut name = base.to_string();
    let mut k = 2;
    while taken(program, &name) || (len > 1 && taken(program, &format!("{name}[0]"))) {
        name = format!("{base}#{k}");
        k += 1;
    }
    let first = LocId(program.locations.len() as u32);
    for i in 0..len {
        program.locations.push(Location {
            name: if len == 1 {
                name.clone()
            } else {
                format!("{name}[{i}]")
            },
            space: space(v),
            init: init.get(i as usize).copied().unwrap_or(0),
            ty,
            span: Some(v.span),
        });
    }
    if len > 1 {
        program
            .arrays
            .push(scopecheck_ir::Array { name, first, len });
    }
    Ok(Mem {
        first,
        len,
        ty,
        private: v.space == StateSpace::Local,
    })
}

/// A `.global` / `.const` variable: the program's location or array of that name when there
/// is one (a harness may have made it, or an earlier launch), else new locations.
pub(super) fn global_variable(
    program: &mut Program,
    a: &Analysis,
    key: &VarKey,
    v: &Variable,
) -> R<Mem> {
    let existing = program
        .arrays
        .iter()
        .find(|x| x.name == v.name)
        .map(|x| (x.first, x.len))
        .or_else(|| {
            program
                .loc(&v.name)
                .filter(|l| program.array_of(*l).is_none())
                .map(|l| (l, 1))
        });
    let Some((first, len)) = existing else {
        return new_variable(program, a, key, v, &v.name);
    };
    let (ty, want, _) = layout(a, key, v)?;
    let held = program.location(first).ty;
    if want != len || held.bits != ty.bits {
        return Err(LowerError::new(
            v.span,
            format!(
                "`{}` exists in the program already as {len} value(s) of {} bits; the module declares {want} of {} bits",
                v.name, held.bits, ty.bits
            ),
        ));
    }
    Ok(Mem {
        first,
        len,
        ty: held,
        private: false,
    })
}

/// Sets the initial values of `v` (just made as `mem`) that are addresses (`= generic(x)`,
/// `= x+4`): generic and state-space addresses are the same values here.
pub(super) fn address_inits(
    program: &mut Program,
    module: &Module,
    memory: &Memory,
    v: &Variable,
    mem: Mem,
) -> R<()> {
    for s in &v.init_symbols {
        let err = |m: String| LowerError::new(v.span, m);
        let Some(target) = memory.globals.get(&(None, s.symbol.clone())) else {
            return Err(err(
                if module.functions.iter().any(|f| f.name == s.symbol) {
                    format!(
                    "`{}` is initialised with the address of function `{}`: function pointers are not supported yet",
                    v.name, s.symbol
                )
                } else {
                    format!(
                        "`{}` is initialised with the address of `{}`, which is no global variable",
                        v.name, s.symbol
                    )
                },
            ));
        };
        if mem.ty.bits != bits_of(v.ty) || s.index >= mem.len as usize {
            return Err(err(format!(
                "`{}`: an address among its initial values, but it is accessed as {}-bit values",
                v.name, mem.ty.bits
            )));
        }
        let address = program.address_of(target.first).wrapping_add(s.offset);
        program.locations[mem.first.0 as usize + s.index].init = mem.ty.wrap(address);
    }
    Ok(())
}
