//! The depth-first walk of the graph explorer, on a stack of its own instead of the call stack.
//!
//! A search's depth grows with the events of an execution (every read and write is a level),
//! and the input decides how many there are: a thread of a few hundred stores overflowed the
//! call stack when each level was a call. So the search is a loop over a `Vec` of frames:
//! a state still to visit, or a choice point (the state it branches from and the choices it
//! has left). A choice point on top of the stack makes its next branch (pushing itself back
//! first while it has more), so the branches are explored in the order, and with the side
//! effects in between, of the recursive search this replaced; the budget and a failed gate
//! stop the walk before each frame, where the recursion checked after each branch.

use std::rc::Rc;

use scopecheck_ir::ThreadId;

use crate::collectives::{active_masks, ACTIVE_MASK_ANY};
use crate::dead_ends::{Gate, GateFailure};
use crate::interp::Status;
use crate::orbits::Symmetry;
use crate::rounds::{Branches, Formed};
use crate::search::{Search, PRUNE_FROM_EVENTS};
use crate::state::{Source, State};
use crate::Exploration;

/// What the walk has still to do, innermost last.
pub(crate) enum Frame<'p> {
    /// A state to visit (`Search::visit`).
    Visit(State<'p>),
    /// Run the threads of the state on from stepping thread `t` (after the branch where a
    /// starved thread stopped first).
    Step(State<'p>, usize),
    /// Under symmetry: the search of the state with this digest is over.
    Done(crate::digest::Digest),
    /// The branch where the hole at `takers[i]` takes write `w`, the writes' offer going on
    /// with `takers[i + 1..]`.
    Take {
        st: State<'p>,
        w: (usize, usize),
        takers: Rc<[(usize, usize)]>,
        i: usize,
    },
    /// A read choosing its write in the hole search (boxed: it holds two states).
    Reads(Box<Reads<'p>>),
    /// An `__activemask()` choosing the lanes it converged with.
    Converges {
        st: Option<State<'p>>,
        t: usize,
        options: std::vec::IntoIter<u32>,
    },
    /// A barrier choosing the arrivals of its next round.
    Rounds(crate::rounds::Branches<'p>),
    /// The revisiting search's choice points.
    Revisit(crate::revisit::Branches<'p>),
}

/// The branches of a read in the hole search: each write it may read, then the hole.
pub(crate) struct Reads<'p> {
    /// The state the branches start from; the last branch takes it.
    st: Option<State<'p>>,
    t: usize,
    sources: Vec<Source>,
    /// The next source to try.
    k: usize,
    /// Which sources the model already ruled out, where it judged them at once.
    allowed: Option<Vec<bool>>,
    judged: bool,
    /// Whether the read may also wait for a write to come, and the state where it does if
    /// made already.
    hole: bool,
    waiting: Option<State<'p>>,
}

impl Reads<'_> {
    fn allowed(&self, k: usize) -> bool {
        self.allowed.as_ref().is_none_or(|a| a[k])
    }

    /// Whether a branch is left after source `k`.
    fn more_after(&self, k: usize) -> bool {
        self.hole || (k + 1..self.sources.len()).any(|j| self.allowed(j))
    }
}

impl<'p> Search<'_, '_, 'p> {
    /// Walks the search tree below `st`, depth first.
    pub(crate) fn walk(&mut self, st: State<'p>) {
        let base = self.frames.len();
        self.frames.push(Frame::Visit(st));
        while self.frames.len() > base {
            if self.stopped() {
                self.frames.truncate(base);
                return;
            }
            match self.frames.pop().expect("a frame") {
                Frame::Visit(st) => self.visit(st),
                Frame::Step(st, t) => self.run_threads(st, Some(t)),
                Frame::Done(digest) => {
                    self.symmetry.done(digest);
                }
                Frame::Take { st, w, takers, i } => self.take(st, w, takers, i),
                Frame::Reads(reads) => self.next_read(*reads),
                Frame::Converges { st, t, options } => self.next_convergence(st, t, options),
                Frame::Rounds(b) => self.next_round(b),
                Frame::Revisit(b) => self.next_revisit(b),
            }
        }
    }

    /// Offers write `w` to each hole in `takers[i..]` (thread, path index): each takes it or
    /// waits on. The branch where none of them takes it comes first, then those where the last,
    /// the last but one, ... take it (the order of the recursion this replaced).
    pub(crate) fn offer(
        &mut self,
        mut st: State<'p>,
        w: (usize, usize),
        takers: Rc<[(usize, usize)]>,
        i: usize,
    ) {
        for i in i..takers.len() {
            let waits = st.clone();
            self.frames.push(Frame::Take {
                st,
                w,
                takers: takers.clone(),
                i,
            });
            st = waits;
        }
        self.frames.push(Frame::Visit(st));
    }

    /// The branch where hole `takers[i]` takes write `w`.
    fn take(
        &mut self,
        mut st: State<'p>,
        w: (usize, usize),
        takers: Rc<[(usize, usize)]>,
        i: usize,
    ) {
        let (u, r) = takers[i];
        if self.fill(&mut st, u, r, Source::Event(w.0, w.1)) {
            self.offer(st, w, takers, i + 1);
        }
    }

    /// Thread `t` reads in the hole search: from each write of the location it may read, or
    /// from a write to come (a hole), where some thread may still make one.
    pub(crate) fn choose_read(&mut self, st: State<'p>, t: usize) {
        let Status::Reads(req) = st.threads[t].status.clone() else {
            unreachable!("choose_read on a thread that does not read");
        };
        let mut sources = vec![Source::Init(req.loc)];
        for (u, th) in st.threads.iter().enumerate() {
            for (i, e) in th.trace.events.iter().enumerate() {
                if matches!(e.kind, crate::trace::EventKind::Write { loc, .. } if loc == req.loc)
                    && !th.value_holes.contains(&i)
                {
                    sources.push(Source::Event(u, i));
                }
            }
        }
        // A load of a commuting location starts after every update of it: it reads the last
        // of the chain the leaf will choose, the same as here (`commute`).
        if self.cx.statics[t].reads_final(req.instr, req.loc) {
            let last = crate::commute::chains(&st.graph, self.cx.model, self.cx.statics, None)
                .and_then(|c| {
                    c.chains
                        .into_iter()
                        .find(|ch| st.graph.events[ch[0]].kind.loc() == Some(req.loc))
                })
                .and_then(|ch| ch.last().copied());
            // Without an update (each was on a path not taken) it reads as any load does:
            // the initial value, or a store made before the updaters started (a host's
            // `cudaMemset`), which coherence orders after it.
            if let Some(w) = last {
                let u = st.graph.events[w].thread.expect("an update").0 as usize;
                sources = vec![Source::Event(u, st.graph.path_index(u, w))];
            }
        }
        // Or it reads a write not yet made, by a thread that can still make it.
        let hole = self.cx.may_still_be_written(&st, t, req.loc);
        let branches = sources.len() + usize::from(hole) > 1;
        if st.graph.len() >= PRUNE_FROM_EVENTS && branches {
            self.cx.model.extend_memos(&st.graph);
        }
        // The graph with the read reading from nothing yet: the hole's branch, and where the
        // model can judge every source from it at once, what it judges them on.
        let mut waiting = None;
        let mut allowed = None;
        if branches && st.graph.len() + 1 >= PRUNE_FROM_EVENTS {
            let (next, r) = self.waits(st.clone(), t);
            let g = &next.graph;
            let writes: Vec<usize> = sources.iter().map(|&s| s.global(g)).collect();
            allowed = self.cx.model.readable(g, g.thread_events[t][r], &writes);
            waiting = Some(next).filter(|_| hole);
        }
        let judged = allowed.is_some();
        let allowed_k = |k: usize| allowed.as_ref().is_none_or(|j: &Vec<bool>| j[k]);
        if self.place.forks_left > 0 && branches {
            let mut children = vec![];
            for (k, s) in sources.into_iter().enumerate() {
                let mut next = st.clone();
                if allowed_k(k) && self.resolve(&mut next, t, s, judged) {
                    children.push(next);
                }
            }
            if hole {
                children.push(waiting.unwrap_or_else(|| self.waits(st, t).0));
            }
            return self.fork(children);
        }
        self.next_read(Reads {
            st: Some(st),
            t,
            sources,
            k: 0,
            allowed,
            judged,
            hole,
            waiting,
        });
    }

    /// `st` with thread `t`'s read reading from nothing yet, and the read's path index.
    fn waits(&self, mut st: State<'p>, t: usize) -> (State<'p>, usize) {
        let r = st.threads[t].make_hole();
        self.cx.sync_graph(&mut st, t);
        (st, r)
    }

    /// The next branch of a read: from its next allowed source, or else the hole.
    fn next_read(&mut self, mut reads: Reads<'p>) {
        let Some(k) = (reads.k..reads.sources.len()).find(|&k| reads.allowed(k)) else {
            if reads.hole {
                let next = match reads.waiting.take() {
                    Some(w) => w,
                    None => self.waits(reads.st.take().expect("the state"), reads.t).0,
                };
                self.frames.push(Frame::Visit(next));
            }
            return;
        };
        let (t, s, judged) = (reads.t, reads.sources[k], reads.judged);
        // The last branch takes the state itself instead of a copy.
        let more = reads.more_after(k);
        let mut next = if more {
            reads.st.as_ref().expect("the state").clone()
        } else {
            reads.st.take().expect("the state")
        };
        if more {
            reads.k = k + 1;
            self.frames.push(Frame::Reads(Box::new(reads)));
        }
        if self.resolve(&mut next, t, s, judged) {
            self.frames.push(Frame::Visit(next));
        }
    }

    /// Visits `children`, the branches of one choice in order, on rayon's threads: each in a
    /// search of its own whose keys (`Found::key`) place what it finds where a sequential
    /// search would have met it; what they found is taken over in order.
    fn fork(&mut self, children: Vec<State<'p>>) {
        use rayon::prelude::*;
        let at = self.place.fork();
        // What the workers share (the walk's frames are this worker's own, and not `Sync`).
        let (cx, scheduler) = (self.cx, self.scheduler);
        let (starved, limits, progress) = (&self.starved, &self.limits, &self.progress);
        let (classes, on_execution, place) =
            (self.symmetry.classes, self.on_execution, &self.place);
        let (revisits, cta_barriers) = (self.revisits, self.cta_barriers);
        let found: Vec<(Exploration, Option<GateFailure>, bool)> = children
            .into_par_iter()
            .enumerate()
            .map(|(i, child)| {
                let mut out = Exploration::default();
                let mut sub = Search {
                    cx,
                    scheduler,
                    starved: starved.clone(),
                    limits: limits.worker(),
                    progress: progress.clone(),
                    gate: Gate::default(),
                    spun: false,
                    out: &mut out,
                    on_execution,
                    place: place.child(at, i),
                    revisits,
                    leaves_seen: Default::default(),
                    symmetry: Symmetry::new(classes, cx.statics),
                    cta_barriers,
                    frames: Vec::new(),
                };
                sub.walk(child);
                let (gate, spun) = (sub.gate.failure.take(), sub.spun);
                (out, gate, spun)
            })
            .collect();
        for (out, gate, spun) in found {
            self.out.absorb(out);
            if self.gate.failure.is_none() {
                self.gate.failure = gate;
            }
            self.spun |= spun;
        }
    }

    /// Branches over the lanes that run thread `t`'s `__activemask()` converged with it: the
    /// mask another lane's same execution of it (the k-th at the same instruction) already
    /// reported with `t` in it, or else `t` with any set of the lanes that have not run it yet,
    /// have not stopped and are not named by another lane's mask. Whether those lanes do run
    /// it is checked at the leaf (`convergence_kept`).
    pub(crate) fn choose_convergence(&mut self, mut st: State<'p>, t: usize) {
        let Status::Converges { instr, .. } = st.threads[t].status else {
            unreachable!("choose_convergence on a thread that does not converge");
        };
        let own = 1u32 << self.cx.program.lane(ThreadId(t as u32)).unwrap_or(0);
        let k = active_masks(&st.threads[t].trace.events, instr).count();
        let mut forced = None;
        let (mut free, mut claimed) = (0u32, 0u32);
        for u in crate::graph::barrier_members(self.cx.program, t, ACTIVE_MASK_ANY) {
            if u == t {
                continue;
            }
            let lane = 1u32 << self.cx.program.lane(ThreadId(u as u32)).unwrap_or(0);
            match active_masks(&st.threads[u].trace.events, instr).nth(k) {
                Some(m) if m & own != 0 => forced = Some(m),
                // Lanes that ran it with another group, and the lanes they named.
                Some(m) => claimed |= m,
                None if st.threads[u].status != Status::Stopped => free |= lane,
                None => {}
            }
        }
        let free = free & !claimed;
        let options: Vec<u32> = match forced {
            Some(m) => vec![m],
            // Every subset of `free`, each with `t`'s own lane.
            None => {
                let mut subsets = vec![];
                let mut sub = free;
                loop {
                    subsets.push(sub | own);
                    if sub == 0 {
                        break;
                    }
                    sub = (sub - 1) & free;
                }
                subsets
            }
        };
        if options.len() > 1 {
            // Lanes that run it in another order can reach the same execution.
            st.rounds.chosen = true;
        }
        self.next_convergence(Some(st), t, options.into_iter());
    }

    /// The next branch of an `__activemask()`: the next set of lanes.
    fn next_convergence(
        &mut self,
        mut st: Option<State<'p>>,
        t: usize,
        mut options: std::vec::IntoIter<u32>,
    ) {
        let Some(mask) = options.next() else {
            return;
        };
        let mut next = if options.len() == 0 {
            st.take().expect("the state")
        } else {
            st.as_ref().expect("the state").clone()
        };
        if options.len() > 0 {
            self.frames.push(Frame::Converges { st, t, options });
        }
        next.threads[t].converge(mask);
        self.cx.sync_graph(&mut next, t);
        self.frames.push(Frame::Visit(next));
    }

    /// Forms every round whose arrivals leave no choice, and branches where there is one:
    /// `Some` state to go on with, or `None` when the branches have been visited.
    pub(crate) fn form_rounds(&mut self, st: State<'p>) -> Option<State<'p>> {
        match self.cx.form_rounds(st) {
            Formed::Go(st) => Some(st),
            Formed::Branch(b) => {
                self.next_round(b);
                None
            }
        }
    }

    /// The next branch of a barrier's round: the next set of arrivals, then deferring.
    pub(crate) fn next_round(&mut self, b: Branches<'p>) {
        if let Some((next, rest)) = b.next() {
            if let Some(rest) = rest {
                self.frames.push(Frame::Rounds(rest));
            }
            self.frames.push(Frame::Visit(next));
        }
    }
}
