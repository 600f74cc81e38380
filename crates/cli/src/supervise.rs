//! `run` in child processes: one test that hangs the GPU must not stop the run.
//!
//! A launch that never ends (a barrier no thread reaches, a spin the loop cap cannot cut) leaves
//! the GPU context unusable: tearing it down waits for the launch, and only the end of the
//! process lets the driver reclaim the GPU. So `run` supervises a child process (the same
//! binary, the same arguments) that runs the files in order from a given one. The child reports
//! each file itself on the shared stdout; after a hung launch (reported with what the launches
//! before it observed) or a driver error it exits with [`EXIT_RESTART`], and the supervisor
//! starts a fresh child, with a fresh context, at the next file. A child that stops answering
//! in its GPU phase (no watchdog can fire when the driver itself is stuck) is killed after a
//! deadline, and the file is reported as hung with nothing observed.
//!
//! The child tells the supervisor where it is through a small file of lines ([`Note`]):
//! `f I` (file I begins), `g` (a GPU run begins), `d I OK` (file I ended, OK 1 when it passed),
//! `t K D` (K killable mutants ran, D killed). `SCOPECHECK_RUN_INPROCESS=1` keeps the whole run
//! in one process (the old behaviour: a hang ends the run).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use scopecheck_frontend::Input;

/// Set in a child: the index of the first input it runs.
pub const CHILD_ENV: &str = "SCOPECHECK_RUN_CHILD";
/// Set in a child: the file it writes its notes to.
pub const NOTES_ENV: &str = "SCOPECHECK_RUN_NOTES";
/// `1`: run every file in this process, without a child.
pub const INPROCESS_ENV: &str = "SCOPECHECK_RUN_INPROCESS";
/// A child's exit status after a hang or a driver error: start a fresh child after the file
/// it was running.
pub const EXIT_RESTART: i32 = 75;
/// How often the supervisor looks at its child.
const POLL: Duration = Duration::from_millis(20);
/// Slack added to a GPU run's own limits before the supervisor gives up on its child.
const SLACK: Duration = Duration::from_secs(30);

/// How this process runs the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Supervises children (the default).
    Supervisor,
    /// A child: runs the inputs from this index on.
    Child(usize),
    /// Runs every file itself (`SCOPECHECK_RUN_INPROCESS=1`).
    InProcess,
}

pub fn mode() -> Mode {
    if let Some(i) = std::env::var(CHILD_ENV)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return Mode::Child(i);
    }
    if std::env::var(INPROCESS_ENV).is_ok_and(|v| v == "1") {
        Mode::InProcess
    } else {
        Mode::Supervisor
    }
}

/// What a child tells its supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    File(usize),
    Gpu,
    Done(usize, bool),
    Tally(u32, u32),
}

impl Note {
    fn line(self) -> String {
        match self {
            Note::File(i) => format!("f {i}\n"),
            Note::Gpu => "g\n".into(),
            Note::Done(i, ok) => format!("d {i} {}\n", u8::from(ok)),
            Note::Tally(k, d) => format!("t {k} {d}\n"),
        }
    }

    fn parse(line: &str) -> Option<Note> {
        let mut w = line.split_whitespace();
        let tag = w.next()?;
        let mut num = || w.next().and_then(|x| x.parse::<u64>().ok());
        Some(match tag {
            "f" => Note::File(num()? as usize),
            "g" => Note::Gpu,
            "d" => Note::Done(num()? as usize, num()? == 1),
            "t" => Note::Tally(num()? as u32, num()? as u32),
            _ => return None,
        })
    }
}

fn notes_file() -> &'static Option<Mutex<File>> {
    static NOTES: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    NOTES.get_or_init(|| {
        let path = std::env::var_os(NOTES_ENV)?;
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    })
}

/// Tells the supervisor, if there is one, what this child is doing.
pub fn note(n: Note) {
    if let Some(f) = notes_file() {
        if let Ok(mut f) = f.lock() {
            // A lost note only costs the supervisor's precision (which file to blame).
            let _ = f.write_all(n.line().as_bytes());
            let _ = f.flush();
        }
    }
}

/// A GPU run begins (the supervisor's deadline counts from here).
pub fn note_gpu() {
    note(Note::Gpu)
}

/// Where a child got to, read from its notes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Progress {
    /// The file it began last.
    current: Option<usize>,
    /// Whether it was in a GPU run of that file.
    on_gpu: bool,
    /// Files it finished, with whether each passed.
    done: Vec<(usize, bool)>,
    killable: u32,
    killed: u32,
}

impl Progress {
    fn read(text: &str) -> Progress {
        let mut p = Progress::default();
        for n in text.lines().filter_map(Note::parse) {
            match n {
                Note::File(i) => {
                    p.current = Some(i);
                    p.on_gpu = false;
                }
                Note::Gpu => p.on_gpu = true,
                Note::Done(i, ok) => {
                    p.done.push((i, ok));
                    p.on_gpu = false;
                }
                Note::Tally(k, d) => {
                    p.killable += k;
                    p.killed += d;
                }
            }
        }
        p
    }

    /// The file the child was in when it ended, if it had not finished it.
    fn unfinished(&self) -> Option<usize> {
        self.current
            .filter(|c| !self.done.iter().any(|(i, _)| i == c))
    }
}

/// How long one GPU run of a child may go on before the child is given up: the run's own time,
/// every launch of one batch at its budget, and some slack for setup.
pub fn gpu_deadline(time: Duration, launch_budget: Duration, batch: u32) -> Duration {
    time + launch_budget * (batch.max(1) + 2) + SLACK
}

/// What the supervisor says of a file its child could not report.
pub struct Lost<'a> {
    pub file: &'a str,
    pub why: String,
    pub hung: bool,
}

/// The result of supervising the whole run.
pub struct Supervised {
    pub all_good: bool,
    pub killable: u32,
    pub killed: u32,
}

/// Starts a child running the inputs from `from` on and writing its notes to `notes`.
pub type Spawn<'a> = &'a dyn Fn(usize, &Path) -> std::io::Result<Child>;

/// The child `run` starts: this binary with this process's arguments.
pub fn spawn_self(from: usize, notes: &Path) -> std::io::Result<Child> {
    Command::new(std::env::current_exe()?)
        .args(std::env::args_os().skip(1))
        .env(CHILD_ENV, from.to_string())
        .env(NOTES_ENV, notes)
        .env_remove(INPROCESS_ENV)
        .stdin(Stdio::null())
        .spawn()
}

/// Runs `inputs` in children, each from the file after the last one a child could not finish.
/// `report` prints what the supervisor has to say of a file no child reported.
pub fn supervise(
    inputs: &[Input],
    deadline: Duration,
    stop: &AtomicBool,
    report: &dyn Fn(&Lost),
    spawn: Spawn,
) -> Supervised {
    let mut out = Supervised {
        all_good: true,
        killable: 0,
        killed: 0,
    };
    let notes = notes_path();
    let mut next = 0;
    while next < inputs.len() {
        if stop.load(Ordering::Relaxed) {
            for i in &inputs[next..] {
                report(&Lost {
                    file: &i.file,
                    why: "not run: interrupted (Ctrl-C)".into(),
                    hung: false,
                });
            }
            out.all_good = false;
            break;
        }
        let (status, progress, killed_at) = match run_child(spawn, next, &notes, deadline, stop) {
            Ok(x) => x,
            Err(e) => {
                // Every file left gets its line, as `run --json` promises.
                for i in &inputs[next..] {
                    report(&Lost {
                        file: &i.file,
                        why: format!("not run: cannot start the runner process: {e}"),
                        hung: false,
                    });
                }
                out.all_good = false;
                break;
            }
        };
        out.killable += progress.killable;
        out.killed += progress.killed;
        out.all_good &= progress.done.iter().all(|(_, ok)| *ok);
        let lost = progress.unfinished();
        if let Some(i) = lost {
            out.all_good = false;
            let why = match killed_at {
                Some(after) => format!(
                    "HUNG: the runner process stopped answering in its GPU run and was ended \
                     after {:.1} s; nothing it observed came back",
                    after.as_secs_f64()
                ),
                None if status.code() == Some(EXIT_RESTART) => String::new(),
                None => format!(
                    "the runner process ended abnormally ({status}) while running this file"
                ),
            };
            if !why.is_empty() {
                report(&Lost {
                    file: &inputs[i].file,
                    why,
                    hung: killed_at.is_some(),
                });
            }
        }
        let finished = progress.done.iter().map(|(i, _)| *i + 1).max();
        let resume = match (lost, status.code()) {
            (Some(i), _) => Some(i + 1),
            (None, Some(EXIT_RESTART)) => finished.filter(|&f| f > next),
            _ => None,
        };
        match resume {
            Some(n) => next = n,
            // The child ran every file it could (or could not open the GPU, and said so).
            None => {
                out.all_good &= status.success();
                break;
            }
        }
    }
    let _ = std::fs::remove_file(&notes);
    out
}

/// A notes file of its own for each supervision (tests supervise several at once).
fn notes_path() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("scopecheck-run-{}-{n}.notes", std::process::id()))
}

/// Runs one child from input `from` until it exits or its GPU run overruns `deadline`; returns
/// its status, its notes, and how long its GPU run had gone on when it was killed.
fn run_child(
    spawn: Spawn,
    from: usize,
    notes: &Path,
    deadline: Duration,
    stop: &AtomicBool,
) -> std::io::Result<(ExitStatus, Progress, Option<Duration>)> {
    File::create(notes)?;
    let mut child = spawn(from, notes)?;
    let mut seen_len = 0u64;
    let mut gpu_since: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            let text = std::fs::read_to_string(notes).unwrap_or_default();
            return Ok((status, Progress::read(&text), None));
        }
        let len = std::fs::metadata(notes).map_or(0, |m| m.len());
        if len != seen_len {
            seen_len = len;
            let text = std::fs::read_to_string(notes).unwrap_or_default();
            // Every new note restarts the clock: a file with many mutants runs many GPU runs.
            gpu_since = Progress::read(&text).on_gpu.then(Instant::now);
        }
        // Ctrl-C reaches the child too; it finishes its batch and reports, so only a GPU run
        // that overruns is cut here.
        let overran = gpu_since.filter(|t| t.elapsed() > deadline);
        if let Some(t) = overran.filter(|_| !stop.load(Ordering::Relaxed)) {
            let _ = child.kill();
            let status = child.wait()?;
            let text = std::fs::read_to_string(notes).unwrap_or_default();
            return Ok((status, Progress::read(&text), Some(t.elapsed())));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_progress_says_which_file_was_unfinished() {
        let notes = [
            Note::File(3),
            Note::Gpu,
            Note::Done(3, true),
            Note::File(4),
            Note::Tally(5, 2),
            Note::Gpu,
        ];
        let text: String = notes.iter().map(|n| n.line()).collect();
        let parsed: Vec<Note> = text.lines().filter_map(Note::parse).collect();
        assert_eq!(parsed, notes);
        let p = Progress::read(&text);
        // File 4 began and never ended, in a GPU run: it is the one to blame.
        assert_eq!(p.unfinished(), Some(4));
        assert!(p.on_gpu);
        assert_eq!(p.done, vec![(3, true)]);
        assert_eq!((p.killable, p.killed), (5, 2));
        // A torn last line (the child was killed mid-write) is ignored, not misread.
        let p = Progress::read(&format!("{text}d 4"));
        assert_eq!(p.unfinished(), Some(4));
    }

    #[test]
    fn a_finished_file_is_not_blamed() {
        let p = Progress::read("f 0\ng\nd 0 0\n");
        assert_eq!(p.unfinished(), None);
        assert_eq!(p.done, vec![(0, false)]);
        assert!(!p.on_gpu);
    }

    fn inputs(n: usize) -> Vec<Input> {
        (0..n)
            .map(|i| Input {
                file: format!("t{i}.litmus"),
                path: PathBuf::from(format!("t{i}.litmus")),
                problem: None,
                kernel: None,
                spent: Default::default(),
            })
            .collect()
    }

    /// A child played by the shell: `script` sees the first input in `$1` and its notes file in
    /// `$N`.
    fn shell(script: &'static str) -> impl Fn(usize, &Path) -> std::io::Result<Child> {
        move |from, notes| {
            Command::new("sh")
                .arg("-c")
                .arg(script)
                .arg("child")
                .arg(from.to_string())
                .env("N", notes)
                .stdin(Stdio::null())
                .spawn()
        }
    }

    #[test]
    fn a_hung_child_is_ended_and_the_run_goes_on_with_the_next_file() {
        // Four files: the child hangs in the GPU run of file 1 (no watchdog of its own fires),
        // reports a hang of file 2 itself and asks for a fresh process, and passes 0 and 3.
        let script = r#"i=$1
            while [ $i -lt 4 ]; do
              echo "f $i" >> "$N"
              if [ $i -eq 1 ]; then echo g >> "$N"; exec sleep 30; fi
              if [ $i -eq 2 ]; then echo g >> "$N"; echo "d $i 1" >> "$N"; exit 75; fi
              echo "d $i 1" >> "$N"; echo "t 2 1" >> "$N"
              i=$((i+1))
            done"#;
        let lost = Mutex::new(Vec::new());
        let report = |l: &Lost| lost.lock().unwrap().push((l.file.to_string(), l.hung));
        let began = Instant::now();
        let stop = AtomicBool::new(false);
        let out = supervise(
            &inputs(4),
            Duration::from_millis(300),
            &stop,
            &report,
            &shell(script),
        );
        // Only file 1 is reported by the supervisor (file 2's child reported itself), as hung;
        // the run went on to file 3, whose mutants were counted with file 0's.
        assert_eq!(*lost.lock().unwrap(), vec![("t1.litmus".to_string(), true)]);
        assert!(!out.all_good);
        assert_eq!((out.killable, out.killed), (4, 2));
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "the hung child was not ended"
        );
    }

    #[test]
    fn a_child_that_dies_is_blamed_for_its_file_and_one_that_passes_ends_the_run() {
        let script = r#"i=$1
            while [ $i -lt 3 ]; do
              echo "f $i" >> "$N"
              if [ $i -eq 0 ]; then kill -9 $$; fi
              echo "d $i 1" >> "$N"
              i=$((i+1))
            done"#;
        let lost = Mutex::new(Vec::new());
        let report = |l: &Lost| lost.lock().unwrap().push((l.file.to_string(), l.hung));
        let stop = AtomicBool::new(false);
        let out = supervise(
            &inputs(3),
            Duration::from_secs(5),
            &stop,
            &report,
            &shell(script),
        );
        assert_eq!(
            *lost.lock().unwrap(),
            vec![("t0.litmus".to_string(), false)]
        );
        assert!(!out.all_good);
        // Everything passes when no file is lost.
        let out = supervise(
            &inputs(3)[1..],
            Duration::from_secs(5),
            &stop,
            &report,
            &shell(
                r#"echo "f 0" >> "$N"; echo "d 0 1" >> "$N"; echo "f 1" >> "$N"; echo "d 1 1" >> "$N""#,
            ),
        );
        assert!(out.all_good);
    }

    #[test]
    fn the_deadline_covers_the_run_and_a_batch_of_overrunning_launches() {
        let d = gpu_deadline(Duration::from_secs(1), Duration::from_secs(2), 64);
        // The child's own watchdog fires within one launch budget of a hung launch; the
        // supervisor must wait for it and not cut a healthy run.
        assert!(d > Duration::from_secs(1) + Duration::from_secs(2) * 64);
    }
}
