//! How deeply a CUDA or OpenCL file's syntax tree may nest (issue 31).
//!
//! Lowering walks the tree recursively (statements, expressions, and the many questions it
//! asks of a subtree: is it constant, is it pure, is a name assigned in it), a few kilobytes
//! of stack per level. So before anything is lowered, the whole tree is measured by a loop,
//! and a file nested deeper than [`MAX_NESTING`] levels is an error at the first node too
//! deep: 10,000 nested parentheses, `if`s or blocks, or a chain of 10,000 operators (each
//! `+` of `a + b + ...` is a level: the grammar nests the chain to the left), end there
//! rather than in a stack overflow. Inlining a call lowers the callee's body on top of the
//! caller's levels, so [`crate::lower`] also checks, at each call it inlines and each launch,
//! that the call's depth plus the body's height stays within the limit.

use tree_sitter::{Node, TreeCursor};

use crate::{span_of, CudaError};

/// The most levels of the syntax tree (parentheses, blocks, statements, operators, ...) from
/// the file down to any node, inlined calls counted from the call down. Real kernels stay
/// under 40; at a few kilobytes a level the deepest lowering takes well under a megabyte of
/// a 2 MiB thread stack.
pub const MAX_NESTING: usize = 256;

/// The message of a file nested too deeply.
pub(crate) fn too_deep_message() -> String {
    format!(
        "nested too deeply: more than {MAX_NESTING} levels of parentheses, blocks, statements \
         and operators (each operator of a chain such as `a + b + c` is a level)"
    )
}

/// Checks that no node of the tree under `root` is more than [`MAX_NESTING`] levels below
/// it; the error is at the first node (in source order) that is.
pub(crate) fn check_tree(root: Node) -> Result<(), CudaError> {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if depth > MAX_NESTING {
            return Err(CudaError::new(span_of(cursor.node()), too_deep_message()));
        }
        if descend_or_next(&mut cursor, &mut depth) {
            continue;
        }
        return Ok(());
    }
}

/// How many levels the deepest node under `n` is below it (0 for a leaf).
pub(crate) fn height(n: Node) -> usize {
    let mut cursor = n.walk();
    let mut depth = 0usize;
    let mut most = 0usize;
    loop {
        most = most.max(depth);
        if !descend_or_next(&mut cursor, &mut depth) {
            return most;
        }
    }
}

/// How many levels `n` is below the root of its tree.
pub(crate) fn depth_of(n: Node) -> usize {
    let mut depth = 0usize;
    let mut at = n;
    while let Some(p) = at.parent() {
        depth += 1;
        at = p;
    }
    depth
}

/// Moves `cursor` to the next node in preorder within the subtree it started at, keeping
/// `depth` (relative to that start); `false` when the walk is over.
fn descend_or_next(cursor: &mut TreeCursor, depth: &mut usize) -> bool {
    if cursor.goto_first_child() {
        *depth += 1;
        return true;
    }
    loop {
        if *depth == 0 {
            return false;
        }
        if cursor.goto_next_sibling() {
            return true;
        }
        cursor.goto_parent();
        *depth -= 1;
    }
}
