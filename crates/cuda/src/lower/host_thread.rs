//! `std::thread` in the harness: a host function of this file run by a thread of its own, as
//! host-device protocols are written (the host polls a flag the kernel sets while the harness
//! goes on). The new thread starts after the host code so far (its constructor is a
//! synchronization point), runs concurrently with what follows, and `t.join()` makes the
//! host code after it start after the thread ended, as a stream synchronization does for a
//! kernel.

use scopecheck_ir::{Diagnostic, Operand, Placement, ThreadId};
use tree_sitter::Node;

use super::ArrayShape;
use super::{err, field, Binding, Dims, FnKind, Lw, R};
use crate::span_of;

/// What became of a `std::thread` object.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ThreadState {
    Running,
    Joined,
    Detached,
}

/// One `std::thread` of the harness.
pub(super) struct HostThread {
    /// The variable's name, for the error when it is neither joined nor detached.
    pub(super) var: String,
    pub(super) thread: ThreadId,
    pub(super) state: ThreadState,
    pub(super) node_span: scopecheck_ir::Span,
}

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// `std::thread t(f, args...);` (or `t{f, args...}`, `t = std::thread(f, args...)`): whether
    /// `decl` of declaration `d` is one; it then spawns the thread.
    pub(super) fn thread_decl(&mut self, d: Node<'t>, decl: Node<'t>) -> R<bool> {
        let ty = d
            .child_by_field_name("type")
            .map(|t| self.word(t))
            .unwrap_or_default();
        if !matches!(ty.as_str(), "std::thread" | "thread") {
            return Ok(false);
        }
        if !self.host() {
            return err(d, "`std::thread` belongs in host code");
        }
        if self.nesting > 0 {
            return err(
                d,
                "not supported: a `std::thread` created inside a loop or `if` of the harness (write each thread out)",
            );
        }
        // `t(f, a)` parses as an init_declarator with an argument list, or, when every
        // argument is a plain name, as a function declarator (C++'s most vexing parse).
        let (name, list) = match decl.kind() {
            "init_declarator" => {
                let name = field(decl, "declarator")?;
                let value = field(decl, "value")?;
                let list = match value.kind() {
                    "argument_list" | "initializer_list" => value,
                    "call_expression"
                        if matches!(self.word(field(value, "function")?).as_str(), "std::thread" | "thread") =>
                    {
                        field(value, "arguments")?
                    }
                    _ => {
                        return err(
                            value,
                            "expected `std::thread t(function, arguments...)`",
                        )
                    }
                };
                (name, list)
            }
            "function_declarator" => (field(decl, "declarator")?, field(decl, "parameters")?),
            "identifier" => {
                return err(
                    decl,
                    "not supported: a `std::thread` without a function (give it one: `std::thread t(function, arguments...)`)",
                )
            }
            _ => return err(decl, "expected `std::thread t(function, arguments...)`"),
        };
        if name.kind() != "identifier" {
            return err(name, "expected a variable name");
        }
        let mut c = list.walk();
        let items: Vec<Node<'t>> = list
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .map(|n| vexing_argument(n))
            .collect();
        let Some((&f, args)) = items.split_first() else {
            return err(list, "a `std::thread` needs the function it runs");
        };
        let fname = self.word(f);
        let func = match self.cx.funcs.get(&fname) {
            Some(func) if func.kind == FnKind::Host => func.node,
            Some(_) => {
                return err(
                    f,
                    format!("`{fname}` is a device function: a `std::thread` runs host code"),
                )
            }
            None if f.kind() == "lambda_expression" => {
                return err(
                    f,
                    "not supported: a lambda as a thread's function (name a host function of this file: `std::thread t(function, arguments...)`)",
                )
            }
            None => {
                return err(
                    f,
                    format!("unknown host function `{fname}` (a `std::thread` runs a function of this file)"),
                )
            }
        };
        let frame = self.launch_frame(func, &fname, args, list, true)?;
        let id = self.spawn_host_thread(&fname, func, frame, d)?;
        let var = self.text(name).to_string();
        self.launches.host_threads.push(HostThread {
            var: var.clone(),
            thread: id,
            state: ThreadState::Running,
            node_span: span_of(name),
        });
        self.build.bind(
            &var,
            Binding::HostThread(self.launches.host_threads.len() - 1),
        );
        Ok(true)
    }

    /// Lowers `func`'s body as a new host thread that starts after the host code so far.
    fn spawn_host_thread(
        &mut self,
        fname: &str,
        func: Node<'t>,
        frame: Vec<(String, Binding)>,
        at: Node<'t>,
    ) -> R<ThreadId> {
        // The constructor's completion synchronizes with the start of the thread: the host
        // code so far becomes a host thread the new one starts after.
        self.flush_host();
        let mut before = self.launches.host_after.clone();
        before.extend(self.launches.host_done.iter().copied());
        let after = self.closure(before);
        let earlier = self
            .cx
            .threads
            .iter()
            .filter(|t| t.name == fname || t.name.starts_with(&format!("{fname}#")))
            .count();
        let name = if earlier == 0 {
            fname.to_string()
        } else {
            format!("{fname}#{}", earlier + 1)
        };
        let mut k = Lw::with_frame(&mut *self.cx, None, Dims::default(), self.seg, frame);
        // Launches and synchronizations in the thread's function would need their own stream
        // order: refused there (`spawned`).
        k.spawned = true;
        let end = k.build.new_label();
        k.frames.push((end, None));
        let body = field(func, "body")?;
        let outer = k.cx.enter_body(at, body, "this thread's function")?;
        let r = k.stmt(body);
        k.cx.leave_body(outer);
        k.frames.pop();
        r?;
        k.build.set_label(end);
        Ok(k.push_thread(name, Placement::Host, span_of(at), after))
    }

    /// `t.join()` / `t.detach()` on the `std::thread` with index `i`.
    pub(super) fn thread_method(&mut self, i: usize, method: &str, e: Node<'t>) -> R<()> {
        let (state, var, id) = {
            let t = &self.launches.host_threads[i];
            (t.state, t.var.clone(), t.thread)
        };
        if state != ThreadState::Running {
            return err(
                e,
                format!("`{var}` was already joined or detached (std::system_error)"),
            );
        }
        match method {
            "join" => {
                self.synchronize(vec![id], e)?;
                self.launches.host_threads[i].state = ThreadState::Joined;
            }
            "detach" => self.launches.host_threads[i].state = ThreadState::Detached,
            _ => {
                return err(
                    e,
                    format!("not supported: `std::thread::{method}` (join and detach are)"),
                )
            }
        }
        Ok(())
    }

    /// `int result = 0;` whose address a thread is given: one location of host memory, its
    /// name the object itself (as a global scalar's is).
    pub(super) fn memory_local(
        &mut self,
        name: &str,
        name_node: Node<'t>,
        ty: &super::Ty,
        init: Option<Node<'t>>,
        decl: Node<'t>,
    ) -> R<()> {
        if ty.atomic_ref
            || ty.stream
            || ty.event
            || ty.dim3
            || !matches!(ty.access, super::Access::Plain)
        {
            return err(decl, "not supported: a thread given the address of a host local of this type (use a plain integer, or an allocation)");
        }
        let (init_value, computed) = match init {
            None => (0, None),
            Some(i) => match self.value_as(i, ty.int, None)? {
                Operand::Imm(v) => (ty.int.wrap(v), None),
                v => (0, Some(v)),
            },
        };
        let arr = self.cx.new_array(
            name,
            ArrayShape {
                len: 1,
                strukt: None,
                ty: ty.int,
                space: scopecheck_ir::MemorySpace::HostPageable,
            },
            &[init_value],
            Some(span_of(name_node)),
            false,
        )?;
        let p = super::Ptr::start_of(arr, *ty);
        if let Some(v) = computed {
            self.store(p, v, decl)?;
        }
        self.build.bind(name, Binding::Obj(p));
        Ok(())
    }

    /// At the end of the harness: a thread still joinable when its object is destroyed calls
    /// std::terminate.
    pub(super) fn check_threads_ended(&self) -> R<()> {
        match self
            .launches
            .host_threads
            .iter()
            .find(|t| t.state == ThreadState::Running)
        {
            Some(t) => Err(Diagnostic::error(format!(
                    "`std::thread {}` is neither joined nor detached: its destructor calls std::terminate (call `{}.join()`)",
                    t.var, t.var
                )).at(t.node_span)),
            None => Ok(()),
        }
    }
}

/// The host locals whose address `body` passes to a `std::thread` (`&result`): they live in
/// memory, so that the thread's writes reach the harness's later reads.
pub(super) fn addressed_by_threads<'t>(lw: &Lw<'_, '_, 't>, body: Node<'t>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "declaration"
            && n.child_by_field_name("type")
                .is_some_and(|t| matches!(lw.text(t).trim(), "std::thread" | "thread"))
        {
            let mut inner = vec![n];
            while let Some(k) = inner.pop() {
                if k.kind() == "pointer_expression" && lw.op(k) == "&" {
                    if let Some(a) = k.child_by_field_name("argument") {
                        if a.kind() == "identifier" {
                            out.push(lw.text(a).to_string());
                        }
                    }
                }
                let mut c = k.walk();
                inner.extend(k.named_children(&mut c));
            }
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out
}

/// A plain name the most vexing parse read as a parameter of that type: the name itself.
fn vexing_argument(n: Node) -> Node {
    match (n.kind(), n.child_by_field_name("type")) {
        ("parameter_declaration", Some(ty)) if n.child_by_field_name("declarator").is_none() => ty,
        _ => n,
    }
}
