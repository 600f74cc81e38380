//! How deeply a CUDA or OpenCL file's syntax tree may nest (issue 31).
//!
//! Lowering walks the tree recursively (statements, expressions, and the many questions it
//! asks of a subtree: is it constant, is it pure, is a name assigned in it), a few kilobytes
//! of stack per level. So before anything is lowered, the whole tree is measured by a loop,
//! and a file nested deeper than [`MAX_NESTING`] levels is an error at the first node too
//! deep: 10,000 nested parentheses, `if`s or blocks end there rather than in a stack
//! overflow. Chains that generated code makes long and that lowering follows by loops take
//! no level per link ([`step_levels`]): the operators of `a + b + c ...` (the grammar nests
//! the chain to the left) and `else if`s. Inlining a call lowers the callee's body on top of
//! the caller's levels, so [`crate::lower`] also checks, at each call it inlines and each
//! launch, that the call's depth plus the body's height stays within the limit.

use scopecheck_ir::Diagnostic;
use tree_sitter::{Node, TreeCursor};

use crate::span_of;

/// The most levels of the syntax tree (parentheses, blocks, statements, operators, ...) from
/// the file down to any node, inlined calls counted from the call down. Real kernels stay
/// under 40; at a few kilobytes a level the deepest lowering takes well under a megabyte of
/// a 2 MiB thread stack.
pub const MAX_NESTING: usize = 256;

/// The message of a file nested too deeply.
pub(crate) fn too_deep_message() -> String {
    format!(
        "nested too deeply: more than {MAX_NESTING} levels of parentheses, blocks, statements \
         and operators (a chain such as `a + b + c` or `else if`s in a row is one level)"
    )
}

/// Checks that no node of the tree under `root` is more than [`MAX_NESTING`] levels below
/// it; the error is at the first node (in source order) that is.
pub(crate) fn check_tree(root: Node) -> Result<(), Diagnostic> {
    let mut walk = Walk::new(root);
    loop {
        if walk.levels > MAX_NESTING {
            return Err(Diagnostic::error(too_deep_message()).at(span_of(walk.cursor.node())));
        }
        if !walk.next() {
            return Ok(());
        }
    }
}

/// How many levels the deepest node under `n` is below it (0 for a leaf).
pub(crate) fn height(n: Node) -> usize {
    let mut walk = Walk::new(n);
    let mut most = 0usize;
    loop {
        most = most.max(walk.levels);
        if !walk.next() {
            return most;
        }
    }
}

/// How many levels `n` is below the root of its tree.
pub(crate) fn depth_of(n: Node) -> usize {
    let mut depth = 0usize;
    let mut at = n;
    while let Some(p) = at.parent() {
        depth += step_levels(p, at);
        at = p;
    }
    depth
}

/// The levels a step from `parent` down to its child `child` takes: none where lowering
/// follows the step by a loop, not a call. Those are the left operand of a binary operator
/// that is itself an operator of the same kind (`a + b + c ...`: arithmetic, comparison and
/// bit operators are one kind, `&&` another, `||` a third), and an `else if` (the `else`
/// and the `if` in it): generated code chains thousands of each.
pub(crate) fn step_levels(parent: Node, child: Node) -> usize {
    match (parent.kind(), child.kind()) {
        ("binary_expression", "binary_expression")
            if parent.child_by_field_name("left") == Some(child)
                && chain_class(parent) == chain_class(child) =>
        {
            0
        }
        ("if_statement", "else_clause") | ("else_clause", "if_statement") => 0,
        _ => 1,
    }
}

/// Which chains of binary operators lowering follows by a loop (see [`step_levels`]): `&&`
/// and `||` each their own, every other operator one.
pub(crate) fn chain_class(e: Node) -> u8 {
    match e.child_by_field_name("operator").map(|o| o.kind()) {
        Some("&&") => 1,
        Some("||") => 2,
        _ => 0,
    }
}

/// The operands of a chain of binary operators of one class (see [`step_levels`]) whose
/// last operator is `e`: the innermost left operand first, then each operator's node with
/// its right operand, left to right. Found by a loop, for the lowerings that walk chains.
pub(crate) fn chain_of<'t>(e: Node<'t>) -> (Node<'t>, Vec<Node<'t>>) {
    let mut ops = vec![e];
    let mut left = e.child_by_field_name("left").unwrap_or(e);
    while left.kind() == "binary_expression" && chain_class(left) == chain_class(e) {
        ops.push(left);
        left = left.child_by_field_name("left").unwrap_or(left);
    }
    ops.reverse();
    (left, ops)
}

/// A preorder walk of a subtree that keeps the levels (by [`step_levels`]) of the node it is
/// at, below the subtree's root.
struct Walk<'t> {
    cursor: TreeCursor<'t>,
    /// The nodes above the current one, and the levels the step from each down took.
    above: Vec<(Node<'t>, usize)>,
    levels: usize,
}

impl<'t> Walk<'t> {
    fn new(root: Node<'t>) -> Self {
        Walk {
            cursor: root.walk(),
            above: Vec::new(),
            levels: 0,
        }
    }

    /// Moves to the next node in preorder within the subtree; `false` when the walk is over.
    fn next(&mut self) -> bool {
        let here = self.cursor.node();
        if self.cursor.goto_first_child() {
            let step = step_levels(here, self.cursor.node());
            self.above.push((here, step));
            self.levels += step;
            return true;
        }
        while let Some((parent, step)) = self.above.pop() {
            self.levels -= step;
            if self.cursor.goto_next_sibling() {
                let step = step_levels(parent, self.cursor.node());
                self.above.push((parent, step));
                self.levels += step;
                return true;
            }
            self.cursor.goto_parent();
        }
        false
    }
}
