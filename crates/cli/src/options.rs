//! The options every checking subcommand shares: model, unroll bound, scheduler.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, ValueEnum};
use scopecheck_ir::{Diagnostic, Span};
use scopecheck_litmus::OptionWord;
use scopecheck_model::{
    CheckOptions, Engine, ModelKind, Platform, Progress, Scheduler, DEFAULT_UNROLL,
};

/// The `--model` choices.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Model {
    /// The PTX memory consistency model (sm_70 and later).
    Ptx,
    /// Scoped C11: CUDA C++ (libcu++) and OpenCL 2.0 atomics with scopes.
    Src11,
    /// Both: scoped C11, then PTX after compiling, and where they disagree.
    Both,
}

/// The `--progress` choices: forward-progress models across blocks (Sorensen et al., CONCUR 2018).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ProgressArg {
    /// Every block is eventually scheduled.
    Fair,
    /// Occupancy-bound: running blocks keep running; only `--resident-blocks` run at once.
    Obe,
    /// Only the lowest-numbered unfinished block is guaranteed progress.
    Hsa,
    /// Occupancy-bound with blocks started in order.
    Lobe,
    /// No block is guaranteed to be scheduled while another spins.
    Unfair,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// How a `.cu` file's `main()` runs (`--host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HostArg {
    /// Read by scopecheck's interpreter of a subset of C++ (docs/cuda.md).
    Interpreted,
    /// Compiled by the system C++ compiler against scopecheck's CUDA runtime and run; the
    /// device explored at each observation (docs/host.md).
    Native,
}

impl HostArg {
    /// The loading entry point's name for it.
    pub fn mode(self) -> scopecheck_frontend::HostMode {
        match self {
            HostArg::Interpreted => scopecheck_frontend::HostMode::Interpreted,
            HostArg::Native => scopecheck_frontend::HostMode::Native,
        }
    }
}

#[derive(Args, Clone, Debug)]
pub struct CheckFlags {
    /// How a `.cu` file's `main()` runs: `interpreted` (the subset scopecheck reads) or
    /// `native` (compiled with the system C++ compiler and run, forking once per device
    /// outcome the host can see; docs/host.md).
    #[arg(long, value_enum, default_value_t = HostArg::Interpreted)]
    pub host: HostArg,
    /// On the native host path: the most outcomes one observation of the device forks the
    /// host program into; more are cut, and the report says so.
    #[arg(long, value_name = "N", default_value_t = scopecheck_hostrun::session::DEFAULT_MAX_OUTCOMES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_outcomes: usize,
    /// The memory model to check against (default: the test's own: `ptx` for PTX tests, `src11`
    /// for C tests).
    #[arg(long, value_enum)]
    model: Option<Model>,
    /// How often one backward branch may be taken in one execution (await loops are explored
    /// by their exiting iteration and do not need it); 0 takes none, so a loop that would go
    /// round leaves the verdict incomplete.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_UNROLL)]
    unroll: u32,
    /// Forward-progress model across blocks, for finding hangs.
    #[arg(long, value_enum, default_value_t = ProgressArg::Obe)]
    progress: ProgressArg,
    /// Independent thread scheduling within a warp (`off` models pre-Volta lockstep).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    its: OnOff,
    /// How many blocks of one GPU are resident at once (default: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    resident_blocks: Option<u32>,
    /// A built-in platform profile: ideal (default), h200-pcie, gh200, arm-noncoherent.
    #[arg(long, value_name = "NAME", conflicts_with = "platform_file")]
    platform: Option<String>,
    /// A platform profile file (TOML, as `scopecheck caps --toml` writes it).
    #[arg(long, value_name = "FILE.toml")]
    platform_file: Option<std::path::PathBuf>,
    /// The most device threads the launches of a `.cu` file's harness may make together (what
    /// bounds the work is --max-shared-threads).
    #[arg(long, value_name = "N", default_value_t = scopecheck_cuda::DEFAULT_MAX_THREADS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_threads: usize,
    /// The most threads that may share a written location with another thread (threads that
    /// share none cost only their own steps): a kernel-only file's launch past it is checked
    /// smaller, and says so; a harness past it is refused.
    #[arg(long, value_name = "N", default_value_t = scopecheck_cuda::DEFAULT_MAX_SHARED_THREADS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_shared_threads: usize,
    /// For `.ptx` inputs (from `nvcc -ptx`, NVRTC or `cuobjdump`): the `.cu` file whose
    /// `main()` launches their kernels and checks the results (kernels declared there, e.g.
    /// `__global__ void k(int *data);`).
    #[arg(long, value_name = "FILE.cu")]
    harness: Option<std::path::PathBuf>,
    /// Stop the search of a test after N consistent executions (1e7 and 10000000 both read);
    /// the verdict is then Unknown unless the executions found settle it.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    max_executions: Option<u64>,
    /// Stop the search of a test after this long (`30s`, `500ms`, `2m`); the verdict is then
    /// Unknown unless the executions found settle it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<std::time::Duration>,
    /// Stop the search of a test when the process holds this much memory (`512M`, `4G`;
    /// default: half the machine's); the verdict is then Unknown unless the executions found
    /// settle it.
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_bytes)]
    max_memory: Option<u64>,
    /// Which explorer runs: `auto` (the graph explorer, or the candidate enumerator where it
    /// cannot vouch for its completeness), `graphs`, `candidates` (for differential testing).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto, hide = true)]
    engine: EngineArg,
    /// Explore interchangeable threads (same code, placements alike, not named by the
    /// condition) in one order only; `off` explores every order.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    symmetry: OnOff,
    #[command(flatten)]
    kernels: crate::kernel_flags::KernelFlags,
    #[command(flatten)]
    compile: crate::kernel_flags::CompileFlags,
    /// Explore relaxed RMWs of one commutative operation (add, and, or, xor, min, max) whose
    /// results nobody reads in one coherence order, counting the executions it stands for;
    /// `off` explores every order (docs/explore.md, "Commuting atomics").
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    commute: OnOff,
    /// The largest file read (`--max-file-size`, which `crate::inputs::InputFlags` reads):
    /// carried here, beside the paths of the harness and the platform file it bounds, so that
    /// whatever reads a file has it. Not an option a file may set, nor one of these flags'
    /// own: a file's option comments leave the command line's.
    #[arg(skip = scopecheck_frontend::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Auto,
    Graphs,
    Candidates,
    Holes,
}

/// A count written as an integer or in scientific notation (`1e7`).
fn parse_count(s: &str) -> Result<u64, String> {
    // Zero would stop every search before it starts: surely a mistake.
    match s.parse::<u64>() {
        Ok(0) => return Err(format!("`{s}`: the count must be more than zero")),
        Ok(n) => return Ok(n),
        Err(_) => {}
    }
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 1.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
            Ok(f as u64)
        }
        _ => Err(format!(
            "`{s}` is not a positive whole number (e.g. 1000000 or 1e6)"
        )),
    }
}

/// `10s`, `500ms`, `2m`, or a plain number of seconds.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 10s, 500ms, 2m)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("unknown unit `{unit}` (use ms, s, m or h)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{s}` is not a duration"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// A `--timeout`: a duration as `run --time` reads it (`30s`, `500ms`, `2m`), more than zero.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err(format!("`{s}` is not a positive duration")),
        d => Ok(d),
    }
}

/// Reads a platform profile: a `[platform]` table with `name` and the capabilities
/// `host_native_atomics`, `concurrent_managed_access`, `pageable_memory_access` (booleans or
/// 0/1), and optionally `coherent_host_memory` (default true, as on x86). Other keys, such as the
/// rest of what `scopecheck caps --toml` writes, are ignored.
pub fn platform_from_toml(text: &str, file: &str) -> Result<Platform, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e| format!("{file}: not a TOML file: {e}"))?;
    let table = match value.get("platform") {
        Some(toml::Value::Table(t)) => t,
        Some(_) => return Err(format!("{file}: `platform` must be a table")),
        None => &value,
    };
    let flag = |key: &str, default: Option<bool>| -> Result<bool, String> {
        match table.get(key) {
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(toml::Value::Integer(0)) => Ok(false),
            Some(toml::Value::Integer(1)) => Ok(true),
            Some(other) => Err(format!(
                "{file}: `{key}` must be true/false or 0/1, not {other}"
            )),
            None => default.ok_or_else(|| format!("{file}: the platform table has no `{key}`")),
        }
    };
    let name = match table.get("name") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{file}: `name` must be a string")),
        None => file.to_string(),
    };
    Ok(Platform {
        name,
        host_native_atomics: flag("host_native_atomics", None)?,
        concurrent_managed_access: flag("concurrent_managed_access", None)?,
        pageable_memory_access: flag("pageable_memory_access", None)?,
        coherent_host_memory: flag("coherent_host_memory", Some(true))?,
    })
}

impl CheckFlags {
    /// The models to check against, in order: one, or with `--model both` the language's
    /// (scoped C11) then the hardware's (PTX).
    pub fn models(&self) -> Vec<Option<ModelKind>> {
        match self.model {
            None => vec![None],
            Some(Model::Ptx) => vec![Some(ModelKind::Ptx)],
            Some(Model::Src11) => vec![Some(ModelKind::Src11)],
            Some(Model::Both) => vec![Some(ModelKind::Src11), Some(ModelKind::Ptx)],
        }
    }

    /// Whether a platform was asked for (`--platform`, `--platform-file`); `run` otherwise
    /// assumes the running GPU's.
    pub fn platform_given(&self) -> bool {
        self.platform.is_some() || self.platform_file.is_some()
    }

    /// The platform asked for, or why it cannot be had.
    pub fn platform(&self) -> Result<Platform, String> {
        if let Some(file) = &self.platform_file {
            let shown = file.display().to_string();
            let text = scopecheck_frontend::read_text(file, self.max_file_size)?;
            return platform_from_toml(&text, &shown);
        }
        match &self.platform {
            None => Ok(Platform::ideal()),
            Some(name) => Platform::builtin(name).ok_or_else(|| {
                format!(
                    "unknown platform `{name}`; expected one of {}",
                    Platform::BUILTIN.join(", ")
                )
            }),
        }
    }

    /// The options of the CUDA source front-end.
    pub fn cuda_options(&self) -> scopecheck_cuda::CudaOptions {
        scopecheck_cuda::CudaOptions {
            max_threads: self.max_threads,
            max_shared_threads: self.max_shared_threads,
            harness: self.harness.clone(),
            launch: self.kernels.launch_options(),
            compile: self.compile.compile_options(),
            ..Default::default()
        }
    }

    /// The options for the first model of `models()`.
    pub fn check_options(&self) -> CheckOptions {
        let progress = match self.progress {
            ProgressArg::Fair => Progress::Fair,
            ProgressArg::Obe => Progress::Obe,
            ProgressArg::Hsa => Progress::Hsa,
            ProgressArg::Lobe => Progress::Lobe,
            ProgressArg::Unfair => Progress::Unfair,
        };
        CheckOptions {
            model: self.models()[0],
            unroll: self.unroll,
            scheduler: Scheduler {
                progress,
                its: self.its == OnOff::On,
                resident_blocks: self.resident_blocks,
            },
            // Checked by the subcommands before they start (`platform()`).
            platform: self.platform().unwrap_or_else(|_| Platform::ideal()),
            engine: match self.engine {
                EngineArg::Auto => Engine::Auto,
                EngineArg::Graphs => Engine::Graphs,
                EngineArg::Candidates => Engine::Candidates,
                EngineArg::Holes => Engine::Holes,
            },
            max_executions: self.max_executions,
            timeout: self.timeout,
            deadline: None,
            memory: self
                .max_memory
                .or_else(crate::memory::default_limit)
                .map(|limit| scopecheck_explore::MemoryBound {
                    limit,
                    used: crate::memory::held,
                }),
            progress: None,
            symmetry: self.symmetry == OnOff::On,
            commute: self.commute == OnOff::On,
            graphs: false,
            state_witnesses: false,
        }
    }
}

/// The checking options a litmus file may set for itself in `(* options: ... *)`, by clap id:
/// those that say how to check this test. The others concern the run (`--json`, `--suggest`),
/// other inputs (`--harness`, `--max-threads`), files of their own (`--platform-file`) or
/// testing scopecheck (`--engine`), and are refused in a file.
pub const FILE_OPTIONS: &[&str] = &[
    "model",
    "unroll",
    "progress",
    "its",
    "resident_blocks",
    "platform",
    "max_executions",
    "timeout",
    "symmetry",
];

/// The check subcommand's ids of the options given on the command line itself (not defaulted),
/// among those a file may set, with `platform_file` (which overrides a file's `--platform`).
pub fn given_on_command_line(m: &ArgMatches) -> Vec<String> {
    FILE_OPTIONS
        .iter()
        .chain(&["platform_file"])
        .filter(|id| m.value_source(id) == Some(ValueSource::CommandLine))
        .map(|id| id.to_string())
        .collect()
}

/// The file options as clap reads them: the command line's definitions, nothing else.
#[derive(Parser)]
#[command(
    name = "options:",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
struct FileFlags {
    #[command(flatten)]
    flags: CheckFlags,
}

/// What a file's option comments did: the options applied, and those the command line
/// overrode, each as written (`--unroll 3`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOptions {
    pub applied: Vec<String>,
    pub overridden: Vec<String>,
}

/// The clap id of a long option name (`resident-blocks` -> `resident_blocks`).
fn option_id(word: &str) -> Option<String> {
    let name = word.strip_prefix("--")?;
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    Some(name.replace('-', "_"))
}

fn at(w: &OptionWord, message: String) -> Diagnostic {
    Diagnostic::error(message).at(w.span)
}

impl CheckFlags {
    /// These flags (the command line's) with a file's option words applied. The rule: a file
    /// option replaces the default, and an option given on the command line (`cli_given`, by
    /// id) wins over the file's. An option a file may not set, an unknown one or a bad value is
    /// an error at its word.
    pub fn with_file_options(
        &self,
        cli_given: &[String],
        words: &[OptionWord],
    ) -> Result<(CheckFlags, FileOptions), Diagnostic> {
        let mut groups: Vec<(String, String)> = Vec::new();
        for w in words {
            if w.word.starts_with('-') {
                let Some(id) = option_id(&w.word).filter(|_| w.word.len() > 2) else {
                    return Err(at(w, format!("unknown option `{}` in the file's options (options are long: `--unroll 3`)", w.word)));
                };
                if !FILE_OPTIONS.contains(&id.as_str()) {
                    let known = FileFlags::command()
                        .get_arguments()
                        .any(|a| a.get_id().as_str() == id)
                        || ["json", "suggest", "cost_file"].contains(&id.as_str());
                    let allowed: Vec<String> = FILE_OPTIONS
                        .iter()
                        .map(|o| format!("--{}", o.replace('_', "-")))
                        .collect();
                    return Err(at(
                        w,
                        if known {
                            format!(
                                "`{}` cannot be set by a file (it is not about how to check this test); a file may set {}",
                                w.word,
                                allowed.join(", ")
                            )
                        } else {
                            format!(
                                "unknown option `{}`; a file may set {}",
                                w.word,
                                allowed.join(", ")
                            )
                        },
                    ));
                }
                groups.push((id, w.word.clone()));
            } else if let Some((_, text)) = groups.last_mut() {
                text.push(' ');
                text.push_str(&w.word);
            }
        }
        let matches = FileFlags::command()
            .try_get_matches_from(words.iter().map(|w| w.word.as_str()))
            .map_err(|e| clap_error(&e, words))?;
        let file = FileFlags::from_arg_matches(&matches)
            .map_err(|e| clap_error(&e, words))?
            .flags;
        let cli = |id: &str| cli_given.iter().any(|g| g == id);
        let mut out = self.clone();
        let mut report = FileOptions::default();
        for (id, text) in groups {
            let overridden = cli(&id) || (id == "platform" && cli("platform_file"));
            if overridden {
                report.overridden.push(text);
                continue;
            }
            report.applied.push(text);
            match id.as_str() {
                "model" => out.model = file.model,
                "unroll" => out.unroll = file.unroll,
                "progress" => out.progress = file.progress,
                "its" => out.its = file.its,
                "resident_blocks" => out.resident_blocks = file.resident_blocks,
                "platform" => {
                    out.platform = file.platform.clone();
                    out.platform_file = None;
                }
                "max_executions" => out.max_executions = file.max_executions,
                "timeout" => out.timeout = file.timeout,
                _ => out.symmetry = file.symmetry,
            }
        }
        if let Err(e) = out.platform() {
            let w = words
                .iter()
                .find(|w| option_id(&w.word).as_deref() == Some("platform"))
                .or(words.first());
            return Err(Diagnostic::error(e).at(w.map_or_else(Span::default, |w| w.span)));
        }
        Ok((out, report))
    }
}

/// A clap error about a file's option words, at the word it is about.
fn clap_error(e: &clap::Error, words: &[OptionWord]) -> Diagnostic {
    use clap::error::{ContextKind, ContextValue};
    let text = e.to_string();
    let message = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    let context = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let word = context(ContextKind::InvalidValue)
        .and_then(|v| {
            words
                .iter()
                .find(|w| w.word == v || w.word.ends_with(&format!("={v}")))
        })
        .or_else(|| {
            let arg = context(ContextKind::InvalidArg)?;
            let name = arg.split([' ', '=']).next()?.to_string();
            words
                .iter()
                .find(|w| w.word == name || w.word.starts_with(&format!("{name}=")))
        });
    Diagnostic::error(format!("in the file's options: {message}")).at(word
        .or(words.first())
        .map_or_else(Span::default, |w| w.span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<OptionWord> {
        let mut col = 1;
        text.split(' ')
            .map(|w| {
                let span = Span {
                    offset: col - 1,
                    len: w.len(),
                    line: 1,
                    column: col as u32,
                };
                col += w.len() + 1;
                OptionWord {
                    word: w.to_string(),
                    span,
                }
            })
            .collect()
    }

    fn defaults() -> CheckFlags {
        FileFlags::try_parse_from(Vec::<&str>::new())
            .expect("no options parse")
            .flags
    }

    #[test]
    fn file_options_replace_defaults_and_the_command_line_wins() {
        let (f, r) = defaults()
            .with_file_options(&[], &words("--unroll 3 --progress=fair --its off"))
            .expect("valid options");
        assert_eq!((f.unroll, f.its), (3, OnOff::Off));
        assert!(matches!(f.progress, ProgressArg::Fair));
        assert_eq!(r.applied, ["--unroll 3", "--progress=fair", "--its off"]);
        assert!(r.overridden.is_empty());
        let mut cli = defaults();
        cli.unroll = 7;
        let (f, r) = cli
            .with_file_options(&["unroll".into()], &words("--unroll 3 --model ptx"))
            .expect("valid options");
        assert_eq!(f.unroll, 7);
        assert!(matches!(f.model, Some(Model::Ptx)));
        assert_eq!(
            (r.applied, r.overridden),
            (
                vec!["--model ptx".to_string()],
                vec!["--unroll 3".to_string()]
            )
        );
    }

    #[test]
    fn bad_file_options_are_errors_at_their_word() {
        let e = defaults()
            .with_file_options(&[], &words("--unroll 3 --harness h.cu"))
            .unwrap_err();
        assert_eq!(e.column(), 12);
        assert!(
            e.message.contains("cannot be set by a file"),
            "{}",
            e.message
        );
        let e = defaults()
            .with_file_options(&[], &words("--frobnicate"))
            .unwrap_err();
        assert!(
            e.message.contains("unknown option `--frobnicate`"),
            "{}",
            e.message
        );
        let e = defaults()
            .with_file_options(&[], &words("--unroll x"))
            .unwrap_err();
        assert_eq!(e.column(), 10, "{}", e.message);
        assert!(e.message.contains("invalid value"), "{}", e.message);
        let e = defaults()
            .with_file_options(&[], &words("--its maybe"))
            .unwrap_err();
        assert_eq!(e.column(), 7, "{}", e.message);
        let e = defaults()
            .with_file_options(&[], &words("--platform mars"))
            .unwrap_err();
        assert!(e.message.contains("unknown platform"), "{}", e.message);
        assert_eq!(e.column(), 1);
        let e = defaults()
            .with_file_options(&[], &words("--unroll 2 --unroll 3"))
            .unwrap_err();
        assert!(e.message.contains("multiple times"), "{}", e.message);
        let e = defaults()
            .with_file_options(&[], &words("--unroll 2 stray"))
            .unwrap_err();
        assert_eq!(e.column(), 12, "{}", e.message);
        let e = defaults()
            .with_file_options(&[], &words("-u 2"))
            .unwrap_err();
        assert!(e.message.contains("unknown option `-u`"), "{}", e.message);
    }

    #[test]
    fn counts_and_durations_parse_as_written() {
        assert_eq!(parse_count("1e7"), Ok(10_000_000));
        assert_eq!(parse_count("250"), Ok(250));
        assert!(parse_count("0.5").is_err() && parse_count("x").is_err());
        assert!(parse_count("0").is_err() && parse_count("0e3").is_err());
        assert_eq!(
            parse_duration("30s"),
            Ok(std::time::Duration::from_secs(30))
        );
        assert_eq!(
            parse_duration("500ms"),
            Ok(std::time::Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("2m"),
            Ok(std::time::Duration::from_secs(120))
        );
        assert!(parse_duration("3 weeks").is_err() && parse_duration("0s").is_err());
    }

    #[test]
    fn platform_files_take_caps_output_and_reject_bad_values() {
        let caps = "[platform]\nname = \"NVIDIA H200\"\ncompute_capability = \"9.0\"\nhost_native_atomics = false\nconcurrent_managed_access = true\npageable_memory_access = 0\n\n[scopes]\ncta = \"x\"\n";
        let p = platform_from_toml(caps, "h200.toml").expect("caps output is a profile");
        assert_eq!(p.name, "NVIDIA H200");
        assert!(!p.host_native_atomics && p.concurrent_managed_access && !p.pageable_memory_access);
        assert!(p.coherent_host_memory, "coherence defaults to x86's");
        let bad = "[platform]\nhost_native_atomics = 2\n";
        let e = platform_from_toml(bad, "bad.toml").unwrap_err();
        assert!(e.contains("host_native_atomics"), "{e}");
        let missing = "[platform]\nname = \"x\"\n";
        assert!(platform_from_toml(missing, "m.toml")
            .unwrap_err()
            .contains("no `host_native_atomics`"));
    }
}
