//! PTX modules as `nvcc -ptx` and NVRTC write them: `.entry` kernels with `.param`s, typed
//! `.reg`s, module variables, guarded instructions, labels and `.loc` line information.
//!
//! [`parse`] reads a module into the syntax tree of [`ast`]; [`lower`] turns one kernel, for
//! one launch (grid and block shape, argument values), into IR threads whose special
//! registers (`%tid`, `%ctaid`, ...) are constants, whose `.param` loads are the arguments, and
//! whose addresses are computed at run time as the PTX computes them.

pub mod ast;
mod lexer;
#[cfg(test)]
mod limits_tests;
pub mod lower;
mod parse;

pub use parse::{parse, MAX_DEPTH, MAX_INLINED_AT, MAX_REGISTERS};
pub mod fold;

impl From<lower::LowerError> for scopecheck_ir::Diagnostic {
    fn from(e: lower::LowerError) -> Self {
        e.diagnostic
    }
}
