//! The cost table suggestions are priced with: a `scopecheck cost --toml` file, by default the
//! one measured on our H200 (docs/hardware/h200-cost.toml), built into the binary.

use scopecheck_model::suggest::CostTable;

/// The H200's measured costs.
const H200: &str = include_str!("../../../docs/hardware/h200-cost.toml");

/// Reads the device-memory latencies of a cost file (`[latency_cycles.device]`).
pub fn parse(text: &str, file: &str) -> Result<CostTable, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e| format!("{file}: not a TOML file: {e}"))?;
    let device = value
        .get("latency_cycles")
        .and_then(|l| l.get("device"))
        .and_then(|d| d.as_table())
        .ok_or_else(|| format!("{file}: no [latency_cycles.device] table"))?;
    let mut cycles = Vec::new();
    for (k, v) in device {
        let c = v
            .as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| format!("{file}: `{k}` is not a number of cycles"))?;
        cycles.push((k.clone(), c));
    }
    Ok(CostTable { cycles })
}

/// The table `--cost-file` names (read if at most `max_file_size` bytes), or the built-in
/// H200 one.
pub fn load(file: Option<&std::path::Path>, max_file_size: u64) -> Result<CostTable, String> {
    match file {
        Some(f) => {
            let shown = f.display().to_string();
            let text = scopecheck_frontend::read_text(f, max_file_size)?;
            parse(&text, &shown)
        }
        None => parse(H200, "docs/hardware/h200-cost.toml"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_is_the_h200_measurement() {
        let t = load(None, scopecheck_frontend::DEFAULT_MAX_FILE_SIZE)
            .expect("the shipped cost file parses");
        let get = |k: &str| t.cycles.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        // A .gpu release costs hundreds of cycles more than a .cta one on the H200.
        assert!(get("st.release.gpu").unwrap_or(0.0) > get("st.release.cta").unwrap_or(f64::MAX));
        assert!(parse("x = 1", "bad.toml")
            .unwrap_err()
            .contains("latency_cycles"));
    }
}
