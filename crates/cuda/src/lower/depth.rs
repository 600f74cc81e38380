//! The nesting budget across inlined bodies ([`crate::nesting`]): a kernel launched from
//! deep in the harness, or a helper called from deep in a kernel, is lowered on top of the
//! levels lowering is already at, so each body entered from a call site must fit in what is
//! left of [`MAX_NESTING`].

use tree_sitter::Node;

use super::{err, Ctx, R};
use crate::nesting::{depth_of, height, MAX_NESTING};

impl<'s, 't> Ctx<'s, 't> {
    /// Before lowering `body` for the call, launch or thread start `at`: the levels of the
    /// bodies being lowered around it, `at`'s depth in the file and `body`'s height must stay
    /// within [`MAX_NESTING`]. Returns the levels to give back to [`Ctx::leave_body`].
    pub(super) fn enter_body(&mut self, at: Node<'t>, body: Node<'t>, what: &str) -> R<usize> {
        let base = self.nest_base + depth_of(at);
        let h = match self.body_heights.get(&body.start_byte()) {
            Some(h) => *h,
            None => {
                let h = height(body);
                self.body_heights.insert(body.start_byte(), h);
                h
            }
        };
        if base + h > MAX_NESTING {
            return err(
                at,
                format!(
                    "nested too deeply: {what} here would lower a body {h} levels deep on top of \
                     {base} levels of the code around it, more than {MAX_NESTING} in all"
                ),
            );
        }
        Ok(std::mem::replace(&mut self.nest_base, base))
    }

    /// After lowering the body [`Ctx::enter_body`] admitted.
    pub(super) fn leave_body(&mut self, saved: usize) {
        self.nest_base = saved;
    }
}
