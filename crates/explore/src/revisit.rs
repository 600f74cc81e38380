//! The revisiting search, for models whose coherence is a total order per location and whose
//! consistent executions have an acyclic `po ∪ rf` (scoped C11). It follows TruSt
//! (Kokologiannakis, Marmanis, Gladstein, Vafeiadis, "Truly Stateless, Optimal Dynamic Partial
//! Order Reduction", POPL 2022).
//!
//! A read takes one of the writes already in the graph. A new write is placed at each position
//! of its location's coherence order that the model accepts, and it *revisits* every earlier
//! read `r` of its location outside its own `porf`-prefix: `r` now reads the new write, and the
//! events added after `r` that are not in that prefix are deleted (their threads are cut back
//! and run again from there). So a read never waits for a write that never comes: every branch
//! of the search ends in an execution or in a graph the model rejects.
//!
//! A revisit is made only when `r` and every deleted event were *added maximally* (a read
//! reading the coherence-latest write, a write placed last), compared with the events added
//! before each and the new write's prefix. Of all the graphs that differ only in what the
//! deleted events chose, exactly that one revisits, so each execution is built once
//! (docs/explore.md, "The revisiting search").

use crate::interp::Status;
use crate::relation::{EventSet, Relation};
use crate::search::Search;
use crate::state::{Context, Source, State};
use crate::walk::Frame;
use crate::Graph;

/// The branches of a choice of the revisiting search still to explore
/// (`Search::next_revisit`).
pub(crate) enum Branches<'p> {
    /// Thread `t` reads from each of `sources` (graph indices of writes).
    Reads {
        st: Option<State<'p>>,
        t: usize,
        sources: std::vec::IntoIter<usize>,
    },
    /// New write `a` revisits each of `reads`, then is placed without a revisit.
    Revisits {
        st: State<'p>,
        a: usize,
        prefix: EventSet,
        reads: std::vec::IntoIter<usize>,
    },
    /// Write `a` is placed at each of `positions` in coherence, then `pending` is added.
    Place {
        st: Option<State<'p>>,
        a: usize,
        pending: Option<(usize, usize)>,
        forward: bool,
        positions: std::ops::RangeInclusive<usize>,
    },
}

/// How many steps `Context::would_block` runs a spinner ahead before it gives up and
/// lets it run (an iteration longer than this is scheduled as any other thread).
const WOULD_BLOCK_STEPS: usize = 256;

/// Coherence as a relation: each location's order, transitively.
pub(crate) fn co_relation(g: &Graph, co: &[Vec<usize>]) -> Relation {
    let mut r = Relation::new(g.len());
    for order in co {
        for (k, &a) in order.iter().enumerate() {
            for &b in &order[k + 1..] {
                r.insert(a, b);
            }
        }
    }
    r
}

/// Where the value of graph event `w` (a write) comes from.
fn source_of(g: &Graph, w: usize) -> Source {
    match g.events[w].thread {
        None => Source::Init(g.events[w].kind.loc().expect("an initial write")),
        Some(t) => {
            let t = t.0 as usize;
            let i = g.path_index(t, w);
            Source::Event(t, i)
        }
    }
}

impl<'p> Search<'_, '_, 'p> {
    /// Whether the graph of `st`, with its coherence order, may still be completed into a
    /// consistent execution (every axiom holds on it: it is closed under `po ∪ rf`).
    fn placed_consistent(&mut self, st: &State<'p>) -> bool {
        let g = &st.graph;
        if g.len() < crate::search::PRUNE_FROM_EVENTS {
            return true;
        }
        self.out.checks += 1;
        self.cx
            .model
            .consistent_with(g, &co_relation(g, &st.co))
            .is_ok()
    }

    /// Thread `t` reads: once from each write of the location already in the graph.
    pub(crate) fn read_placed(&mut self, st: State<'p>, t: usize) {
        let Status::Reads(req) = &st.threads[t].status else {
            unreachable!("read_placed on a thread that does not read");
        };
        // Not before, in coherence, what the thread already wrote or read there
        // (SC-per-location, see `Model::total_coherence`).
        let g = &st.graph;
        let order = &st.co[req.loc.0 as usize];
        let from = g.thread_events[t]
            .iter()
            .filter(|&&x| g.events[x].kind.loc() == Some(req.loc))
            .filter_map(|&x| {
                if g.events[x].kind.is_write() {
                    Some(x)
                } else {
                    g.rf[x]
                }
            })
            .map(|w| order.iter().position(|&y| y == w).expect("a placed write"))
            .max()
            .unwrap_or(0);
        // Owned: the state they are read from moves into the choice point. A load of a
        // commuting location starts after every update of it: it reads the last (`commute`).
        let from = if self.cx.statics[t].reads_final(req.instr, req.loc) {
            order.len() - 1
        } else {
            from
        };
        let sources: Vec<usize> = order[from..].to_vec();
        self.next_revisit(Branches::Reads {
            st: Some(st),
            t,
            sources: sources.into_iter(),
        });
    }

    /// The next branch of one of the revisiting search's choices.
    pub(crate) fn next_revisit(&mut self, b: Branches<'p>) {
        match b {
            Branches::Reads { st, t, sources } => self.next_source(st, t, sources),
            Branches::Revisits {
                st,
                a,
                prefix,
                reads,
            } => self.next_revisited(st, a, prefix, reads),
            Branches::Place {
                st,
                a,
                pending,
                forward,
                positions,
            } => self.next_position(st, a, pending, forward, positions),
        }
    }

    /// Thread `t`'s read takes the next of `sources` (graph indices of writes).
    fn next_source(
        &mut self,
        mut st: Option<State<'p>>,
        t: usize,
        mut sources: std::vec::IntoIter<usize>,
    ) {
        let Some(w) = sources.next() else {
            return;
        };
        // The last choice takes the state itself instead of a copy.
        let latest = sources.len() == 0;
        let mut next = if latest {
            st.take().expect("the state")
        } else {
            st.as_ref().expect("the state").clone()
        };
        if !latest {
            self.frames
                .push(Frame::Revisit(Branches::Reads { st, t, sources }));
        }
        let v = self.cx.value(&next, source_of(&next.graph, w));
        let (r, rmw_write) = next.threads[t].resolve_read(v);
        self.cx.sync_graph(&mut next, t);
        let read = next.graph.thread_events[t][r];
        next.graph.rf[read] = Some(w);
        // No `may_read_from` filter: it may judge what comes only later (two RMWs reading one
        // write), and such a graph is a step on the way to another through a revisit.
        // The new read has no successors: reading the coherence-latest write keeps a
        // consistent graph consistent (maximal extensibility, `Model::total_coherence`).
        match rmw_write {
            Some(e) => self.add_write(next, t, e),
            None if latest => {
                self.cx.model.extend_memos(&next.graph);
                self.frames.push(Frame::Visit(next));
            }
            None => {
                if self.placed_consistent(&next) {
                    self.frames.push(Frame::Visit(next));
                }
            }
        }
    }

    /// Thread `t` made write `e` (path index): it revisits each read it may, and is placed in
    /// coherence.
    pub(crate) fn add_write(&mut self, st: State<'p>, t: usize, e: usize) {
        let a = st.graph.thread_events[t][e];
        let g = &st.graph;
        let prefix = g.causal_prefix(a);
        let reads: Vec<usize> = g
            .reads
            .iter()
            .filter(|&r| g.same_loc.contains(a, r) && !prefix.contains(r))
            .collect();
        self.next_revisited(st, a, prefix, reads.into_iter());
    }

    /// The next branch of new write `a`: revisiting the next of `reads`, or, once none is
    /// left, placing it with no revisit.
    fn next_revisited(
        &mut self,
        st: State<'p>,
        a: usize,
        prefix: EventSet,
        mut reads: std::vec::IntoIter<usize>,
    ) {
        let Some(r) = reads.next() else {
            return self.place(st, a, None, true);
        };
        let revisited = self.revisited(&st, a, r, &prefix);
        self.frames.push(Frame::Revisit(Branches::Revisits {
            st,
            a,
            prefix,
            reads,
        }));
        if let Some((next, a, pending)) = revisited {
            self.place(next, a, pending, false);
        }
    }

    /// Places write `a` (graph index) at each position of its location's coherence order the
    /// model accepts, then goes on (first adding `pending`, an RMW's write, when given).
    /// `forward`: `a` is the newest event of a graph that was consistent without it (not a
    /// revisit), so placing it last keeps it consistent (maximal extensibility).
    fn place(&mut self, st: State<'p>, a: usize, pending: Option<(usize, usize)>, forward: bool) {
        let g = &st.graph;
        let loc = g.events[a].kind.loc().expect("a write").0 as usize;
        let order = &st.co[loc];
        let at = |w: usize| order.iter().position(|&x| x == w).expect("a placed write");
        // After the writes of the location before it in program order, and the writes its
        // thread's earlier reads of the location read (SC-per-location).
        let t = g.events[a].thread.expect("a thread's write").0 as usize;
        let first = g.thread_events[t]
            .iter()
            .filter(|&&x| x != a && g.same_loc.contains(a, x))
            .filter_map(|&x| {
                if g.events[x].kind.is_write() {
                    Some(x)
                } else {
                    g.rf[x]
                }
            })
            .map(|w| at(w) + 1)
            .max()
            .unwrap_or(1);
        // An RMW's write right after the write its read reads, unless a write may come between.
        let rmw_source = g
            .rmw
            .pairs()
            .find(|&(_, w)| w == a)
            .map(|(r, _)| at(g.rf[r].expect("the RMW's read has its write")));
        let positions = match rmw_source {
            Some(s) if self.cx.model.rmw_write_adjacent(g, a) => s + 1..=s + 1,
            // A blind update goes last: the order among updates is not explored
            // (`commute`), and nothing else writes its location.
            _ if crate::commute::is_update(g, self.cx.statics, a) => order.len()..=order.len(),
            _ => first..=order.len(),
        };
        self.next_position(Some(st), a, pending, forward, positions);
    }

    /// The next branch of placing write `a`: at the next of `positions` in its location's
    /// coherence order.
    fn next_position(
        &mut self,
        mut st: Option<State<'p>>,
        a: usize,
        pending: Option<(usize, usize)>,
        forward: bool,
        mut positions: std::ops::RangeInclusive<usize>,
    ) {
        let Some(p) = positions.next() else {
            return;
        };
        let last = positions.is_empty();
        let mut next = if last {
            st.take().expect("the state")
        } else {
            st.as_ref().expect("the state").clone()
        };
        if !last {
            self.frames.push(Frame::Revisit(Branches::Place {
                st,
                a,
                pending,
                forward,
                positions,
            }));
        }
        let loc = next.graph.events[a].kind.loc().expect("a write").0 as usize;
        next.co[loc].insert(p, a);
        let at_end = forward && p + 1 == next.co[loc].len();
        if at_end {
            self.cx.model.extend_memos(&next.graph);
        }
        if at_end || self.placed_consistent(&next) {
            match pending {
                Some((t, e)) => self.add_write(next, t, e),
                None => self.frames.push(Frame::Visit(next)),
            }
        }
    }

    /// The state where read `r` reads from the new write `a` instead, with every event added
    /// after `r` outside `prefix` deleted; `None` when this revisit is not the one to make
    /// (some event it deletes, or `r`, was not added maximally), or the model forbids it. When
    /// `r` is an RMW's read, its new write (thread, path index) is returned too, still to add.
    /// Returns the new state, `a`'s index in it, and that write.
    #[allow(clippy::type_complexity)]
    fn revisited(
        &mut self,
        st: &State<'p>,
        a: usize,
        r: usize,
        prefix: &EventSet,
    ) -> Option<(State<'p>, usize, Option<(usize, usize)>)> {
        let g = &st.graph;
        let n = g.len();
        let deleted: Vec<usize> = (r + 1..n).filter(|&x| !prefix.contains(x)).collect();
        if !self.cx.added_maximally(st, r, prefix)
            || !deleted
                .iter()
                .all(|&x| self.cx.added_maximally(st, x, prefix))
        {
            return None;
        }
        let mut gone = EventSet::new(n);
        deleted.iter().for_each(|&x| gone.insert(x));
        // A kept read of a deleted write would lose its write.
        if g.reads
            .iter()
            .any(|x| !gone.contains(x) && x != r && g.rf[x].is_some_and(|w| gone.contains(w)))
        {
            return None;
        }
        let rt = g.events[r].thread.expect("a thread's read").0 as usize;
        let ri = g.path_index(rt, r);
        let program = self.cx.program;
        let mut threads: Vec<_> = st
            .threads
            .iter()
            .enumerate()
            .map(|(u, th)| {
                let keep = if u == rt {
                    ri
                } else {
                    g.thread_events[u]
                        .iter()
                        .filter(|&&x| !gone.contains(x))
                        .count()
                };
                let mut cut = th.truncated(program, &program.threads[u], &self.cx.statics[u], keep);
                if self.starved.iter().any(|s| s.0 as usize == u) {
                    cut.starve();
                }
                cut
            })
            .collect();
        // The revisited thread takes the new write's value. Its replay stopped right after the
        // event before `r`, and every step emits one event or asks for a value, waits or stops:
        // so its very next step asks for `r`'s value, at `r`'s instruction and location (the
        // replay read the values its path recorded, so it computes the same address).
        let value = self.cx.value(st, source_of(g, a));
        let reader = &mut threads[rt];
        let step = reader.step(program, &program.threads[rt], &self.cx.statics[rt]);
        debug_assert!(
            step == crate::interp::Step::NeedsValue
                && matches!(&reader.status, Status::Reads(req) if {
                    let was = &st.threads[rt].trace.events[ri];
                    req.instr == was.instr && Some(req.loc) == was.kind.loc()
                }),
            "a cut-back thread's next step asks for the read it was cut at"
        );
        let (_, rmw_write) = reader.resolve_read(value);
        // The graph of what is kept, in the order it was added; `r` keeps its place.
        let mut graph = Graph::empty(program);
        let mut map = vec![usize::MAX; n];
        for (x, m) in map.iter_mut().enumerate() {
            let Some(u) = g.events[x].thread.map(|u| u.0 as usize) else {
                *m = x; // an initial write
                continue;
            };
            if !gone.contains(x) {
                let i = g.path_index(u, x);
                *m = graph.push(
                    scopecheck_ir::ThreadId(u as u32),
                    &threads[u].trace.events[i],
                );
            }
        }
        let pending = rmw_write.map(|w| {
            let ev = &threads[rt].trace.events[w];
            graph.push(scopecheck_ir::ThreadId(rt as u32), ev);
            (rt, w)
        });
        for (u, th) in threads.iter().enumerate() {
            for &(rr, ww) in &th.trace.rmw {
                let (rr, ww) = (rr as usize, ww as usize);
                if let (Some(&x), Some(&y)) = (
                    graph.thread_events[u].get(rr),
                    graph.thread_events[u].get(ww),
                ) {
                    graph.add_rmw(x, y);
                }
            }
        }
        for (x, y) in g.barrier_sync.pairs() {
            if !gone.contains(x) && !gone.contains(y) {
                graph.barrier_sync.insert(map[x], map[y]);
            }
        }
        for (x, y) in g.collective.pairs() {
            if !gone.contains(x) && !gone.contains(y) {
                graph.collective.insert(map[x], map[y]);
            }
        }
        for x in g.reads.iter().filter(|&x| !gone.contains(x)) {
            graph.rf[map[x]] = Some(if x == r {
                map[a]
            } else {
                map[g.rf[x].expect("every read has its write")]
            });
        }
        graph.keep_memo_of(g, &map);
        let co = st
            .co
            .iter()
            .map(|order| {
                order
                    .iter()
                    .filter(|&&x| !gone.contains(x))
                    .map(|&x| map[x])
                    .collect()
            })
            .collect();
        let mut rounds = st.rounds.clone();
        rounds.cut(|u| threads[u].trace.events.len());
        Some((
            State {
                threads: threads.into_iter().collect(),
                graph,
                fresh: vec![],
                co,
                rounds,
            },
            map[a],
            pending,
        ))
    }
}

/// What the revisiting search asks of a state, on the coherence order it placed.
impl Context<'_, '_> {
    /// Whether thread `t`, about to read inside a loop, would block there if every read it
    /// makes took the coherence-latest write of its location: it is run ahead on a copy until
    /// it needs anything but a read (a write, a barrier) or stops. The schedule passes over
    /// such a thread while another can run (`Search::next_thread`); the answer depends on the
    /// state alone, which is all the search's completeness asks of the schedule.
    pub(crate) fn would_block(&self, st: &State, t: usize) -> bool {
        if !self.statics[t].is_loop_read(st.threads[t].pc()) {
            return false;
        }
        let program = self.program;
        let mut th = st.threads[t].clone();
        for _ in 0..WOULD_BLOCK_STEPS {
            match th.step(program, &program.threads[t], &self.statics[t]) {
                crate::interp::Step::NeedsValue => {
                    let Status::Reads(req) = &th.status else {
                        unreachable!("a thread that needs a value reads");
                    };
                    let w = *st.co[req.loc.0 as usize].last().expect("the initial write");
                    let v = self.value(st, source_of(&st.graph, w));
                    th.resolve_read(v);
                }
                crate::interp::Step::Other => {}
                crate::interp::Step::Stopped => {
                    return matches!(th.trace.end, crate::trace::PathEnd::Blocked { .. })
                }
                _ => return false,
            }
        }
        false
    }

    /// Whether thread `t`, just blocked in a pure iteration, read in that iteration's last read
    /// a write that another write already in the graph follows in coherence. That read was not
    /// added maximally, so no revisit takes it or deletes it (`added_maximally`), and no
    /// revisit of an earlier read of the iteration can delete it either: the thread spins on a
    /// value that is not the latest in every graph below this one, which is then neither an
    /// execution nor a hang. What the other threads do below it (a fault, a cut loop) they do
    /// too where this read takes the coherence-latest write, a sibling branch: the iteration
    /// made no write anyone else can tell from the one it read (docs/explore.md).
    pub(crate) fn spins_on_stale_write(&self, st: &State, t: usize) -> bool {
        let th = &st.threads[t];
        let crate::trace::PathEnd::Blocked { iteration, .. } = th.trace.end else {
            return false;
        };
        let g = &st.graph;
        let Some(i) = (iteration..th.trace.events.len())
            .rev()
            .find(|&i| th.trace.events[i].kind.is_read())
        else {
            return false;
        };
        let r = g.thread_events[t][i];
        let w = g.rf[r].expect("every read has its write");
        let order = &st.co[g.events[r].kind.loc().expect("a read").0 as usize];
        let k = order.iter().position(|&x| x == w).expect("a placed write");
        order[k + 1..].iter().any(|&x| x < r)
    }

    /// Whether, at a leaf, some thread blocked in a pure iteration read there a write that a
    /// write outside every spinning iteration follows in the coherence order placed: it does
    /// not read the latest write, so the leaf is no hang (the judge would find the same).
    pub(crate) fn some_spinner_reads_before_latest(&self, st: &State) -> bool {
        let g = &st.graph;
        let spinning_from = |u: usize| st.threads[u].trace.spinning_from();
        let in_spin = |x: usize| {
            g.events[x].thread.is_some_and(|u| {
                let u = u.0 as usize;
                spinning_from(u).is_some_and(|it| g.path_index(u, x) >= it)
            })
        };
        (0..st.threads.len()).any(|t| {
            let Some(it) = spinning_from(t) else {
                return false;
            };
            g.thread_events[t][it..].iter().any(|&e| {
                let (Some(w), Some(l)) = (g.rf[e], g.events[e].kind.loc()) else {
                    return false;
                };
                let order = &st.co[l.0 as usize];
                let k = order.iter().position(|&x| x == w).expect("a placed write");
                order[k + 1..].iter().any(|&x| !in_spin(x))
            })
        })
    }

    /// Whether event `e` of `st` was added maximally, compared with what was added before it
    /// and with `prefix` (the revisiting write `a`'s): a read reads a write among those, the
    /// coherence-latest of them; a write is the coherence-latest of them. `a` is not placed.
    fn added_maximally(&self, st: &State, e: usize, prefix: &EventSet) -> bool {
        let g = &st.graph;
        let kind = g.events[e].kind;
        // A blind update has no place of its own among the updates of its location: it is
        // placed in the one way there is (`commute`).
        if crate::commute::is_update(g, self.statics, e) {
            return true;
        }
        let before = |x: usize| x <= e || prefix.contains(x);
        let w = if kind.is_read() {
            let w = g.rf[e].expect("every read has its write");
            if !before(w) {
                return false;
            }
            w
        } else if kind.is_write() {
            e
        } else {
            return true;
        };
        let order = &st.co[kind.loc().expect("a memory event").0 as usize];
        let k = order.iter().position(|&x| x == w).expect("a placed write");
        !order[k + 1..].iter().any(|&x| before(x))
    }
}
