//! What the hardware did against what the model allows.
//!
//! The collect kernel turns each instance's final state into a dense index through a
//! [`StateTable`] built here from the model's allowed states: every observable gets the list of
//! values it takes in some allowed state, and a state is the tuple of positions. A value outside
//! its list cannot belong to any allowed state, so such instances land in one "other" bin and are
//! recorded raw; a tuple of known values that the model does not allow is marked forbidden, and
//! its instances are recorded too.

use scopecheck_ir::{Observable, Program, Value};
use scopecheck_model::FinalState;

use crate::codegen::{MAX_DENSE, MAX_VALUES};
use crate::width::{register_holds, wide_observables, Holds};
use crate::GenError;

/// The dense encoding of final states for one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateTable {
    pub observables: Vec<Observable>,
    /// Per observable, the values it takes in some allowed state, sorted.
    pub values: Vec<Vec<Value>>,
    /// Per dense index, whether the model allows the state.
    pub allowed: Vec<bool>,
    /// Per observable, what its words stand for outside the table (see [`StateTable::value`]).
    holds: Vec<Holds>,
    /// Per observable, whether it is 64 bits wide: two words, low word first, in the record,
    /// the table (its high words follow the rows, [`StateTable::words`]) and the anomalies.
    pub wide: Vec<bool>,
}

impl StateTable {
    /// The table for `program` whose model-allowed states are `states`.
    pub fn new(program: &Program, states: &[FinalState]) -> Result<StateTable, GenError> {
        StateTable::with_allowed(program, states, states)
    }

    /// The table of the values of `states`, in which only the states of `allowed` count as
    /// allowed: a weakened test (a mutant) is tabled by its own states and judged against the
    /// original's, so that its instances in a state the original forbids are the anomalies.
    pub fn with_allowed(
        program: &Program,
        states: &[FinalState],
        allowed: &[FinalState],
    ) -> Result<StateTable, GenError> {
        let observables = program.observables();
        let wide = wide_observables(program);
        let mut values: Vec<Vec<Value>> = vec![Vec::new(); observables.len()];
        for s in states {
            for (k, &(_, v)) in s.values.iter().enumerate() {
                if let Some(list) = values.get_mut(k) {
                    if !list.contains(&v) {
                        list.push(v);
                    }
                }
            }
        }
        for (k, list) in values.iter_mut().enumerate() {
            list.sort_unstable();
            // The kernel tells a 64-bit observable's values apart by both their words, the
            // others' by their 32-bit words only.
            for (i, &v) in list.iter().enumerate().filter(|_| !wide[k]) {
                if i32::try_from(v).is_err() && u32::try_from(v).is_err() {
                    return Err(GenError::Unsupported(format!(
                        "{} takes the value {v} in an allowed state, which does not fit in 32 bits",
                        program.observable_name(observables[k])
                    )));
                }
                if let Some(&u) = list[..i].iter().find(|&&u| word(u) == word(v)) {
                    return Err(GenError::Unsupported(format!(
                        "{} takes the values {u} and {v} in the allowed states, which are the same \
                         32-bit word on the GPU",
                        program.observable_name(observables[k])
                    )));
                }
            }
            if list.len() > MAX_VALUES as usize {
                return Err(GenError::Unsupported(format!(
                    "{} takes {} values in the allowed states; the runner tables at most {MAX_VALUES}",
                    program.observable_name(observables[k]),
                    list.len()
                )));
            }
        }
        let dense = values
            .iter()
            .try_fold(1u64, |acc, l| acc.checked_mul(l.len() as u64));
        let dense = match dense {
            Some(d) if d <= MAX_DENSE as u64 => d as usize,
            _ => {
                return Err(GenError::Unsupported(format!(
                    "the allowed states span more than {MAX_DENSE} combinations of values"
                )))
            }
        };
        let holds = observables
            .iter()
            .map(|&o| match o {
                Observable::Reg(t, r) => register_holds(program.thread(t))
                    .get(r.0 as usize)
                    .copied()
                    .unwrap_or_default(),
                Observable::Loc(l) => Holds::of_type(program.location(l).ty),
            })
            .collect();
        let mut table = StateTable {
            observables,
            values,
            allowed: vec![false; dense],
            holds,
            wide,
        };
        for s in allowed {
            let v: Vec<Value> = s.values.iter().map(|&(_, v)| v).collect();
            if let Some(i) = table.index(&v) {
                table.allowed[i as usize] = true;
            }
        }
        Ok(table)
    }

    /// Dense states.
    pub fn len(&self) -> usize {
        self.allowed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    /// The dense index of a state (first observable varies fastest, as in the collect kernel),
    /// or None when some value is outside the table.
    pub fn index(&self, state: &[Value]) -> Option<u32> {
        let mut idx = 0u32;
        let mut stride = 1u32;
        for (list, v) in self.values.iter().zip(state) {
            let pos = list.iter().position(|x| x == v)? as u32;
            idx += pos * stride;
            stride *= list.len() as u32;
        }
        Some(idx)
    }

    /// The value the 32-bit word `w` of observable number `k` read back from the GPU stands
    /// for: the table's value with that word, or else the word sign- or zero-extended as the
    /// observable's type has it (a location's type; for a register, zero-extended only when it
    /// holds unsigned values alone).
    pub fn value(&self, k: usize, w: u32) -> Value {
        self.values
            .get(k)
            .and_then(|list| list.iter().copied().find(|&v| word(v) == w))
            .unwrap_or_else(|| self.holds.get(k).copied().unwrap_or_default().decode(w))
    }

    /// The state the words `words` of an anomaly record stand for: one word per observable,
    /// two (low word first) for a 64-bit one, which is its value whole.
    pub fn values_of_words(&self, words: &[u32]) -> Vec<Value> {
        let mut at = 0;
        (0..self.observables.len())
            .map(|k| {
                let lo = words.get(at).copied().unwrap_or(0);
                at += 1;
                if self.wide.get(k).copied().unwrap_or(false) {
                    let hi = words.get(at).copied().unwrap_or(0);
                    at += 1;
                    ((u64::from(hi) << 32) | u64::from(lo)) as Value
                } else {
                    self.value(k, lo)
                }
            })
            .collect()
    }

    /// The state at a dense index.
    pub fn decode(&self, mut idx: u32) -> Vec<Value> {
        self.values
            .iter()
            .map(|list| {
                let n = list.len() as u32;
                let v = list[(idx % n) as usize];
                idx /= n;
                v
            })
            .collect()
    }

    /// The table as the collect kernel reads it: per observable, a count then `MAX_VALUES`
    /// words; then per observable the `MAX_VALUES` high words of its values (read for the
    /// 64-bit observables only).
    pub fn words(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.values.len() * (2 * MAX_VALUES as usize + 1));
        for list in &self.values {
            out.push(list.len() as u32);
            for i in 0..MAX_VALUES as usize {
                out.push(list.get(i).map_or(0, |&v| word(v)));
            }
        }
        for list in &self.values {
            for i in 0..MAX_VALUES as usize {
                out.push(list.get(i).map_or(0, |&v| (v as u64 >> 32) as u32));
            }
        }
        out
    }

    /// Per dense index, 1 when the state is forbidden.
    pub fn forbidden_words(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self.allowed.iter().map(|&a| u32::from(!a)).collect();
        // The kernel reads index 0 even for a test with no observable.
        if out.is_empty() {
            out.push(0);
        }
        out
    }
}

/// A value as the 32-bit word the kernel stores.
pub fn word(v: Value) -> u32 {
    v as i32 as u32
}

/// One observed final state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateCount {
    pub values: Vec<Value>,
    pub count: u64,
    /// Whether the model allows it.
    pub allowed: bool,
    /// Whether the condition's proposition holds in it.
    pub satisfies: bool,
}

/// The observed states of a run, judged against the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Observed states, most frequent first.
    pub states: Vec<StateCount>,
    /// Instances that ended in a state the model forbids.
    pub forbidden: u64,
    /// Instances whose state satisfies the condition's proposition.
    pub satisfying: u64,
    /// Instances of the "other" bin whose values were not sampled.
    pub unsampled_other: u64,
}

/// Judges the dense histogram `dense` (one count per table index), the count of instances in
/// the "other" bin and sampled raw states of that bin.
pub fn compare(
    program: &Program,
    table: &StateTable,
    dense: &[u64],
    other: u64,
    other_samples: &[Vec<Value>],
) -> Comparison {
    let obs = &table.observables;
    let satisfies = |vals: &[Value]| {
        program
            .condition
            .prop
            .eval(&|o| obs.iter().position(|x| *x == o).map_or(0, |k| vals[k]))
    };
    let mut states = Vec::new();
    for (i, &count) in dense.iter().enumerate().take(table.len()) {
        if count > 0 {
            let values = table.decode(i as u32);
            states.push(StateCount {
                satisfies: satisfies(&values),
                allowed: table.allowed[i],
                values,
                count,
            });
        }
    }
    let mut sampled = 0u64;
    for s in other_samples {
        sampled += 1;
        match states.iter_mut().find(|c| !c.allowed && &c.values == s) {
            Some(c) => c.count += 1,
            None => states.push(StateCount {
                values: s.clone(),
                count: 1,
                allowed: false,
                satisfies: satisfies(s),
            }),
        }
    }
    let unsampled_other = other.saturating_sub(sampled);
    states.sort_by(|a, b| b.count.cmp(&a.count).then(a.values.cmp(&b.values)));
    let forbidden = states
        .iter()
        .filter(|s| !s.allowed)
        .map(|s| s.count)
        .sum::<u64>()
        + unsampled_other;
    let satisfying = states.iter().filter(|s| s.satisfies).map(|s| s.count).sum();
    Comparison {
        states,
        forbidden,
        satisfying,
        unsampled_other,
    }
}

/// A state as conditions write it: `P1:r0=1; P1:r1=0;`.
pub fn state_text(program: &Program, obs: &[Observable], values: &[Value]) -> String {
    obs.iter()
        .zip(values)
        .map(|(o, v)| format!("{}={v};", program.observable_name(*o)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopecheck_model::{check, CheckOptions};

    const MP: &str = r#"PTX MP
{ data=0; flag=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0          ;
 st.weak data, 1        | ld.acquire.gpu r0, flag ;
 st.release.gpu flag, 1 | ld.weak r1, data        ;
exists (P1:r0 == 1 /\ P1:r1 == 0)
"#;

    fn mp() -> (Program, Vec<FinalState>) {
        let p = scopecheck_litmus::parse(MP).unwrap();
        let v = check(&p, &CheckOptions::default()).unwrap();
        (p, v.states)
    }

    #[test]
    fn the_table_encodes_every_state_and_marks_the_forbidden_one() {
        let (p, states) = mp();
        let t = StateTable::new(&p, &states).unwrap();
        assert_eq!(t.values, vec![vec![0, 1], vec![0, 1]]);
        for i in 0..t.len() as u32 {
            assert_eq!(t.index(&t.decode(i)), Some(i));
        }
        // The stale read after the flag is the one forbidden state.
        let stale = t.index(&[1, 0]).unwrap();
        assert!(!t.allowed[stale as usize]);
        assert_eq!(t.allowed.iter().filter(|a| !**a).count(), 1);
        assert_eq!(t.forbidden_words()[stale as usize], 1);
        assert_eq!(t.index(&[2, 0]), None);
        // The kernel's table: a count, then MAX_VALUES words, per observable; then the high
        // words, MAX_VALUES per observable (all 0 here).
        let w = t.words();
        assert_eq!(
            w.len(),
            2 * (MAX_VALUES as usize + 1) + 2 * MAX_VALUES as usize
        );
        assert_eq!(&w[..3], &[2, 0, 1]);
        assert!(w[2 * (MAX_VALUES as usize + 1)..].iter().all(|&h| h == 0));
    }

    #[test]
    fn a_64_bit_observable_is_tabled_whole() {
        // P1 reads x (0 or 2^32, the same low word) whole: the table keeps both values, with
        // their high words after the row, and the words of an anomaly record decode to the
        // whole value, 2^32 + 5 (outside the table) included.
        let p = scopecheck_litmus::parse(
            "PTX obs64\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
             st.relaxed.gpu.u64 x, 4294967296 | ld.relaxed.gpu.u64 r0, x ;\n\
             exists (P1:r0 == 0)\n",
        )
        .unwrap();
        let v = check(&p, &CheckOptions::default()).unwrap();
        let t = StateTable::new(&p, &v.states).unwrap();
        assert_eq!(t.wide, vec![true]);
        assert_eq!(t.values[0], vec![0, 1 << 32]);
        let w = t.words();
        let highs = MAX_VALUES as usize + 1;
        assert_eq!(&w[1..3], &[0, 0]);
        assert_eq!(&w[highs..highs + 2], &[0, 1]);
        assert_eq!(t.values_of_words(&[0, 1]), vec![1 << 32]);
        assert_eq!(t.values_of_words(&[5, 1]), vec![(1 << 32) + 5]);
        assert_eq!(t.index(&[(1 << 32) + 5]), None);
        assert_eq!(t.index(&[1 << 32]), Some(1));
    }

    #[test]
    fn comparison_counts_forbidden_and_unknown_states() {
        let (p, states) = mp();
        let t = StateTable::new(&p, &states).unwrap();
        let mut dense = vec![0u64; t.len()];
        dense[t.index(&[0, 0]).unwrap() as usize] = 10;
        dense[t.index(&[1, 1]).unwrap() as usize] = 5;
        dense[t.index(&[1, 0]).unwrap() as usize] = 2;
        let c = compare(&p, &t, &dense, 3, &[vec![7, 7]]);
        assert_eq!(c.forbidden, 2 + 3);
        assert_eq!(c.satisfying, 2);
        assert_eq!(c.unsampled_other, 2);
        assert_eq!(c.states[0].count, 10);
        assert!(c
            .states
            .iter()
            .any(|s| s.values == vec![7, 7] && !s.allowed));
    }

    const WRAP: &str = r#"PTX Wrap
{ x=4294967295; }
 P0@cta 0,gpu 0                    | P1@cta 1,gpu 0                    ;
 atom.relaxed.gpu.add.u32 r0, x, 1 | atom.relaxed.gpu.add.u32 r0, x, 1 ;
                                   | ld.relaxed.gpu.s32 r1, x          ;
forall (x == 1 /\ (P1:r1 == -1 \/ P1:r1 == 0 \/ P1:r1 == 1) /\ (P0:r0 == 4294967295 \/ P0:r0 == 0))
"#;

    #[test]
    fn words_read_back_decode_as_their_observables_types() {
        let p = scopecheck_litmus::parse(WRAP).unwrap();
        let v = check(&p, &CheckOptions::default()).unwrap();
        let t = StateTable::new(&p, &v.states).unwrap();
        let name = |k: usize| p.observable_name(t.observables[k]);
        let k = |n: &str| (0..t.observables.len()).find(|&k| name(k) == n).unwrap();
        // In the table: the table's value, whatever its type.
        assert_eq!(t.value(k("P0:r0"), u32::MAX), 4_294_967_295);
        assert_eq!(t.value(k("P1:r1"), u32::MAX), -1);
        // Outside it: as the location's type, or the types that write the register.
        assert_eq!(t.value(k("x"), u32::MAX - 1), 4_294_967_294);
        assert_eq!(t.value(k("P0:r0"), u32::MAX - 1), 4_294_967_294);
        assert_eq!(t.value(k("P1:r1"), u32::MAX - 1), -2);
    }

    #[test]
    fn values_the_gpu_cannot_tell_apart_are_refused() {
        let p = scopecheck_litmus::parse(WRAP).unwrap();
        let obs = p.observables();
        let state = |v: Value| FinalState {
            values: obs.iter().map(|&o| (o, v)).collect(),
            satisfies: false,
        };
        let m = StateTable::new(&p, &[state(-1), state(4_294_967_295)]).unwrap_err();
        assert!(
            matches!(&m, GenError::Unsupported(m) if m.contains("takes the values -1 and 4294967295 in the allowed states, which are the same 32-bit word")),
            "{m:?}"
        );
        let m = StateTable::new(&p, &[state(1 << 40)]).unwrap_err();
        assert!(
            matches!(&m, GenError::Unsupported(m) if m.contains("does not fit in 32 bits")),
            "{m:?}"
        );
    }

    #[test]
    fn words_round_trip_negative_values() {
        // A word of a value that is never 2^31 or more decodes sign-extended.
        assert_eq!(Holds::default().decode(word(-3)), -3);
        assert_eq!(Holds::default().decode(word(7)), 7);
    }
}
