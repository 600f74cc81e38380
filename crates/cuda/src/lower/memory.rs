//! Memory: addresses and their spaces, loads, stores, RMWs and compare-exchange with their
//! orders and scopes, and pointers (arithmetic, members, casts, shared arrays).

use scopecheck_ir::{
    Address, BinOp, Diagnostic, InstrKind, IntType, MemorySpace, Operand, Order, RegId, RmwKind,
    Scope, Value,
};
use tree_sitter::Node;

use super::ArrayShape;
use super::{err, field, only_child, Access, Binding, Lw, Ptr, PtrTy, Val, R};
use crate::span_of;

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// The IR address of a pointer, with the checks of its memory space, and the access type.
    pub(super) fn address(&mut self, p: Ptr, n: Node<'t>) -> R<(Address, IntType)> {
        if let Some(sid) = p.strukt {
            return err(
                n,
                format!(
                    "not supported: a whole `struct {}` as a value; access its fields (`s.f`, `p->f`)",
                    self.cx.structs[sid].name
                ),
            );
        }
        let arr = &self.cx.arrays[p.arr];
        let Some(loc) = usize::try_from(p.idx).ok().and_then(|i| arr.elems.get(i)) else {
            return err(
                n,
                format!(
                    "index {} is outside `{}` ({} element{})",
                    p.idx,
                    arr.name,
                    arr.elems.len(),
                    if arr.elems.len() == 1 { "" } else { "s" }
                ),
            );
        };
        if self.host() && arr.space == MemorySpace::Global {
            return err(
                n,
                format!("host code cannot dereference device memory (`{}`): allocate it with cudaMallocManaged or cudaHostAlloc(..., cudaHostAllocMapped)", arr.name),
            );
        }
        if self.host() && arr.space == MemorySpace::Shared {
            return err(n, "host code cannot touch `__shared__` memory");
        }
        let held = self.cx.locations[loc.0 as usize].ty;
        if held.bits != p.ty.bits {
            return err(
                n,
                format!(
                    "not supported: a {}-bit access (`{}`) to `{}`, which holds a {held} (mixed-size accesses)",
                    p.ty.bits, p.ty, arr.name
                ),
            );
        }
        Ok((
            Address::Loc {
                loc: *loc,
                index: p.index,
            },
            p.ty,
        ))
    }

    /// Narrows an atomic scope wider than the block on shared memory (as the C dialect does).
    pub(super) fn space_scope(
        &mut self,
        addr: Address,
        order: Order,
        scope: Scope,
        n: Node<'t>,
    ) -> Scope {
        let shared = addr
            .named_loc()
            .is_some_and(|l| self.cx.locations[l.0 as usize].space == MemorySpace::Shared);
        if order.is_atomic() && scope > Scope::Cta && shared {
            self.cx.warn(
                n,
                format!("an atomic on __shared__ memory is only meaningful within its block: scope {scope} treated as cta"),
            );
            return Scope::Cta;
        }
        scope
    }

    pub(super) fn plain_order(&mut self, p: Ptr) -> (Order, Scope) {
        match p.access {
            Access::Plain => (Order::Weak, Scope::Sys),
            Access::Volatile => (Order::Volatile, Scope::Sys),
            Access::Atomic(s) => (Order::SeqCst, self.scope(s, None)),
        }
    }

    pub(super) fn load_ord(
        &mut self,
        (addr, ty): (Address, IntType),
        order: Order,
        scope: Scope,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let dst = self.build.dst_for(hint, ty);
        self.emit(
            InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope,
            },
            n,
        );
        Operand::Reg(dst)
    }

    /// A store; a constant is stored converted to the access type.
    pub(super) fn store_ord(
        &mut self,
        (addr, ty): (Address, IntType),
        value: Operand,
        order: Order,
        scope: Scope,
        n: Node<'t>,
    ) {
        let scope = self.space_scope(addr, order, scope, n);
        let value = match value {
            Operand::Imm(v) => Operand::Imm(ty.wrap(v)),
            v => v,
        };
        self.emit(
            InstrKind::Store {
                addr,
                value,
                ty,
                order,
                scope,
            },
            n,
        );
    }

    pub(super) fn load(&mut self, p: Ptr, hint: Option<RegId>, n: Node<'t>) -> R<Operand> {
        let at = self.address(p, n)?;
        let (o, s) = self.plain_order(p);
        Ok(self.load_ord(at, o, s, hint, n))
    }

    pub(super) fn store(&mut self, p: Ptr, v: Operand, n: Node<'t>) -> R<()> {
        let at = self.address(p, n)?;
        let (o, s) = self.plain_order(p);
        self.store_ord(at, v, o, s, n);
        Ok(())
    }

    /// An RMW of the access type: it computes in that type and wraps (atomics never overflow
    /// into undefined behaviour); it returns the old value.
    pub(super) fn rmw(
        &mut self,
        (addr, ty): (Address, IntType),
        kind: RmwKind,
        order: Order,
        scope: Scope,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let dst = self.build.dst_for(hint, ty);
        self.emit(
            InstrKind::Rmw {
                dst: Some(dst),
                addr,
                kind,
                ty,
                order,
                scope,
            },
            n,
        );
        Operand::Reg(dst)
    }

    /// A compare-and-swap into a temporary, the result `old == expected` (a `bool`, as `int`),
    /// then `expected = old`: C++ `compare_exchange_*` and OpenCL `atomic_compare_exchange_*`.
    pub(super) fn compare_exchange(
        &mut self,
        (addr, ty): (Address, IntType),
        expected: RegId,
        new: Operand,
        (order, scope): (Order, Scope),
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let old = self.build.temp(ty);
        self.emit(
            InstrKind::Rmw {
                dst: Some(old),
                addr,
                kind: RmwKind::Cas {
                    expected: Operand::Reg(expected),
                    new,
                },
                ty,
                order,
                scope,
            },
            n,
        );
        // The comparison is the CAS's, in the object's type.
        let ok = self
            .build
            .dst_for(hint.filter(|h| *h != expected), IntType::S32);
        self.emit(
            InstrKind::Binary {
                dst: ok,
                op: BinOp::Eq,
                ty,
                a: Operand::Reg(old),
                b: Operand::Reg(expected),
            },
            n,
        );
        self.mov(expected, Operand::Reg(old), n);
        Operand::Reg(ok)
    }

    /// The shared-memory array of declaration `d` for this thread's block.
    pub(super) fn shared_array(&mut self, d: usize, n: Node<'t>) -> R<usize> {
        let Some(cta) = self.cta else {
            return err(n, "host code cannot touch `__shared__` memory");
        };
        if let Some(a) = self.cx.shared_copies.get(&(d, cta)) {
            return Ok(*a);
        }
        let (name, len, span) = {
            let s = &self.cx.shared_decls[d];
            (format!("{}@b{cta}", s.name), s.len, span_of(s.node))
        };
        let ty = self.cx.shared_decls[d].ty;
        let a = self.cx.new_array(
            &name,
            ArrayShape {
                len,
                strukt: ty.strukt,
                ty: ty.int,
                space: MemorySpace::Shared,
            },
            &[],
            Some(span),
            false,
        )?;
        self.cx.arrays[a].row = self.cx.shared_decls[d].row;
        self.cx.shared_copies.insert((d, cta), a);
        Ok(a)
    }

    /// The start of this block's copy of shared declaration `d`, with its length.
    pub(super) fn shared_ptr(&mut self, d: usize, n: Node<'t>) -> R<(Ptr, usize)> {
        let arr = self.shared_array(d, n)?;
        let ty = self.cx.shared_decls[d].ty;
        let len = self.cx.shared_decls[d].len;
        Ok((Ptr::start_of(arr, ty), len))
    }

    /// What a bare name denotes when it is a memory object: a global, a shared variable, an
    /// atomic object or reference.
    pub(super) fn object(&mut self, name: &str, n: Node<'t>) -> R<Option<(Ptr, usize)>> {
        match self.build.lookup(name) {
            Some(Binding::Obj(p)) => return Ok(Some((p, 1))),
            Some(Binding::Shared(d)) => return self.shared_ptr(d, n).map(Some),
            Some(_) => return Ok(None),
            None => {}
        }
        if let Some((arr, ty)) = self.cx.globals.get(name).copied() {
            let len = self.cx.arrays[arr].elems.len() / self.stride(ty.strukt) as usize;
            return Ok(Some((Ptr::start_of(arr, ty), len)));
        }
        if let Some(d) = self.cx.shared_by_name.get(name).copied() {
            return self.shared_ptr(d, n).map(Some);
        }
        Ok(None)
    }

    pub(super) fn unknown<T>(&self, name: &str, n: Node<'t>) -> R<T> {
        if let Some((_, why)) = self.cx.opaque_globals.iter().find(|(g, _)| g == name) {
            return err(
                n,
                format!(
                    "the harness uses `{name}`, whose declaration (line {}) this front-end cannot read: {}",
                    why.line(), why.message
                ),
            );
        }
        err(n, format!("unknown name `{name}`"))
    }

    /// The pointer the variable `name` holds (an identifier, or `p.f` of a struct held by
    /// value), or the array it names.
    pub(super) fn pointer_named(&mut self, name: &str, e: Node<'t>) -> R<Ptr> {
        match self.build.lookup(name) {
                Some(Binding::Ptr(p) | Binding::HostArr(p)) => return Ok(p),
                Some(Binding::SharedPtr(d)) => return Ok(self.shared_ptr(d, e)?.0),
                Some(Binding::PtrUnset(..)) => {
                    return err(e, format!("`{name}` is used before it is allocated (cudaMalloc / cudaMallocManaged / cudaHostAlloc)"))
                }
                _ => {}
            }
        match self.object(name, e)? {
            // `t + i`, `t` passed on: C steps it a row at a time, which a pointer to elements
            // does not. The harness's copies (`cudaMemcpyToSymbol(t, ...)`) see the elements.
            Some((p, _)) if self.cx.arrays[p.arr].row.is_some() && !self.host() => err(
                e,
                format!("not supported: the two-dimensional array `{name}` used as a pointer; index it (`{name}[i][j]`), or take a row (`{name}[i]`) or an element's address (`&{name}[i][j]`)"),
            ),
            Some((p, len)) if len > 1 => Ok(p),
            Some(_) => err(
                e,
                format!("`{name}` is an object, not a pointer: write `&{name}`"),
            ),
            None if self.build.lookup(name).is_some() => {
                err(e, format!("`{name}` is a value, not a pointer to memory"))
            }
            None => self.unknown(name, e),
        }
    }

    /// The pointer an expression denotes (`p`, `&x`, `&a[i]`, `a` for an array, `p + i`, a
    /// row `t[i]` of a two-dimensional array).
    pub(super) fn pointer(&mut self, e: Node<'t>) -> R<Ptr> {
        // A row of a two-dimensional array (`t[i]`): a pointer to its first element.
        if let Some((p, _)) = self.row(e)? {
            return Ok(p);
        }
        match e.kind() {
            // A name the most vexing parse read as a type (`atomic_ref<...> r(p[i])`).
            "identifier" | "type_identifier" => self.pointer_named(self.text(e), e),
            "field_expression" if self.flat_field(e).is_some() => {
                let key = self.flat_field(e).unwrap_or_default();
                self.pointer_named(&key, e)
            }
            "pointer_expression" if self.op(e) == "&" => {
                let a = field(e, "argument")?;
                self.place(a)?.ok_or_else(|| {
                    Diagnostic::error("not supported: the address of a local variable")
                        .at(span_of(e))
                })
            }
            "parenthesized_expression" => self.pointer(only_child(e)?),
            "cast_expression" => {
                let v = field(e, "value")?;
                // `(int *)t` of a two-dimensional array: its first element, as `&t[0][0]`.
                match self.two_dimensional(v)? {
                    Some((p, _)) => Ok(p),
                    None => self.pointer(v),
                }
            }

            // `p + i - j ...` by a loop, left to right.
            "binary_expression" if matches!(self.op(e), "+" | "-") => {
                let mut steps = vec![e];
                let mut base = field(e, "left")?;
                while base.kind() == "binary_expression" && matches!(self.op(base), "+" | "-") {
                    steps.push(base);
                    base = field(base, "left")?;
                }
                let mut p = self.pointer(base)?;
                for s in steps.into_iter().rev() {
                    let minus = self.op(s) == "-";
                    p = self.offset(p, field(s, "right")?, minus, s)?;
                }
                Ok(p)
            }
            _ => err(
                e,
                format!("expected a pointer to memory, found `{}`", self.text(e)),
            ),
        }
    }

    /// `p + i` (or `p - i`, or `p[i]`): a constant `i` moves the element known at compile time;
    /// one known only at run time goes into the address's index register (in locations: a
    /// struct element spans one per field), which the explorer bounds-checks.
    pub(super) fn offset(&mut self, p: Ptr, i: Node<'t>, minus: bool, e: Node<'t>) -> R<Ptr> {
        let stride = self.stride(p.strukt);
        let v = self.val(i, None)?;
        self.offset_by(p, v, stride, minus, i, e)
    }

    /// `p + v` where each step of `v` is `stride` locations (see [`Lw::offset`]); `i` is the
    /// index's node.
    pub(super) fn offset_by(
        &mut self,
        p: Ptr,
        v: Val,
        stride: i64,
        minus: bool,
        i: Node<'t>,
        e: Node<'t>,
    ) -> R<Ptr> {
        let r = match v.op {
            Operand::Imm(k) => {
                // A constant index counts in its own type (an `unsigned` -1 is 2^32 - 1).
                let k = i64::try_from(v.ty.exact(k)).map_err(|_| {
                    Diagnostic::error(format!("index {} is out of range", v.ty.display(k)))
                        .at(span_of(i))
                })?;
                let k = if minus { k.checked_neg() } else { Some(k) };
                let idx = k
                    .and_then(|k| k.checked_mul(stride))
                    .and_then(|k| k.checked_add(p.idx))
                    .ok_or_else(|| Diagnostic::error("index out of range").at(span_of(i)))?;
                return Ok(Ptr { idx, ..p });
            }
            Operand::Reg(r) => r,
        };
        // The index in locations, computed in `long long` (it cannot overflow for any index
        // that stays in bounds).
        let s64 = |op| Val {
            op,
            ty: IntType::S64,
        };
        let mut off = Val {
            op: Operand::Reg(r),
            ty: v.ty,
        };
        if minus {
            off = self.binary(BinOp::Sub, s64(Operand::Imm(0)), off, None, e);
        }
        if stride != 1 {
            off = self.binary(BinOp::Mul, off, s64(Operand::Imm(stride)), None, e);
        }
        if let Some(prev) = p.index {
            let prev = Val {
                op: Operand::Reg(prev),
                ty: self.build.reg_ty(prev),
            };
            off = self.binary(BinOp::Add, prev, off, None, e);
        }
        let Operand::Reg(index) = off.op else {
            return err(e, "internal: an index register folded");
        };
        Ok(Ptr {
            index: Some(index),
            ..p
        })
    }

    /// A pointer that names its element at compile time (one the harness passes to a kernel,
    /// or keeps in a host variable across threads).
    pub(super) fn fixed_pointer(&mut self, e: Node<'t>) -> R<Ptr> {
        let p = self.pointer(e)?;
        if p.index.is_some() {
            return err(
                e,
                "not supported: a pointer computed at run time here (the harness's pointers must name their element at compile time)",
            );
        }
        Ok(p)
    }

    /// A pointer kept in a variable: an index register is copied, so that later assignments
    /// to the variable it came from do not move the pointer.
    pub(super) fn keep_pointer(&mut self, p: Ptr, n: Node<'t>) -> R<Ptr> {
        let Some(r) = p.index else {
            return Ok(p);
        };
        if self.host() {
            return err(
                n,
                "not supported: a pointer computed at run time in scopecheck_main (index the memory where it is accessed)",
            );
        }
        let t = self.build.temp(self.build.reg_ty(r));
        self.emit(
            InstrKind::Mov {
                dst: t,
                src: Operand::Reg(r),
            },
            n,
        );
        Ok(Ptr {
            index: Some(t),
            ..p
        })
    }

    /// An index or offset that must be known when lowering (thread indices fold).
    pub(super) fn const_operand(&mut self, e: Node<'t>) -> R<Value> {
        match self.value(e, None)? {
            Operand::Imm(v) => Ok(v),
            Operand::Reg(_) => err(
                e,
                "not supported: a value computed at run time here (it must fold to a constant: literals, threadIdx, blockIdx, blockDim, gridDim, constant arithmetic)",
            ),
        }
    }

    /// The memory place an lvalue denotes, `None` when it is not memory.
    pub(super) fn place(&mut self, e: Node<'t>) -> R<Option<Ptr>> {
        match e.kind() {
            // A name read as a type by the most vexing parse (`atomic_ref<int, S> h(x)`).
            "identifier" | "type_identifier" => Ok(self.object(self.text(e), e)?.map(|(p, _)| p)),
            "pointer_expression" if self.op(e) == "*" => {
                Ok(Some(self.pointer(field(e, "argument")?)?))
            }
            "subscript_expression" => {
                let arg = field(e, "argument")?;
                let i = self.the_index(e)?;
                if let Some((row, len)) = self.row(arg)? {
                    return self.element_of_row(row, len, i, e).map(Some);
                }
                let p = self.pointer(arg)?;
                self.offset(p, i, false, e).map(Some)
            }
            "parenthesized_expression" => self.place(only_child(e)?),
            "field_expression" => {
                let arg = field(e, "argument")?;
                let fnode = field(e, "field")?;
                let base = if self.op(e) == "->" {
                    Some(self.pointer(arg)?)
                } else {
                    self.place(arg)?
                };
                match base {
                    Some(b) => self.member_of(b, fnode, e).map(Some),
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// A pointer seen through a declared pointer type: its access and value type, and the
    /// same struct type.
    pub(super) fn retype(&self, p: Ptr, t: PtrTy, n: Node<'t>) -> R<Ptr> {
        let (access, strukt, ty) = t;
        if p.strukt != strukt {
            let name = |s: Option<usize>| {
                s.map_or("a scalar".to_string(), |sid| {
                    format!("`struct {}`", self.cx.structs[sid].name)
                })
            };
            return err(
                n,
                format!(
                    "not supported: a pointer to {} used as a pointer to {}",
                    name(p.strukt),
                    name(strukt)
                ),
            );
        }
        if strukt.is_none() && p.ty.bits != ty.bits {
            return err(
                n,
                format!(
                    "not supported: a pointer to `{}` used as a pointer to `{ty}` (mixed-size accesses)",
                    p.ty
                ),
            );
        }
        Ok(Ptr { access, ty, ..p })
    }

    /// Locations per element: the number of fields of a struct, 1 for a scalar.
    pub(super) fn stride(&self, strukt: Option<usize>) -> i64 {
        strukt.map_or(1, |sid| self.cx.structs[sid].fields.len() as i64)
    }

    /// The field `f` of the struct `base` points at (`s.f`, `p->f`).
    pub(super) fn member_of(&self, base: Ptr, f: Node<'t>, e: Node<'t>) -> R<Ptr> {
        let fname = self.text(f);
        let Some(sid) = base.strukt else {
            return err(
                e,
                format!("not supported: the member `{fname}` of something that is not a struct"),
            );
        };
        let def = &self.cx.structs[sid];
        let Some(k) = def.fields.iter().position(|(n, _)| n == fname) else {
            return err(f, format!("`struct {}` has no field `{fname}`", def.name));
        };
        let fty = def.fields[k].1;
        // A field of a volatile struct is volatile.
        let access = match (fty.access, base.access) {
            (Access::Plain, Access::Volatile) => Access::Volatile,
            (a, _) => a,
        };
        Ok(Ptr {
            arr: base.arr,
            idx: base.idx + k as i64,
            index: base.index,
            access,
            strukt: None,
            ty: fty.int,
        })
    }

    pub(super) fn op(&self, e: Node<'t>) -> &'s str {
        e.child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("")
    }
}
