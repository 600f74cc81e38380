//! Statements: blocks, declarations (locals, `dim3`, arrays), `if`/`else if` chains, and loops
//! (unrolled `for` loops over constants, await loops as one backward branch).

use scopecheck_ir::{BranchCond, InstrKind, IntType, MemorySpace, Operand, Value};
use tree_sitter::Node;

use super::ArrayShape;
use super::{
    assigned_after, condition, err, field, first_line, fold_binary, has_array, host_array_type,
    is_dynamic_array, is_empty_stmt, only_child, writes_name, Access, Binding, Lw, Ptr, SharedDecl,
    Ty, R,
};
use crate::span_of;

impl<'c, 's, 't> Lw<'c, 's, 't> {
    pub(super) fn stmt(&mut self, s: Node<'t>) -> R<()> {
        match s.kind() {
            "comment" => Ok(()),
            "compound_statement" => self.block(s),
            "expression_statement" => {
                if let Some(e) = s.named_child(0) {
                    if e.kind() != "comment" && !self.misparsed_tile_decl(e)? {
                        self.value(e, None)?;
                    }
                }
                Ok(())
            }
            "declaration" => self.decl(s),
            "if_statement" => self.nested(|me| me.if_stmt(s)),
            "while_statement" => self.nested(|me| {
                let c = condition(s)?;
                me.loop_(Some(c), None, field(s, "body")?, s)
            }),
            "for_statement" => self.nested(|me| me.for_stmt(s)),
            // `do { ... } while (0)`, the body of a function-like macro (`CUDA_CHECK(call)`):
            // runs once, so it is no loop and may hold what the top of the harness may.
            "do_statement" if self.runs_once(s) => {
                let end = self.build.new_label();
                self.loops.push((end, end));
                let r = self.scoped(field(s, "body")?);
                self.loops.pop();
                r?;
                self.build.set_label(end);
                Ok(())
            }
            "do_statement" => self.nested(|me| me.do_stmt(s)),
            "break_statement" | "continue_statement" => {
                let Some(&(cont, end)) = self.loops.last() else {
                    return err(s, "`break` / `continue` outside a loop");
                };
                let l = if s.kind() == "break_statement" {
                    end
                } else {
                    cont
                };
                self.branch(BranchCond::Always, l, s);
                Ok(())
            }
            "return_statement" => {
                let value = s.named_child(0).filter(|v| v.kind() != "comment");
                match self.frames.last().copied() {
                    Some((end, ret)) => {
                        if let Some(v) = value {
                            let Some(r) = ret else {
                                return err(v, "a `void` function returns no value");
                            };
                            let ty = self.build.reg_ty(r);
                            let v = self.value_as(v, ty, Some(r))?;
                            self.mov(r, v, s);
                        }
                        self.branch(BranchCond::Always, end, s);
                    }
                    None => {
                        if self.host() {
                            return self.harness_return(s, value);
                        }
                        if value.is_some() {
                            return err(s, "a kernel returns no value");
                        }
                        let l = self.build.end_label;
                        self.branch(BranchCond::Always, l, s);
                    }
                }
                Ok(())
            }
            k => err(
                s,
                format!("not supported: `{}` ({k})", first_line(self.text(s))),
            ),
        }
    }

    pub(super) fn nested(&mut self, f: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    pub(super) fn block(&mut self, b: Node<'t>) -> R<()> {
        self.build.scopes.push(Vec::new());
        let mut c = b.walk();
        let kids: Vec<Node> = b.named_children(&mut c).collect();
        let mut r = Ok(());
        for s in kids {
            r = self.stmt(s);
            // After a `break`, `continue` or `return` that always runs (an `if` whose condition
            // folds), the rest of the block never runs: it is not lowered, so that what it
            // would compute there (an index past an array) is no error.
            if r.is_err() || self.falls_off() {
                break;
            }
        }
        self.build.scopes.pop();
        r
    }

    /// Whether the code so far ends in a jump that nothing jumps past: what follows in the
    /// current block is unreachable (structured code has no jump into a block's middle).
    pub(super) fn falls_off(&self) -> bool {
        matches!(
            self.build.code.last().map(|i| &i.kind),
            Some(InstrKind::Branch {
                cond: BranchCond::Always,
                ..
            })
        ) && !self.build.labels.contains(&Some(self.build.code.len()))
    }

    pub(super) fn decl(&mut self, d: Node<'t>) -> R<()> {
        let mut c = d.walk();
        let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
        for decl in decls {
            self.declarator(d, decl)?;
        }
        Ok(())
    }

    /// One declarator of the declaration `d`: a group, a thread, a `__shared__` object, a host
    /// array, a struct, a stream, event or `dim3`, an atomic reference, a pointer, or a scalar.
    fn declarator(&mut self, d: Node<'t>, decl: Node<'t>) -> R<()> {
        if self.group_decl(d, decl)? || self.arg_list_decl(d, decl)? || self.thread_decl(d, decl)? {
            return Ok(());
        }
        let ty = self.cx.ty(d, Some(decl))?;
        // `cuda::atomic_ref<int, S> h(x);` parses as a function declaration (C++'s most
        // vexing parse): in a body it constructs `h` from `x`.
        let vexing = (ty.atomic_ref && decl.kind() == "function_declarator")
            .then(|| {
                decl.child_by_field_name("declarator")
                    .zip(decl.child_by_field_name("parameters"))
            })
            .flatten();
        let (name_node, len, init) = match vexing {
            Some((n, args)) if n.kind() == "identifier" => (n, 1, Some(args)),
            _ if ty.shared && is_dynamic_array(self.text(d), decl) => {
                let name = field(decl, "declarator")?;
                (name, self.dynamic_shared_len(&ty, decl)?, None)
            }
            _ => self.cx.declarator_shape(decl)?,
        };
        let name = self.text(name_node).to_string();
        if self
            .build
            .scopes
            .last()
            .is_some_and(|sc| sc.iter().any(|(n, _)| *n == name))
        {
            return err(
                name_node,
                format!("`{name}` is already declared in this block"),
            );
        }
        if ty.shared {
            if self.host() {
                return err(d, "`__shared__` variables belong in kernels");
            }
            self.cx.not_in_memory(ty.strukt, decl)?;
            if init.is_some() {
                return err(decl, "a `__shared__` variable cannot have an initialiser");
            }
            // One declaration per source declaration (and size: a dynamic array is as long
            // as its launch says), shared by every thread.
            let idx = match self
                .cx
                .shared_decls
                .iter()
                .position(|s| s.node.id() == name_node.id() && s.len == len)
            {
                Some(i) => i,
                None => {
                    let row = self.cx.row_len(decl)?;
                    self.cx.shared_decls.push(SharedDecl {
                        name: name.clone(),
                        len,
                        row,
                        ty,
                        node: name_node,
                    });
                    self.cx.shared_decls.len() - 1
                }
            };
            self.build.bind(&name, Binding::Shared(idx));
            return Ok(());
        }
        if (len > 1 || has_array(decl)) && self.host() && host_array_type(&ty) {
            self.host_array_decl(name_node, &name, len, ty, init)?;
            if let Some(Binding::HostArr(p)) = self.build.lookup(&name) {
                self.cx.arrays[p.arr].row = self.cx.row_len(decl)?;
            }
            return Ok(());
        }
        if len > 1 || has_array(decl) {
            return err(
                decl,
                "not supported: local arrays (use a `__shared__` array or an allocation)",
            );
        }
        if let (Some(sid), false) = (ty.strukt, ty.pointer) {
            self.val_struct_decl(&name, sid, init)?;
            return Ok(());
        }
        if self.host() && !ty.pointer && self.memory_locals.contains(&name) {
            self.memory_local(&name, name_node, &ty, init, decl)?;
            return Ok(());
        }
        if ty.stream {
            let b = match init {
                Some(_) => self.cl_create_queue(init, decl)?,
                None => Binding::Stream(None),
            };
            self.build.bind(&name, b);
            return Ok(());
        }
        if ty.event {
            if !self.host() {
                return err(decl, "a `cudaEvent_t` belongs in host code");
            }
            if let Some(i) = init {
                return err(i, "create an event with cudaEventCreate(&e)");
            }
            self.build.bind(&name, Binding::Event(None));
            return Ok(());
        }
        if ty.dim3 {
            let v = match init {
                Some(i) => self.dim3_init(i)?,
                None => [1, 1, 1],
            };
            self.build.bind(&name, Binding::Dim3(v));
            return Ok(());
        }
        if ty.atomic_ref {
            return self.atomic_ref_decl(&name, ty, init, decl);
        }
        if ty.cl_kernel {
            let b = self.cl_create_kernel(init, decl)?;
            self.build.bind(&name, b);
            return Ok(());
        }
        if ty.pointer && self.host() {
            if let Some(i) = init {
                if let Some(p) = self.cl_alloc(&name, ty, i)? {
                    self.build.bind(&name, Binding::Ptr(p));
                    return Ok(());
                }
            }
        }
        if ty.pointer {
            let b = match init {
                Some(i) => {
                    let p = self.pointer(i)?;
                    let p = self.retype(p, ty.ptr_ty(), i)?;
                    Binding::Ptr(self.keep_pointer(p, i)?)
                }
                None => Binding::PtrUnset(ty.access, ty.size, ty.strukt, ty.int),
            };
            self.build.bind(&name, b);
            return Ok(());
        }
        self.scalar_decl(d, decl, &name, ty, init)
    }

    /// A host array: locations of ordinary host memory, which only the host touches.
    fn host_array_decl(
        &mut self,
        name_node: Node<'t>,
        name: &str,
        len: usize,
        ty: Ty,
        init: Option<Node<'t>>,
    ) -> R<()> {
        let values = match init {
            Some(i) if i.kind() == "initializer_list" => self.cx.const_init(i, len, &[ty.int])?,
            Some(i) => return err(i, "expected `{ constants }` to initialise an array"),
            None => Vec::new(),
        };
        let arr = self.cx.new_array(
            name,
            ArrayShape {
                len,
                strukt: None,
                ty: ty.int,
                space: MemorySpace::HostPageable,
            },
            &values,
            Some(span_of(name_node)),
            false,
        )?;
        self.build
            .bind(name, Binding::HostArr(Ptr::start_of(arr, ty)));
        Ok(())
    }

    /// `cuda::atomic_ref<T, S> name(init)`: `name` is the object `init` designates.
    fn atomic_ref_decl(
        &mut self,
        name: &str,
        ty: Ty,
        init: Option<Node<'t>>,
        decl: Node<'t>,
    ) -> R<()> {
        let Some(i) = init else {
            return err(
                decl,
                "an atomic reference must be bound: `cuda::atomic_ref<int, S> r(*p);`",
            );
        };
        let target = match i.kind() {
            "argument_list" | "initializer_list" | "parameter_list" => {
                let mut c = i.walk();
                let items: Vec<Node> = i.named_children(&mut c).collect();
                let [t] = items.as_slice() else {
                    return err(i, "an atomic reference binds to one object");
                };
                // The most vexing parse: `(x)` read as a parameter of type `x`, and
                // `(p[i])` as a parameter of type `p` declared an array of `i`.
                match (t.kind(), t.child_by_field_name("type")) {
                    ("parameter_declaration", Some(ty))
                        if t.child_by_field_name("declarator").is_none() =>
                    {
                        ty
                    }
                    ("parameter_declaration", Some(base)) => {
                        let d = field(*t, "declarator")?;
                        let size = d.child_by_field_name("size").filter(|_| {
                            d.kind() == "abstract_array_declarator"
                                && d.child_by_field_name("declarator").is_none()
                        });
                        let Some(size) = size else {
                            return err(*t, "an atomic reference binds to an object: write `*p`, `p[i]` or a global");
                        };
                        let p = self.pointer(base)?;
                        let p = self.offset(p, size, false, *t)?;
                        let p = self.retype(p, ty.ptr_ty(), *t)?;
                        let p = self.keep_pointer(p, *t)?;
                        self.build.bind(name, Binding::Obj(p));
                        return Ok(());
                    }
                    _ => *t,
                }
            }
            _ => i,
        };
        let Some(p) = self.place(target)? else {
            return err(
                target,
                "an atomic reference binds to an object: write `*p`, `p[i]` or a global",
            );
        };
        let p = self.retype(p, ty.ptr_ty(), target)?;
        let p = self.keep_pointer(p, target)?;
        self.build.bind(name, Binding::Obj(p));
        Ok(())
    }

    /// A scalar local `name` of the declaration `d`: a constant when its initialiser folds and
    /// nothing assigns it afterwards, else a register.
    fn scalar_decl(
        &mut self,
        d: Node<'t>,
        decl: Node<'t>,
        name: &str,
        ty: Ty,
        init: Option<Node<'t>>,
    ) -> R<()> {
        if ty.access != Access::Plain {
            return err(
                d,
                "not supported: a volatile or atomic local variable (locals are registers)",
            );
        }
        // A host constant, or a local initialised with a constant (thread and block
        // indices fold) and never assigned afterwards, is that constant (converted to its
        // type), so it can index memory. (The value computed, when it is not constant, is
        // the initial value of the register.)
        let mut computed = None;
        if let Some(i) = init {
            // An OpenCL harness passes sizes by address (`&global`) without writing them.
            let by_address = !(self.host() && self.cx.opencl);
            let fold = (self.host() && ty.constant)
                || (self.foldable(i) && !assigned_after(d, name, self.cx.src, by_address));
            if fold && !matches!(i.kind(), "argument_list" | "initializer_list") {
                let v = self.value_as(i, ty.int, None)?;
                if let Operand::Imm(v) = v {
                    self.build
                        .bind(name, Binding::Const(ty.int.wrap(v), ty.int));
                    return Ok(());
                }
                computed = Some(v);
            }
        }
        // Host code evaluates the initialiser first: a runtime call in it may end the
        // segment (`cudaError_t e = cudaDeviceSynchronize();`).
        let runtime_call = |i: &Node| {
            i.kind() == "call_expression"
                && i.child_by_field_name("function")
                    .is_some_and(|f| f.kind() != "field_expression")
        };
        if let Some(i) = init.filter(|i| self.host() && computed.is_none() && runtime_call(i)) {
            computed = Some(self.value_as(i, ty.int, None)?);
        }
        let r = self.build.new_reg(name, ty.int);
        match init {
            Some(i) if i.kind() == "argument_list" || i.kind() == "initializer_list" => {
                return err(i, "not supported: this initialiser; write `int x = e;`");
            }
            Some(i) => {
                let v = match computed {
                    Some(v) => v,
                    None => self.value_as(i, ty.int, Some(r))?,
                };
                self.mov(r, v, decl);
            }
            None => {}
        }
        let seg = self.seg;
        self.build.bind(name, Binding::Reg(r, seg, ty.int));
        Ok(())
    }

    pub(super) fn dim3_init(&mut self, i: Node<'t>) -> R<[Value; 3]> {
        match i.kind() {
            "argument_list" | "initializer_list" => {
                let mut c = i.walk();
                let items: Vec<Node> = i.named_children(&mut c).collect();
                if items.is_empty() || items.len() > 3 {
                    return err(i, "dim3 takes one to three sizes");
                }
                let mut v = [1, 1, 1];
                for (k, it) in items.into_iter().enumerate() {
                    v[k] = self.const_operand(it)?;
                }
                Ok(v)
            }
            _ => self.dims_of(i),
        }
    }

    /// A launch size: an integer or a `dim3`.
    pub(super) fn dims_of(&mut self, e: Node<'t>) -> R<[Value; 3]> {
        match e.kind() {
            "identifier" => {
                if let Some(Binding::Dim3(v)) = self.build.lookup(self.text(e)) {
                    return Ok(v);
                }
            }
            "call_expression" => {
                let f = field(e, "function")?;
                if self.text(f) == "dim3" {
                    return self.dim3_init(field(e, "arguments")?);
                }
            }
            _ => {}
        }
        Ok([self.const_operand(e)?, 1, 1])
    }

    /// An `if`, and the `else if`s chained to it by a loop (generated code chains a thousand):
    /// each link is lowered as the `else` branch of the one before, in a scope of its own.
    pub(super) fn if_stmt(&mut self, s: Node<'t>) -> R<()> {
        // Per link entered: the end label the link before sets once the chain is lowered.
        let mut ends: Vec<Option<usize>> = Vec::new();
        let mut at = s;
        let r = loop {
            match self.if_link(at) {
                Ok(Some((next, end))) => {
                    self.build.scopes.push(Vec::new());
                    self.nesting += 1;
                    ends.push(end);
                    at = next;
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        for end in ends.into_iter().rev() {
            self.nesting -= 1;
            self.build.scopes.pop();
            if let (Some(end), true) = (end, r.is_ok()) {
                self.build.set_label(end);
            }
        }
        r
    }

    /// Lowers the `if` statement `s` but for an `else` branch that is itself an `if`: that one
    /// is returned, to be lowered next, with the label to set after it (none when the
    /// condition was folded and only the `else` is lowered).
    pub(super) fn if_link(&mut self, s: Node<'t>) -> R<Option<(Node<'t>, Option<usize>)>> {
        let c = condition(s)?;
        let then = field(s, "consequence")?;
        let els = s.child_by_field_name("alternative").map(|e| {
            if e.kind() == "else_clause" {
                e.named_child(0).unwrap_or(e)
            } else {
                e
            }
        });
        let chained = els.filter(|e| e.kind() == "if_statement");
        // A condition known when lowering (`if (blockIdx.x == 0)`) lowers only the branch
        // taken: the other may index memory that this thread's indices put out of range.
        let inner = match c.kind() {
            "condition_clause" => c
                .child_by_field_name("value")
                .map_or_else(|| only_child(c), Ok)?,
            _ => c,
        };
        // `if (bad) return 1;` (or `exit(1)`, `abort()`, after printf and cleanup calls) in
        // the harness: the requirement `!bad` here, as `assert(!bad)` would be.
        if self.host() && self.frames.is_empty() && els.is_none() && self.fails(then)? {
            self.require_not(inner, s)?;
            return Ok(None);
        }
        if self.foldable(inner) {
            if let Operand::Imm(v) = self.value(inner, None)? {
                match (v != 0, els) {
                    (true, _) => self.scoped(then)?,
                    (false, Some(_)) if chained.is_some() => {
                        return Ok(chained.map(|next| (next, None)))
                    }
                    (false, Some(els)) => self.scoped(els)?,
                    (false, None) => {}
                }
                return Ok(None);
            }
        }
        if let (None, Some(&(cont, end))) = (els, self.loops.last()) {
            let jump = match then.kind() {
                "compound_statement" if then.named_child_count() == 1 => {
                    then.named_child(0).map(|n| n.kind()).unwrap_or("")
                }
                k => k,
            };
            match jump {
                "break_statement" => {
                    self.branch_if(c, true, end)?;
                    return Ok(None);
                }
                "continue_statement" => {
                    self.branch_if(c, true, cont)?;
                    return Ok(None);
                }
                _ => {}
            }
        }
        let else_l = self.build.new_label();
        self.branch_if(c, false, else_l)?;
        self.scoped(then)?;
        if let Some(els) = els {
            let end = self.build.new_label();
            self.branch(BranchCond::Always, end, c);
            self.build.set_label(else_l);
            if let Some(next) = chained {
                return Ok(Some((next, Some(end))));
            }
            self.scoped(els)?;
            self.build.set_label(end);
        } else {
            self.build.set_label(else_l);
        }
        Ok(None)
    }

    pub(super) fn scoped(&mut self, s: Node<'t>) -> R<()> {
        self.build.scopes.push(Vec::new());
        let r = self.stmt(s);
        self.build.scopes.pop();
        r
    }

    /// A constant expression over literals and constant bindings, without emitting anything;
    /// `None` when it is not one.
    pub(super) fn folded(&self, e: Node<'t>) -> Option<(Value, IntType)> {
        match e.kind() {
            "identifier" => match self.build.lookup(self.text(e))? {
                Binding::Const(v, ty) => Some((v, ty)),
                _ => None,
            },
            "parenthesized_expression" => self.folded(e.named_child(0)?),
            // `blockIdx.x` and friends: constants of a device thread, `unsigned int`.
            "field_expression" if !self.host() => {
                let on = self.text(e.child_by_field_name("argument")?);
                let k = match self.text(e.child_by_field_name("field")?) {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return None,
                };
                Some((self.dims.member(on, k)?, IntType::U32))
            }
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                let (mut a, mut ta) = self.folded(first)?;
                for o in ops {
                    let op = self.text(o.child_by_field_name("operator")?);
                    let (b, tb) = self.folded(o.child_by_field_name("right")?)?;
                    (a, ta) = fold_binary(op, a, ta, b, tb)?.ok()?;
                }
                Some((a, ta))
            }
            _ => self.cx.const_typed(e).ok(),
        }
    }

    /// `for (int i = A; i < B; ++i) body` with constant bounds and a body that never changes
    /// `i`: the body lowered once per value of `i`, a constant in each copy, so that a harness
    /// loop over an array costs no unroll bound. `Ok(false)` when the loop is not of that shape.
    pub(super) fn unrolled_for(&mut self, s: Node<'t>) -> R<bool> {
        const MAX_TRIPS: i64 = crate::MAX_ARRAY_ELEMENTS as i64;
        let (Some(init), Some(cond), Some(step), Some(body)) = (
            s.child_by_field_name("initializer"),
            s.child_by_field_name("condition"),
            s.child_by_field_name("update"),
            s.child_by_field_name("body"),
        ) else {
            return Ok(false);
        };
        let mut c = init.walk();
        let decls: Vec<Node> = init.children_by_field_name("declarator", &mut c).collect();
        let ([d], "declaration") = (decls.as_slice(), init.kind()) else {
            return Ok(false);
        };
        let (Some(name), Some(value)) = (
            d.child_by_field_name("declarator"),
            d.child_by_field_name("value"),
        ) else {
            return Ok(false);
        };
        let var = self.text(name);
        let Ok(ty) = self.cx.ty(init, Some(*d)) else {
            return Ok(false);
        };
        if ty.pointer || ty.strukt.is_some() {
            return Ok(false);
        }
        let Some((start, _)) = self.folded(value) else {
            return Ok(false);
        };
        // `i < B`, `i <= B`, `i != B`, `i > B`, `i >= B`.
        let bound = (cond.kind() == "binary_expression")
            .then(|| {
                let l = cond.child_by_field_name("left")?;
                let op = self.text(cond.child_by_field_name("operator")?);
                (self.text(l) == var).then_some(())?;
                let (b, _) = self.folded(cond.child_by_field_name("right")?)?;
                Some((op, b))
            })
            .flatten();
        let Some((op, end)) = bound else {
            return Ok(false);
        };
        // `++i`, `i++`, `--i`, `i--`, `i += C`, `i -= C`.
        let stride = match step.kind() {
            "update_expression" => {
                let arg = step.child_by_field_name("argument");
                if arg.map(|a| self.text(a)) != Some(var) {
                    return Ok(false);
                }
                if self.text(step).contains("++") {
                    1
                } else {
                    -1
                }
            }
            "assignment_expression" => {
                let (Some(l), Some(op), Some(r)) = (
                    step.child_by_field_name("left"),
                    step.child_by_field_name("operator"),
                    step.child_by_field_name("right"),
                ) else {
                    return Ok(false);
                };
                let Some((v, _)) = self.folded(r) else {
                    return Ok(false);
                };
                match (self.text(l) == var, self.text(op)) {
                    (true, "+=") => v,
                    (true, "-=") => -v,
                    _ => return Ok(false),
                }
            }
            _ => return Ok(false),
        };
        if stride == 0 || writes_name(body, var, self.cx.src) {
            return Ok(false);
        }
        let mut values = Vec::new();
        let mut i = start;
        loop {
            let go = match op {
                "<" => i < end,
                "<=" => i <= end,
                ">" => i > end,
                ">=" => i >= end,
                "!=" => i != end,
                _ => return Ok(false),
            };
            if !go {
                break;
            }
            if values.len() as i64 >= MAX_TRIPS {
                return Ok(false);
            }
            values.push(ty.int.wrap(i));
            i += stride;
        }
        let end_label = self.build.new_label();
        for v in values {
            let next = self.build.new_label();
            self.build
                .scopes
                .push(vec![(var.to_string(), Binding::Const(v, ty.int))]);
            self.loops.push((next, end_label));
            let r = self.scoped(body);
            self.loops.pop();
            self.build.scopes.pop();
            r?;
            self.build.set_label(next);
        }
        self.build.set_label(end_label);
        Ok(true)
    }

    pub(super) fn for_stmt(&mut self, s: Node<'t>) -> R<()> {
        if self.unrolled_for(s)? {
            return Ok(());
        }
        self.build.scopes.push(Vec::new());
        let r = (|| {
            if let Some(i) = s.child_by_field_name("initializer") {
                if i.kind() == "declaration" {
                    self.decl(i)?;
                } else {
                    self.value(i, None)?;
                }
            }
            let cond = s.child_by_field_name("condition");
            let step = s.child_by_field_name("update");
            self.loop_(cond, step, field(s, "body")?, s)
        })();
        self.build.scopes.pop();
        r
    }

    /// Whether a `do` statement's condition is the constant false (`while (0)`).
    pub(super) fn runs_once(&self, s: Node<'t>) -> bool {
        s.child_by_field_name("condition").is_some_and(|c| {
            let t: String = self
                .text(c)
                .chars()
                .filter(|c| !"() \t\n".contains(*c))
                .collect();
            t == "0" || t == "false"
        })
    }

    pub(super) fn do_stmt(&mut self, s: Node<'t>) -> R<()> {
        let head = self.build.new_label();
        let cont = self.build.new_label();
        let end = self.build.new_label();
        self.build.set_label(head);
        self.loops.push((cont, end));
        let r = self.scoped(field(s, "body")?);
        self.loops.pop();
        r?;
        self.build.set_label(cont);
        self.branch_if(condition(s)?, true, head)?;
        self.build.set_label(end);
        Ok(())
    }

    /// `L: if !c goto END; body; CONT: step; goto L; END:`, or `L: if c goto L` for a loop
    /// with neither body nor step (an await loop).
    pub(super) fn loop_(
        &mut self,
        cond: Option<Node<'t>>,
        step: Option<Node<'t>>,
        body: Node<'t>,
        s: Node<'t>,
    ) -> R<()> {
        let head = self.build.new_label();
        let cont = self.build.new_label();
        let end = self.build.new_label();
        self.build.set_label(head);
        if is_empty_stmt(body) && step.is_none() {
            match cond {
                Some(c) => self.branch_if(c, true, head)?,
                None => self.branch(BranchCond::Always, head, s),
            }
            return Ok(());
        }
        if let Some(c) = cond {
            self.branch_if(c, false, end)?;
        }
        self.loops.push((cont, end));
        let r = self.scoped(body);
        self.loops.pop();
        r?;
        self.build.set_label(cont);
        if let Some(st) = step {
            self.value(st, None)?;
        }
        self.branch(BranchCond::Always, head, cond.unwrap_or(s));
        self.build.set_label(end);
        Ok(())
    }
}
