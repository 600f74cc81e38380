//! Stale spinners (docs/explore.md, "Stale spinners"): a thread blocked in a pure iteration
//! of an await loop that read a write coherence must put before a later write does not read
//! the latest write, so no completion of the state is a hang, and the branch is dropped.

use crate::state::{Context, State};
use crate::trace::PathEnd;

impl Context<'_, '_> {
    /// Whether giving read `r` of thread `t` its write may have made a spinner stale. Where
    /// nothing follows the read in its thread but its own RMW write half, the coherence edges
    /// every completion has gain only edges between writes of its location
    /// ([`Model::coherence_forced`]), so only a spinner that read that location can go stale.
    /// (On the TTAS lock with 5 threads this asks the model 245 times instead of 8,580, none
    /// of which found a stale spinner.)
    pub fn read_may_stale_spinner(&self, st: &State, t: usize, r: usize) -> bool {
        let trace = &st.threads[t].trace;
        let last = (r + 1..trace.events.len()).all(|k| {
            trace
                .rmw
                .iter()
                .any(|&(a, b)| a as usize == r && b as usize == k)
        });
        !last || self.spinner_read_loc(st, t, r)
    }

    /// Whether some blocked thread's spinning iteration read the location of thread `t`'s
    /// event `e`.
    pub fn spinner_read_loc(&self, st: &State, t: usize, e: usize) -> bool {
        let g = &st.graph;
        let loc = st.threads[t].trace.events[e].kind.loc();
        self.spun_writes(st).any(|w| g.events[w].kind.loc() == loc)
    }

    /// The writes that the spinning iterations of blocked threads read.
    pub fn spun_writes<'s>(&self, st: &'s State) -> impl Iterator<Item = usize> + 's {
        let g = &st.graph;
        (0..st.threads.len())
            .filter_map(move |t| {
                let from = st.threads[t].trace.spinning_from()?;
                Some(g.thread_events[t][from..].iter().filter_map(|&e| g.rf[e]))
            })
            .flatten()
    }

    /// Whether some thread blocked in a pure iteration read a write that coherence must put
    /// before a *progress write* (`Model::coherence_forced`): one that no pure iteration can
    /// hold, since it is not an RMW's write-back of what it read. No completion of the state
    /// is then a hang (the spinner never reads the latest write), and the branch is dropped
    /// as a whole, cut loops and faults of other threads included: those are reached as well
    /// by a completion in which each such spinner reads a coherence-latest write instead and
    /// goes on (docs/explore.md, "Stale spinners").
    pub fn spinner_goes_stale(&self, st: &State) -> bool {
        let g = &st.graph;
        let spun: Vec<usize> = self.spun_writes(st).collect();
        if spun.is_empty() {
            return false;
        }
        let progress = |x: usize| {
            let Some(u) = g.events[x].thread.map(|u| u.0 as usize) else {
                return false;
            };
            let k = g.path_index(u, x);
            let th = &st.threads[u];
            if th.value_holes.contains(&k) || th.trace.spinning_from().is_some_and(|it| k >= it) {
                return false;
            }
            match th.trace.rmw.iter().find(|&&(_, w)| w as usize == k) {
                None => true,
                Some(&(r, _)) => {
                    let r = g.thread_events[u][r as usize];
                    g.rf[r].is_some() && g.events[r].kind.value() != g.events[x].kind.value()
                }
            }
        };
        // Every model orders a write coherence-before the later writes of its thread to its
        // location, and the initial write before every other write of it (both are part of
        // `coherence_forced`): those are looked at first, without asking the model.
        let plainly_before_progress = |w: usize| {
            let same = |x: usize| x != w && g.same_loc.contains(w, x);
            match g.events[w].thread {
                None => g.writes.iter().any(|x| same(x) && progress(x)),
                Some(u) => {
                    let events = &g.thread_events[u.0 as usize];
                    let k = g.path_index(u.0 as usize, w);
                    events[k + 1..]
                        .iter()
                        .any(|&x| g.writes.contains(x) && same(x) && progress(x))
                }
            }
        };
        if spun.iter().any(|&w| plainly_before_progress(w)) {
            return true;
        }
        let forced = self.model.coherence_forced(g).closure();
        spun.into_iter().any(|w| forced.successors(w).any(progress))
    }

    /// Whether, at a leaf, some thread blocked in a pure iteration read a write that a later
    /// write of the same thread to the same location follows (outside that thread's own
    /// spinning iteration), or read the initial write of a location some thread wrote (outside
    /// a spinning iteration): in every model that write follows in coherence, so the spinner
    /// does not read the latest write.
    pub fn some_spinner_reads_stale(&self, st: &State) -> bool {
        let g = &st.graph;
        st.threads.iter().enumerate().any(|(t, th)| {
            let PathEnd::Blocked { iteration, .. } = th.trace.end else {
                return false;
            };
            (iteration..th.trace.events.len()).any(|i| {
                let Some(w) = g.rf[g.thread_events[t][i]] else {
                    return false;
                };
                let Some(wt) = g.events[w].thread.map(|x| x.0 as usize) else {
                    // The initial write comes first in coherence: any other write of the
                    // location, outside a spinning iteration, follows it.
                    let loc = g.events[w].kind.loc();
                    return st.threads.iter().any(|u| {
                        let spun_from = u.trace.spinning_from().unwrap_or(usize::MAX);
                        u.trace
                            .events
                            .iter()
                            .take(spun_from)
                            .any(|x| x.kind.is_write() && x.kind.loc() == loc)
                    });
                };
                let wi = g.thread_events[wt]
                    .iter()
                    .position(|&x| x == w)
                    .expect("a thread's event");
                let writer = &st.threads[wt].trace;
                let spun_from = writer.spinning_from().unwrap_or(usize::MAX);
                let loc = writer.events[wi].kind.loc();
                (wi + 1..writer.events.len().min(spun_from)).any(|k| {
                    let x = &writer.events[k].kind;
                    x.is_write() && x.loc() == loc
                })
            })
        })
    }
}
