//! Calls: the atomic and fence intrinsics and their order arguments, `assert`, inlined device
//! functions, cooperative groups (`this_grid().sync()`, tiles) and `cuda::atomic_ref` members.

use scopecheck_ir::{
    Address, BarrierKind, BinOp, BranchCond, Diagnostic, FenceOrder, FenceSpaces, InstrKind,
    IntType, MemorySpace, Operand, Order, RegId, RmwKind, RmwOp, Scope, Value,
};
use tree_sitter::Node;

use super::ArrayShape;
use super::{
    cg_base, err, field, opencl, tile_size, Access, Binding, FnKind, Group, Lw, Ty, Val, R,
};
use crate::{span_of, MAX_ARRAY_ELEMENTS, MAX_INLINE_DEPTH};
use scopecheck_litmus::vocab::{
    cuda_atomic, order_name, thread_scope, CUDA_RMW, HINT_LOADS, HINT_STORES, RMW_MEMBERS,
};

impl<'c, 's, 't> Lw<'c, 's, 't> {
    pub(super) fn args(&self, call: Node<'t>) -> R<Vec<Node<'t>>> {
        let a = field(call, "arguments")?;
        let mut c = a.walk();
        Ok(a.named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect())
    }

    pub(super) fn arity(
        &self,
        name: &str,
        args: &[Node<'t>],
        (lo, hi): (usize, usize),
        what: &str,
        n: Node<'t>,
    ) -> R<()> {
        if args.len() < lo || args.len() > hi {
            return err(n, format!("`{name}` takes {what}"));
        }
        Ok(())
    }

    pub(super) fn word(&self, n: Node<'t>) -> String {
        self.text(n).split_whitespace().collect()
    }

    pub(super) fn order_arg(&self, n: Node<'t>) -> R<Order> {
        order_name(&self.word(n)).ok_or_else(|| {
            Diagnostic::error(format!(
                "expected a memory order such as cuda::memory_order_acquire, found `{}`",
                self.text(n)
            ))
            .at(span_of(n))
        })
    }

    pub(super) fn fence_order(&self, n: Node<'t>) -> R<FenceOrder> {
        Ok(match self.order_arg(n)? {
            Order::SeqCst => FenceOrder::Sc,
            Order::AcqRel => FenceOrder::AcqRel,
            Order::Acquire => FenceOrder::Acquire,
            Order::Release => FenceOrder::Release,
            _ => {
                return err(
                    n,
                    "a relaxed fence orders nothing; use acquire, release, acq_rel or seq_cst",
                )
            }
        })
    }

    pub(super) fn check_order(&self, o: Order, load: bool, store: bool, n: Node<'t>) -> R<()> {
        let bad = (load && !store && matches!(o, Order::Release | Order::AcqRel))
            || (store && !load && matches!(o, Order::Acquire | Order::AcqRel));
        if bad {
            return err(
                n,
                format!(
                    "this order is not allowed on a {}",
                    if load { "load" } else { "store" }
                ),
            );
        }
        Ok(())
    }

    /// A call, with the type of its value: an atomic's is the object's, an inlined function's
    /// its return type, OpenCL's work-item functions' `size_t` (`uint` for `get_work_dim`).
    pub(super) fn call(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let f = field(e, "function")?;
        if f.kind() == "identifier" {
            let name = self.word(f);
            let args = self.args(e)?;
            if let Some(v) = self.float_call(&name, &args, hint, e)? {
                return Ok(v);
            }
        }
        let v = self.call_op(e, hint)?;
        let name = self.word(field(e, "function")?);
        if let Operand::Imm(x) = v {
            if opencl::WORK_ITEM_FNS.contains(&name.as_str()) {
                let ty = if name == "get_work_dim" {
                    IntType::U32
                } else {
                    IntType::U64
                };
                return Ok(Val::imm(x, ty));
            }
        }
        Ok(self.typed(v))
    }

    /// `atomicAdd`, `atomicCAS`, ... and their `_block` / `_system` forms (`base` and the
    /// scope its suffix gives): a relaxed RMW.
    fn cuda_atomic_call(
        &mut self,
        name: &str,
        (base, scope): (&str, Scope),
        args: &[Node<'t>],
        f: Node<'t>,
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Operand> {
        self.device_only(name, f)?;
        let scope = self.scope(scope, None);
        if base == "atomicCAS" {
            self.arity(name, args, (3, 3), "pointer, compare, value", e)?;
            let p = self.pointer(args[0])?;
            let addr = self.address(p, args[0])?;
            let expected = self.value_as(args[1], addr.1, None)?;
            let new = self.value_as(args[2], addr.1, None)?;
            return Ok(self.rmw(
                addr,
                RmwKind::Cas { expected, new },
                Order::Relaxed,
                scope,
                hint,
                e,
            ));
        }
        let op = CUDA_RMW
            .iter()
            .find(|(n, _)| *n == base)
            .map_or(RmwOp::Add, |(_, o)| *o);
        self.arity(name, args, (2, 2), "pointer, value", e)?;
        let p = self.pointer(args[0])?;
        let addr = self.address(p, args[0])?;
        if addr.1.float && !matches!(op, RmwOp::Add | RmwOp::Exch) {
            return err(
                e,
                format!("`{name}` takes an integer pointer (CUDA has no `{base}` on floats)"),
            );
        }
        let v = self.value_as(args[1], addr.1, None)?;
        Ok(self.rmw(addr, RmwKind::Op(op, v), Order::Relaxed, scope, hint, e))
    }

    /// `cuda::atomic_thread_fence(order[, scope])` and the `std` forms (no scope: system).
    fn thread_fence_call(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<Operand> {
        let max = if name == "cuda::atomic_thread_fence" {
            2
        } else {
            1
        };
        self.arity(name, args, (1, max), "order[, scope]", e)?;
        let order = self.fence_order(args[0])?;
        let (scope, explicit) = match args.get(1) {
            Some(s) => (
                thread_scope(&self.word(*s)).ok_or_else(|| {
                    Diagnostic::error("expected cuda::thread_scope_block / device / system")
                        .at(span_of(*s))
                })?,
                Some(*s),
            ),
            None => (Scope::Sys, None),
        };
        let scope = self.scope(scope, explicit);
        self.emit(
            InstrKind::Fence {
                order,
                scope,
                spaces: FenceSpaces::ALL,
            },
            e,
        );
        Ok(Operand::Imm(0))
    }

    pub(super) fn call_op(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        let f = field(e, "function")?;
        let mut c = e.walk();
        if e.children(&mut c).any(|k| k.kind() == "kernel_call_syntax") {
            return self.launch(e);
        }
        if f.kind() == "field_expression" {
            return self.member(e, f, hint);
        }
        let name = self.word(f);
        let args = self.args(e)?;
        if cg_base(&name) == "sync" && !self.cx.funcs.contains_key(&name) && args.len() == 1 {
            if let Some(g) = self.group_of(args[0]) {
                return self.group_method(g, "sync", e);
            }
        }
        if let Some((base, scope)) = cuda_atomic(&name) {
            return self.cuda_atomic_call(&name, (base, scope), &args, f, hint, e);
        }
        if let Some(v) = self.cl_device_call(&name, &args, hint, e)? {
            return Ok(v);
        }
        if let Some(v) = self.warp_call(&name, &args, hint, e)? {
            return Ok(v);
        }
        if self.host() {
            if let Some(v) = self.cl_host_call(&name, &args, hint, e)? {
                return Ok(v);
            }
        }
        match name.as_str() {
            "__threadfence_block" | "__threadfence" | "__threadfence_system" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (0, 0), "no arguments", e)?;
                let scope = match name.as_str() {
                    "__threadfence_block" => Scope::Cta,
                    "__threadfence" => Scope::Gpu,
                    _ => Scope::Sys,
                };
                self.emit(
                    InstrKind::Fence {
                        order: FenceOrder::Sc,
                        scope,
                        spaces: FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            // A hint to the scheduler: no memory effect, and a spin that sleeps is still a spin.
            "__nanosleep" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (1, 1), "nanoseconds", e)?;
                self.value(args[0], None)?;
                Ok(Operand::Imm(0))
            }
            "__syncthreads" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (0, 0), "no arguments", e)?;
                self.emit(
                    InstrKind::Barrier {
                        id: Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None, spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            "cuda::atomic_thread_fence"
            | "cuda::std::atomic_thread_fence"
            | "std::atomic_thread_fence" => self.thread_fence_call(&name, &args, e),
            n if HINT_LOADS.contains(&n) => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (1, 1), "a pointer", e)?;
                let p = self.pointer(args[0])?;
                let addr = self.address(p, args[0])?;
                Ok(self.load_ord(addr, Order::Weak, Scope::Sys, hint, e))
            }
            n if HINT_STORES.contains(&n) => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (2, 2), "pointer, value", e)?;
                let p = self.pointer(args[0])?;
                let addr = self.address(p, args[0])?;
                let v = self.value_as(args[1], addr.1, None)?;
                self.store_ord(addr, v, Order::Weak, Scope::Sys, e);
                Ok(Operand::Imm(0))
            }
            "assert" => {
                self.arity(&name, &args, (1, 1), "one condition", e)?;
                self.assert(args[0], e)?;
                Ok(Operand::Imm(0))
            }
            "printf" if self.host() => {
                self.check_names(&args)?;
                Ok(Operand::Imm(0))
            }
            "printf" => {
                self.cx.warn(e, "printf is ignored");
                Ok(Operand::Imm(0))
            }
            "exit" | "abort" if self.host() => err(
                f,
                format!("not supported: `{name}` here; the harness fails with `if (bad) {name}({});` (or `if (bad) return 1;`)", if name == "exit" { "1" } else { "" }),
            ),
            _ if self.host() && self.harness_call(&name, &args, e)? => Ok(Operand::Imm(0)),
            _ => {
                if let Some(func) = self.cx.funcs.get(&name) {
                    let (kind, node) = (func.kind, func.node);
                    if kind == FnKind::Global {
                        return err(f, format!("`{name}` is a kernel: launch it with `{name}<<<blocks, threads>>>(...)`"));
                    }
                    if self.host() && kind == FnKind::Device {
                        return err(
                            f,
                            format!(
                                "`{name}` is a `__device__` function; host code cannot call it"
                            ),
                        );
                    }
                    return self.inline(node, &args, hint, e);
                }
                err(f, format!("not supported: call to `{name}` (not a CUDA synchronization function, a harness call or a function of this file)"))
            }
        }
    }

    /// `assert(c)` accumulates `c != 0` into a register that starts at 1.
    pub(super) fn assert(&mut self, c: Node<'t>, e: Node<'t>) -> R<()> {
        let r = self.requirement_register(e);
        let v = self.val(c, None)?;
        let ok = self.binary(BinOp::Ne, v, Val::imm(0, IntType::S32), None, c);
        self.and_into_requirement(r, ok.op, e);
        Ok(())
    }

    /// A new requirement of the test at `at`: a register of the thread that starts at 1, which
    /// the condition requires non-zero.
    pub(super) fn requirement_register(&mut self, at: Node<'t>) -> RegId {
        let r = self
            .build
            .new_reg(&format!("assert{}", self.asserts.len()), IntType::S32);
        self.init_regs.push((r, 1));
        self.asserts.push((r, span_of(at)));
        r
    }

    /// `r &= ok`: the requirement `r` holds only if `ok` is non-zero here.
    pub(super) fn and_into_requirement(&mut self, r: RegId, ok: Operand, at: Node<'t>) {
        self.emit(
            InstrKind::Binary {
                dst: r,
                op: BinOp::And,
                ty: IntType::S32,
                a: Operand::Reg(r),
                b: ok,
            },
            at,
        );
    }

    /// The parameter declarations of function definition `func` (none for `(void)`).
    pub(super) fn params_of(&self, func: Node<'t>) -> R<Vec<Node<'t>>> {
        let decl = field(func, "declarator")?;
        let params = field(decl, "parameters")?;
        let mut c = params.walk();
        Ok(params
            .named_children(&mut c)
            .filter(|p| p.kind() == "parameter_declaration")
            .filter(|p| self.text(*p).trim() != "void")
            .collect())
    }

    /// Inlines a call to a function of this file.
    pub(super) fn inline(
        &mut self,
        func: Node<'t>,
        args: &[Node<'t>],
        hint: Option<RegId>,
        call: Node<'t>,
    ) -> R<Operand> {
        if self.frames.len() >= MAX_INLINE_DEPTH {
            return err(
                call,
                format!("calls nest deeper than {MAX_INLINE_DEPTH} (recursion is not supported)"),
            );
        }
        let params = self.params_of(func)?;
        if params.len() != args.len() {
            return err(
                call,
                format!(
                    "{} argument(s) given, the function takes {}",
                    args.len(),
                    params.len()
                ),
            );
        }
        let mut frame = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let (ty, name) = self.cx.param(*p)?;
            let pname = name.map(|n| self.text(n).to_string()).unwrap_or_default();
            if let (Some(sid), false) = (ty.strukt, ty.pointer) {
                self.bind_struct_param(&pname, sid, *a, false, &mut frame)?;
                continue;
            }
            if ty.pointer {
                self.cx.not_in_memory(ty.strukt, *p)?;
            }
            // A parameter is initialised as a variable of its type is: converted.
            let b = if ty.pointer {
                let ptr = self.pointer(*a)?;
                let ptr = self.retype(ptr, ty.ptr_ty(), *a)?;
                Binding::Ptr(self.keep_pointer(ptr, *a)?)
            } else {
                match self.value_as(*a, ty.int, None)? {
                    Operand::Imm(v) => Binding::Const(ty.int.wrap(v), ty.int),
                    v => {
                        let r = self.build.new_reg(&pname, ty.int);
                        self.mov(r, v, *a);
                        Binding::Reg(r, self.seg, ty.int)
                    }
                }
            };
            frame.push((pname, b));
        }
        let returns = self.text(field(func, "type")?).trim() != "void";
        let ret = if returns {
            // The return type (`int` for one this front-end has no words for).
            let rty = self.cx.ty(func, None).map_or(IntType::S32, |t| t.int);
            Some(self.build.dst_for(hint, rty))
        } else {
            None
        };
        let end = self.build.new_label();
        // The callee sees its parameters and the globals, not the caller's locals.
        let saved = std::mem::replace(&mut self.build.scopes, vec![frame]);
        let saved_loops = std::mem::take(&mut self.loops);
        let body = field(func, "body")?;
        let outer = self.cx.enter_body(call, body, "this call")?;
        self.frames.push((end, ret));
        let r = self.stmt(body);
        self.frames.pop();
        self.cx.leave_body(outer);
        self.loops = saved_loops;
        self.build.scopes = saved;
        r?;
        self.build.set_label(end);
        Ok(ret.map_or(Operand::Imm(0), Operand::Reg))
    }

    /// libcu++ / std members: `x->load(order)`, `f.store(v, order)`, `r.fetch_add(1)`, ...
    /// The length of `extern __shared__ T a[];`: the launch's dynamic shared bytes in `T`s.
    pub(super) fn dynamic_shared_len(&self, ty: &Ty, decl: Node<'t>) -> R<usize> {
        let bytes = self.cx.launch_smem;
        let elem = i64::from(ty.int.bits / 8).max(1);
        if bytes <= 0 {
            return err(decl, "a dynamic shared array (`extern __shared__`), but the launch gives no dynamic shared memory: pass its size as the third <<<...>>> argument");
        }
        let len = (bytes / elem) as usize;
        if len == 0 || len > MAX_ARRAY_ELEMENTS {
            return err(decl, format!("a dynamic shared array of {len} elements"));
        }
        Ok(len)
    }

    /// The cooperative group `e` names: `cg::this_thread_block()`, `cg::this_grid()`, or a
    /// variable bound to one.
    pub(super) fn group_of(&self, e: Node<'t>) -> Option<Group> {
        let mut e = e;
        while e.kind() == "parenthesized_expression" {
            e = e.named_child(0)?;
        }
        match e.kind() {
            "call_expression" => {
                let f = e.child_by_field_name("function")?;
                let name = self.word(f);
                if self.cx.funcs.contains_key(&name) {
                    return None;
                }
                match cg_base(&name) {
                    "this_thread_block" => Some(Group::Block),
                    "this_grid" => Some(Group::Grid),
                    t if t.starts_with("tiled_partition") => {
                        // `tiled_partition<N>(g)` of the block (or of a wider tile).
                        let n = tile_size(t)?;
                        let args = e.child_by_field_name("arguments")?;
                        let parent = args.named_child(0)?;
                        match self.group_of(parent)? {
                            Group::Block => Some(Group::Tile(n)),
                            Group::Tile(m) if n <= m => Some(Group::Tile(n)),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            "identifier" => match self.build.lookup(self.text(e)) {
                Some(Binding::Group(g)) => Some(g),
                _ => None,
            },
            _ => None,
        }
    }

    /// `cg::thread_block b = cg::this_thread_block();` (or `cg::grid_group`, or `auto`):
    /// binds the group; whether `decl` was one.
    pub(super) fn group_decl(&mut self, d: Node<'t>, decl: Node<'t>) -> R<bool> {
        let ty = d
            .child_by_field_name("type")
            .map(|t| self.word(t))
            .unwrap_or_default();
        let base = cg_base(&ty);
        if !matches!(base, "thread_block" | "grid_group" | "auto")
            && !base.starts_with("thread_block_tile")
        {
            return Ok(false);
        }
        let value = (decl.kind() == "init_declarator")
            .then(|| decl.child_by_field_name("value"))
            .flatten();
        let group = value.and_then(|v| self.group_of(v));
        let name = decl
            .child_by_field_name("declarator")
            .filter(|n| n.kind() == "identifier");
        match (group, name) {
            (Some(g), Some(n)) => {
                self.device_only(&ty, d)?;
                let want = match g {
                    Group::Block => "thread_block".to_string(),
                    Group::Grid => "grid_group".to_string(),
                    Group::Tile(n) => format!("thread_block_tile<{n}>"),
                };
                if base != "auto" && base.replace(' ', "") != want {
                    return err(d, format!("`{ty}` holds a `{want}`"));
                }
                let name = self.text(n).to_string();
                self.build.bind(&name, Binding::Group(g));
                Ok(true)
            }
            _ if base == "auto" => Ok(false),
            _ => err(
                decl,
                "expected `= cg::this_thread_block()`, `= cg::this_grid()` or `= cg::tiled_partition<N>(block)` with N a power of two up to 32 (other cooperative groups are not supported yet)",
            ),
        }
    }

    /// `cg::thread_block_tile<N> t = cg::tiled_partition<N>(b);`, which the grammar may read as
    /// the expression `cg::thread_block_tile < N > (t = ...)` (it cannot tell a template from
    /// a comparison without knowing the names): binds the tile; whether `e` was one.
    pub(super) fn misparsed_tile_decl(&mut self, e: Node<'t>) -> R<bool> {
        let shape = || -> Option<(Node<'t>, Node<'t>, Node<'t>)> {
            if e.kind() != "binary_expression" || self.op(e) != ">" {
                return None;
            }
            let lt = e.child_by_field_name("left")?;
            if lt.kind() != "binary_expression" || self.op(lt) != "<" {
                return None;
            }
            let ty = lt.child_by_field_name("left")?;
            let n = lt.child_by_field_name("right")?;
            let assign = e.child_by_field_name("right")?;
            if cg_base(&self.word(ty)) != "thread_block_tile"
                || assign.kind() != "assignment_expression"
            {
                return None;
            }
            Some((n, field(assign, "left").ok()?, field(assign, "right").ok()?))
        };
        let Some((n, name, value)) = shape() else {
            return Ok(false);
        };
        self.device_only("thread_block_tile", e)?;
        let want = tile_size(&format!("<{}>", self.text(n)));
        match (self.group_of(value), want) {
            (Some(Group::Tile(k)), Some(w)) if k == w && name.kind() == "identifier" => {
                let var = self.text(name).to_string();
                self.build.bind(&var, Binding::Group(Group::Tile(k)));
                Ok(true)
            }
            _ => err(
                e,
                "expected `cg::thread_block_tile<N> t = cg::tiled_partition<N>(block);` with the same N, a power of two up to 32",
            ),
        }
    }

    /// The host's `void *args[] = {&a, &b};` for a cooperative launch; whether `decl` was one.
    pub(super) fn arg_list_decl(&mut self, d: Node<'t>, decl: Node<'t>) -> R<bool> {
        let ty = d
            .child_by_field_name("type")
            .map(|t| self.word(t))
            .unwrap_or_default();
        if !self.host() || ty != "void" || decl.kind() != "init_declarator" {
            return Ok(false);
        }
        let Some(list) = decl
            .child_by_field_name("value")
            .filter(|v| v.kind() == "initializer_list")
        else {
            return Ok(false);
        };
        let target = field(decl, "declarator")?;
        if !self.text(target).contains('[') {
            return Ok(false);
        }
        let mut n = target;
        while n.kind() != "identifier" {
            n = match n.child_by_field_name("declarator") {
                Some(x) => x,
                None => return err(target, "expected `void *name[] = {&a, &b};`"),
            };
        }
        let mut c = list.walk();
        let elems: Vec<Node<'t>> = list
            .named_children(&mut c)
            .filter(|x| x.kind() != "comment")
            .collect();
        self.cx.arg_lists.push(elems);
        let name = self.text(n).to_string();
        self.build
            .bind(&name, Binding::ArgList(self.cx.arg_lists.len() - 1));
        Ok(true)
    }

    /// A cooperative group's member function: `sync()`, `thread_rank()`, `size()`.
    pub(super) fn group_method(&mut self, g: Group, method: &str, e: Node<'t>) -> R<Operand> {
        let lin = |v: [Value; 3], d: [Value; 3]| v[0] + v[1] * d[0] + v[2] * d[0] * d[1];
        let block_size = self.dims.block_dim.iter().product::<Value>();
        let thread = lin(self.dims.thread, self.dims.block_dim);
        match (method, g) {
            ("sync", Group::Block) => {
                self.device_only("thread_block::sync", e)?;
                self.emit(
                    InstrKind::Barrier {
                        id: Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None, spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            ("sync", Group::Grid) => {
                self.device_only("grid_group::sync", e)?;
                self.grid_sync(e)?;
                Ok(Operand::Imm(0))
            }
            ("thread_rank", Group::Block) => Ok(Operand::Imm(thread)),
            ("thread_rank", Group::Grid) => Ok(Operand::Imm(
                lin(self.dims.block, self.dims.grid_dim) * block_size + thread,
            )),
            ("size" | "num_threads", Group::Block) => Ok(Operand::Imm(block_size)),
            ("size" | "num_threads", Group::Grid) => Ok(Operand::Imm(self.cx.launch_threads)),
            (_, Group::Tile(n)) => self.tile_method(n, thread, block_size, method, e),
            _ => err(
                e,
                format!("not supported: `{method}` of a cooperative group (sync, thread_rank, size and num_threads are)"),
            ),
        }
    }

    /// `this_grid().sync()`: every thread of the cooperative launch arrives with an acq_rel
    /// device-scope add on the launch's hidden counter, then waits (acquire) until the counter
    /// has reached this sync's generation (the launch's threads times the syncs so far). The
    /// last arrival's RMW chain carries every thread's writes before the sync to every thread
    /// after it: the ordering a grid barrier gives.
    pub(super) fn grid_sync(&mut self, e: Node<'t>) -> R<()> {
        if !self.cx.launch_cooperative {
            return err(
                e,
                "`this_grid().sync()` needs a cooperative launch: launch the kernel with cudaLaunchCooperativeKernel (with <<<...>>> its blocks are not guaranteed to be resident together and CUDA leaves grid.sync() undefined)",
            );
        }
        let loc = match self.cx.grid_sync {
            Some(l) => l,
            None => {
                let name = format!("grid_sync#{}", self.cx.launches.len() + 1);
                let arr = self.cx.new_array(
                    &name,
                    ArrayShape {
                        len: 1,
                        strukt: None,
                        ty: IntType::U32,
                        space: MemorySpace::Global,
                    },
                    &[0],
                    Some(span_of(e)),
                    false,
                )?;
                let l = self.cx.arrays[arr].elems[0];
                self.cx.grid_sync = Some(l);
                l
            }
        };
        let gen = match self.grid_gen {
            Some(r) => r,
            None => {
                let r = self.build.new_reg("$grid_gen", IntType::U32);
                self.grid_gen = Some(r);
                r
            }
        };
        let addr = Address::loc(loc);
        self.emit(
            InstrKind::Rmw {
                dst: None,
                addr,
                kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                ty: IntType::U32,
                order: Order::AcqRel,
                scope: Scope::Gpu,
            },
            e,
        );
        self.emit(
            InstrKind::Binary {
                dst: gen,
                op: BinOp::Add,
                ty: IntType::U32,
                a: Operand::Reg(gen),
                b: Operand::Imm(self.cx.launch_threads),
            },
            e,
        );
        let top = self.build.new_label();
        self.build.set_label(top);
        let seen = self.build.temp(IntType::U32);
        self.emit(
            InstrKind::Load {
                dst: seen,
                addr,
                ty: IntType::U32,
                order: Order::Acquire,
                scope: Scope::Gpu,
            },
            e,
        );
        let short = self.build.temp(IntType::U32);
        self.emit(
            InstrKind::Binary {
                dst: short,
                op: BinOp::Lt,
                ty: IntType::U32,
                a: Operand::Reg(seen),
                b: Operand::Reg(gen),
            },
            e,
        );
        self.branch(BranchCond::Ne(Operand::Reg(short), Operand::Imm(0)), top, e);
        Ok(())
    }

    pub(super) fn member(&mut self, e: Node<'t>, f: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        let obj = field(f, "argument")?;
        let method = self.text(field(f, "field")?);
        if let Some(g) = self.group_of(obj) {
            return self.group_method(g, method, e);
        }
        if let Some(Binding::HostThread(i)) = (obj.kind() == "identifier")
            .then(|| self.build.lookup(self.text(obj)))
            .flatten()
        {
            self.thread_method(i, method, e)?;
            return Ok(Operand::Imm(0));
        }
        let arrow = self.op(f) == "->";
        let p = if arrow {
            self.pointer(obj)?
        } else {
            self.place(obj)?.ok_or_else(|| {
                Diagnostic::error(
                    "member functions are called on atomic objects: `x->load()` or `r.load()`",
                )
                .at(span_of(obj))
            })?
        };
        let Access::Atomic(scope) = p.access else {
            return err(obj, format!("`{method}` needs an atomic object (declare it `cuda::atomic<int, ...>` or bind a `cuda::atomic_ref`)"));
        };
        let scope = self.scope(scope, None);
        let addr = self.address(p, obj)?;
        let args = self.args(e)?;
        let order_at = |me: &Self, i: usize| -> R<Order> {
            match args.get(i) {
                Some(o) => me.order_arg(*o),
                None => Ok(Order::SeqCst),
            }
        };
        if let Some((_, op)) = RMW_MEMBERS.iter().find(|(n, _)| *n == method) {
            self.arity(method, &args, (1, 2), "value[, order]", e)?;
            if addr.1.float && !matches!(op, RmwOp::Add | RmwOp::Sub | RmwOp::Exch) {
                return err(e, format!("`{method}` on a floating-point atomic (only fetch_add, fetch_sub and exchange are)"));
            }
            let v = self.value_as(args[0], addr.1, None)?;
            let order = order_at(self, 1)?;
            return Ok(self.rmw(addr, RmwKind::Op(*op, v), order, scope, hint, e));
        }
        match method {
            "load" => {
                self.arity(method, &args, (0, 1), "[order]", e)?;
                let order = order_at(self, 0)?;
                self.check_order(order, true, false, e)?;
                Ok(self.load_ord(addr, order, scope, hint, e))
            }
            "store" => {
                self.arity(method, &args, (1, 2), "value[, order]", e)?;
                let v = self.value_as(args[0], addr.1, None)?;
                let order = order_at(self, 1)?;
                self.check_order(order, false, true, e)?;
                self.store_ord(addr, v, order, scope, e);
                Ok(Operand::Imm(0))
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                self.arity(method, &args, (2, 4), "expected, desired[, order | success, failure]", e)?;
                let exp_name = self.text(args[0]);
                let Some(expected) = self.reg_of(exp_name, args[0])? else {
                    return err(args[0], "the expected value must be a local variable (it receives the current value on failure)");
                };
                let new = self.value(args[1], None)?;
                let order = order_at(self, 2)?;
                if let Some(fo) = args.get(3) {
                    self.order_arg(*fo)?;
                }
                Ok(self.compare_exchange(addr, expected, new, (order, scope), hint, e))
            }
            _ => err(field(f, "field")?, format!("not supported: member function `{method}` (load, store, exchange, fetch_add/sub/and/or/xor/min/max, compare_exchange_strong/weak)")),
        }
    }
}
