//! What `check` needs in continuous integration: which findings fail the run (`--fail-on`),
//! which share of the files one job of a matrix checks (`--shard`), and how many files are
//! checked at once (`--jobs`).

use clap::Args;
use scopecheck_ir::Quantifier;
use scopecheck_model::{Outcome, Verdict};

use scopecheck_frontend::Input;

/// Every file was checked and no finding `--fail-on` names was made.
pub const EXIT_OK: u8 = 0;
/// Some file could not be read, parsed or checked. It wins over findings: a file that was not
/// checked may hide any finding, so the run as a whole proves nothing.
pub const EXIT_INPUT_ERROR: u8 = 1;
/// Bad usage: an unknown option, a bad value, an output that cannot be written where it was
/// asked for (found before anything is checked).
pub const EXIT_USAGE: u8 = 2;
/// Some verdict has a finding `--fail-on` names (other than `unknown`).
pub const EXIT_FINDINGS: u8 = 3;
/// `--fail-on unknown` and some verdict is Unknown (a bound cut the search short before the
/// result was settled), with no other finding: inconclusive, not wrong.
pub const EXIT_UNKNOWN: u8 = 4;

#[derive(Args, Clone, Debug)]
pub struct CiFlags {
    /// Which findings make the exit status 3, a comma-separated list of `failures` (a
    /// `~exists` or `forall` requirement is `No`), `races` (a verdict is racy, under any model),
    /// `hangs` (a thread can wait forever), `lints`, and `unknown` (a verdict is `Unknown`;
    /// status 4 when nothing else is found); or `all`, or `none` (status 0 whatever the
    /// verdicts).
    #[arg(long, value_name = "LIST", default_value = "none", value_parser = FailOn::parse)]
    fail_on: FailOn,
    /// Check only shard I of N (1-based): the files whose position in the list of inputs,
    /// counted from 0, is I-1 modulo N. Give every job of the matrix the same paths.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// How many threads check files, and the subtrees of one file's search, at once
    /// (default: one per CPU, or RAYON_NUM_THREADS); reports come in input order and say the
    /// same whatever the number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    jobs: Option<u32>,
}

impl CiFlags {
    /// This job's share of `inputs`, in their order.
    pub fn shard(&self, inputs: Vec<Input>) -> Vec<Input> {
        match self.shard {
            None => inputs,
            Some(Shard { index, count }) => inputs
                .into_iter()
                .enumerate()
                .filter(|(i, _)| i % count == index - 1)
                .map(|(_, input)| input)
                .collect(),
        }
    }

    /// Runs `f` on a thread pool of `--jobs` threads (one per CPU without the flag), each
    /// with a stack of `scopecheck_frontend::WORKER_STACK`.
    pub fn with_jobs<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.jobs.map_or(0, |n| n as usize))
            .stack_size(scopecheck_frontend::WORKER_STACK)
            .build()
            .ok();
        match pool {
            Some(pool) => pool.install(f),
            // No thread could be made for a pool of its own: the global pool still checks.
            None => f(),
        }
    }

    pub fn gate(&self) -> Gate {
        Gate {
            fail_on: self.fail_on,
            files: Vec::new(),
            unknown: false,
        }
    }
}

/// The `--fail-on` set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailOn {
    failures: bool,
    races: bool,
    hangs: bool,
    lints: bool,
    unknown: bool,
}

impl FailOn {
    const ITEMS: &'static str = "failures, races, hangs, lints, unknown, all, none";

    fn parse(s: &str) -> Result<FailOn, String> {
        let mut set = FailOn::default();
        let items: Vec<&str> = s.split(',').map(str::trim).collect();
        if items.len() > 1 && items.contains(&"none") {
            return Err("`none` cannot be combined with other items".into());
        }
        for item in items {
            match item {
                "failures" => set.failures = true,
                "races" => set.races = true,
                "hangs" => set.hangs = true,
                "lints" => set.lints = true,
                "unknown" => set.unknown = true,
                "all" => {
                    set = FailOn {
                        failures: true,
                        races: true,
                        hangs: true,
                        lints: true,
                        unknown: true,
                    }
                }
                "none" => {}
                "" => return Err(format!("an empty item in `{s}`; expected {}", Self::ITEMS)),
                other => return Err(format!("unknown item `{other}`; expected {}", Self::ITEMS)),
            }
        }
        Ok(set)
    }

    /// The findings of one verdict this set names, by name.
    fn findings(&self, v: &Verdict) -> Vec<&'static str> {
        let requirement = matches!(v.quantifier, Quantifier::NotExists | Quantifier::Forall);
        [
            (
                self.failures && requirement && v.outcome == Outcome::No,
                "failures",
            ),
            (self.races && v.is_racy(), "races"),
            (self.hangs && v.terminates() == Some(false), "hangs"),
            (self.lints && !v.lints.is_empty(), "lints"),
        ]
        .into_iter()
        .filter_map(|(found, name)| found.then_some(name))
        .collect()
    }
}

/// `--shard I/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shard {
    /// 1-based.
    index: usize,
    count: usize,
}

impl Shard {
    fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: expected I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The findings of one run, as the files' reports come in.
pub struct Gate {
    fail_on: FailOn,
    /// Each file with findings, and which.
    files: Vec<(String, Vec<&'static str>)>,
    unknown: bool,
}

impl Gate {
    /// Notes one checked file's verdicts (every model's).
    pub fn note(&mut self, file: &str, verdicts: &[Verdict]) {
        let mut found: Vec<&'static str> = Vec::new();
        for v in verdicts {
            for name in self.fail_on.findings(v) {
                if !found.contains(&name) {
                    found.push(name);
                }
            }
            self.unknown |= self.fail_on.unknown && v.outcome == Outcome::Unknown;
        }
        if !found.is_empty() {
            self.files.push((file.to_string(), found));
        }
    }

    /// Notes one file checked on the native host path: whether a host process or a kernel
    /// assertion failed, whether some device execution raced or hung, whether the run was
    /// incomplete.
    pub fn note_native(
        &mut self,
        file: &str,
        failed: bool,
        racy: bool,
        hangs: bool,
        unknown: bool,
    ) {
        let found: Vec<&'static str> = [
            (self.fail_on.failures && failed, "failures"),
            (self.fail_on.races && racy, "races"),
            (self.fail_on.hangs && hangs, "hangs"),
        ]
        .into_iter()
        .filter_map(|(f, name)| f.then_some(name))
        .collect();
        self.unknown |= self.fail_on.unknown && unknown;
        if !found.is_empty() {
            self.files.push((file.to_string(), found));
        }
    }

    /// Takes over what `other` noted.
    pub fn absorb(&mut self, other: Gate) {
        self.files.extend(other.files);
        self.unknown |= other.unknown;
    }

    /// The exit status, given whether every file was checked.
    pub fn status(&self, all_checked: bool) -> u8 {
        if !all_checked {
            EXIT_INPUT_ERROR
        } else if !self.files.is_empty() {
            EXIT_FINDINGS
        } else if self.unknown {
            EXIT_UNKNOWN
        } else {
            EXIT_OK
        }
    }

    /// For text mode's stderr: which files fail the run and why; nothing when none does.
    pub fn summary(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .files
            .iter()
            .map(|(file, found)| format!("finding: {file}: {}", found.join(", ")))
            .collect();
        if self.files.is_empty() && self.unknown {
            lines.push("inconclusive: some verdict is Unknown (--fail-on unknown)".into());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_on_lists_parse() {
        let set = FailOn::parse("failures, hangs").unwrap();
        assert!(set.failures && set.hangs && !set.races && !set.lints && !set.unknown);
        assert_eq!(FailOn::parse("none"), Ok(FailOn::default()));
        let all = FailOn::parse("all").unwrap();
        assert!(all.failures && all.races && all.hangs && all.lints && all.unknown);
        for bad in ["", "races,", "race", "none,races"] {
            assert!(FailOn::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_are_one_based_and_in_range() {
        assert_eq!(Shard::parse("1/1"), Ok(Shard { index: 1, count: 1 }));
        assert_eq!(Shard::parse("3/4"), Ok(Shard { index: 3, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/2/3", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
