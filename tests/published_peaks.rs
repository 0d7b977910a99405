//! The estimator against peak GPU memory figures that training frameworks publish with the exact
//! setup they were measured with (tests/data/published_peaks.toml: LitGPT, torchtune, the
//! transformers single-GPU guide, the PEFT DeepSpeed/FSDP guides). Runs `hwlint estimate` on each,
//! prints published vs estimated, and holds every figure to the tolerance the TOML states for it.
//! Figures whose setup hwlint reads exactly hold `EXACT_TOLERANCE` each and `MEDIAN_BOUND` at the
//! median; figures only roughly expressible (`rough = "why"`) are a tier of their own, reported
//! with the side they err on, up to `MAX_TOLERANCE`.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

/// The median |error| over the exactly expressible figures may not exceed this.
const MEDIAN_BOUND: f64 = 0.05;
/// No exactly expressible figure may be further off than this.
const EXACT_TOLERANCE: f64 = 0.10;
/// No figure may claim a tolerance above this: a figure that needs more is not a check.
const MAX_TOLERANCE: f64 = 0.40;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[derive(Deserialize)]
struct File {
    figure: Vec<Figure>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Figure {
    name: String,
    source: String,
    measures: String,
    gpu: String,
    published: String,
    published_gib: f64,
    #[serde(default)]
    context_gib: f64,
    /// A training config the setup is read from (relative to the repository), flags over it.
    config: Option<String>,
    #[serde(default)]
    model: String,
    batch_size: u64,
    seq_len: u64,
    #[serde(default)]
    precision: String,
    #[serde(default)]
    optimizer: String,
    #[serde(default)]
    checkpointing: String,
    grad_accum: Option<u64>,
    attention: Option<String>,
    lora_r: Option<u64>,
    #[serde(default)]
    lora_targets: Vec<String>,
    #[serde(default)]
    load_in_4bit: bool,
    /// The bitsandbytes release the figure was measured with (`--bitsandbytes`): a 4-bit base
    /// keeps each matmul's input before 0.43.2.
    bitsandbytes: Option<String>,
    zero: Option<u8>,
    gpus: Option<u64>,
    #[serde(default)]
    offload_params: bool,
    tolerance: f64,
    /// Why the setup is only roughly expressible; absent for an exact figure.
    rough: Option<String>,
    notes: String,
    skip: Option<String>,
}

impl Figure {
    fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = vec!["estimate".into()];
        if let Some(c) = &self.config {
            a.push(c.clone());
        }
        for (flag, value) in [
            ("--model", &self.model),
            ("--precision", &self.precision),
            ("--optimizer", &self.optimizer),
            ("--checkpointing", &self.checkpointing),
        ] {
            if !value.is_empty() {
                a.extend([flag.to_string(), value.clone()]);
            }
        }
        a.extend([
            "--batch-size".to_string(),
            self.batch_size.to_string(),
            "--seq-len".to_string(),
            self.seq_len.to_string(),
            "--output-format".to_string(),
            "json".to_string(),
        ]);
        if let Some(g) = self.grad_accum {
            a.extend(["--grad-accum".into(), g.to_string()]);
        }
        if let Some(att) = &self.attention {
            a.extend(["--attention".into(), att.clone()]);
        }
        if let Some(r) = self.lora_r {
            a.extend(["--lora-r".into(), r.to_string()]);
            if !self.lora_targets.is_empty() {
                a.extend(["--lora-targets".into(), self.lora_targets.join(",")]);
            }
        }
        if self.load_in_4bit {
            a.push("--load-in-4bit".into());
        }
        if let Some(v) = &self.bitsandbytes {
            a.extend(["--bitsandbytes".into(), v.clone()]);
        }
        if let Some(z) = self.zero {
            a.extend(["--zero".into(), z.to_string()]);
        }
        if let Some(g) = self.gpus {
            a.extend(["--gpus".into(), g.to_string()]);
        }
        if self.offload_params {
            a.push("--offload-params".into());
        }
        a
    }

    /// The estimate in GiB of the quantity the figure measures.
    fn estimate_gib(&self) -> f64 {
        let root = env!("CARGO_MANIFEST_DIR");
        let out = Command::new(env!("CARGO_BIN_EXE_hwlint"))
            .current_dir(root)
            .args(self.args())
            .output()
            .expect("run hwlint");
        assert!(
            out.status.success(),
            "{}: hwlint {:?} failed: {}",
            self.name,
            self.args(),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: estimate JSON: {e}", self.name));
        let bytes = |k: &str| {
            v[k].as_f64()
                .unwrap_or_else(|| panic!("{}: no `{k}` in the estimate JSON", self.name))
        };
        match self.measures.as_str() {
            "max_memory_allocated" => bytes("peak_allocated_bytes") / GIB,
            "max_memory_reserved" => bytes("need_bytes") / GIB,
            "nvidia-smi" => bytes("need_bytes") / GIB + self.context_gib,
            other => panic!("{}: unknown measure {other}", self.name),
        }
    }
}

fn figures() -> Vec<Figure> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/published_peaks.toml");
    let text = std::fs::read_to_string(&p).expect("read published_peaks.toml");
    toml::from_str::<File>(&text)
        .expect("parse published_peaks.toml")
        .figure
}

#[test]
fn every_figure_is_documented_and_bounded() {
    let figs = figures();
    let mut names = std::collections::HashSet::new();
    for f in &figs {
        assert!(names.insert(&f.name), "duplicate figure {}", f.name);
        assert!(
            !f.source.is_empty() && !f.gpu.is_empty() && !f.published.is_empty(),
            "{}: source, gpu and published are required",
            f.name
        );
        assert!(
            !f.notes.trim().is_empty(),
            "{}: notes must say why the tolerance",
            f.name
        );
        let limit = if f.rough.is_some() {
            MAX_TOLERANCE
        } else {
            EXACT_TOLERANCE
        };
        assert!(
            f.tolerance > 0.0 && f.tolerance <= limit,
            "{}: tolerance {} outside (0, {limit}] for its tier",
            f.name,
            f.tolerance
        );
        assert!(
            f.rough.as_deref().is_none_or(|r| !r.trim().is_empty()),
            "{}: an empty rough reason",
            f.name
        );
        assert!(f.published_gib > 0.0, "{}: published_gib", f.name);
        assert!(
            f.context_gib == 0.0 || f.measures == "nvidia-smi",
            "{}: context_gib only applies to nvidia-smi readings",
            f.name
        );
        assert!(
            f.skip.as_deref().is_none_or(|s| !s.trim().is_empty()),
            "{}: an empty skip reason",
            f.name
        );
        // What a 4-bit base keeps depends on the bitsandbytes release: a compared 4-bit
        // figure says which one it was measured with.
        assert!(
            !f.load_in_4bit || f.skip.is_some() || f.bitsandbytes.is_some(),
            "{}: a 4-bit figure names its bitsandbytes release",
            f.name
        );
    }
}

#[test]
fn published_peaks_within_tolerance() {
    let figs = figures();
    println!(
        "{:<42} {:<20} {:>10} {:>10} {:>8} {:>6}  status",
        "figure", "measures", "published", "estimate", "error", "tol"
    );
    let mut errors = Vec::new();
    let mut rough = Vec::new();
    let mut failures = Vec::new();
    for f in &figs {
        if let Some(why) = &f.skip {
            println!(
                "{:<42} {:<20} {:>10.2} {:>10} {:>8} {:>6.2}  SKIPPED: {why}",
                f.name, f.measures, f.published_gib, "-", "-", f.tolerance
            );
            continue;
        }
        let est = f.estimate_gib();
        let err = (est - f.published_gib) / f.published_gib;
        let ok = err.abs() <= f.tolerance;
        println!(
            "{:<42} {:<20} {:>10.2} {:>10.2} {:>7.1}% {:>6.2}  {}{}",
            f.name,
            f.measures,
            f.published_gib,
            est,
            100.0 * err,
            f.tolerance,
            if ok { "ok" } else { "OUT OF TOLERANCE" },
            match (&f.rough, err < 0.0) {
                (Some(_), true) => " (rough tier, UNDER: the side that runs out of memory)",
                (Some(_), false) => " (rough tier, over)",
                (None, _) => "",
            }
        );
        if f.rough.is_some() {
            rough.push(err);
        } else {
            errors.push(err.abs());
        }
        if !ok {
            failures.push(format!(
                "{}: estimate {est:.2} GiB vs published {:.2} GiB ({:+.1}%, tolerance {:.0}%)",
                f.name,
                f.published_gib,
                100.0 * err,
                100.0 * f.tolerance
            ));
        }
    }
    assert!(!errors.is_empty(), "no figure was compared");
    errors.sort_by(f64::total_cmp);
    let n = errors.len();
    let median = if n % 2 == 1 {
        errors[n / 2]
    } else {
        (errors[n / 2 - 1] + errors[n / 2]) / 2.0
    };
    let skipped = figs.len() - n - rough.len();
    println!(
        "exact tier: {n} compared; median |error| {:.1}% (bound {:.0}%), max {:.1}% (bound {:.0}%)",
        100.0 * median,
        100.0 * MEDIAN_BOUND,
        100.0 * errors[n - 1],
        100.0 * EXACT_TOLERANCE
    );
    let under = rough.iter().filter(|e| **e < 0.0).count();
    println!(
        "rough tier: {} compared, {under} under (the dangerous side), {} over; {skipped} skipped",
        rough.len(),
        rough.len() - under
    );
    assert!(
        failures.is_empty(),
        "figures out of tolerance:\n{}",
        failures.join("\n")
    );
    assert!(
        median <= MEDIAN_BOUND,
        "median |error| {:.1}% above {:.0}%",
        100.0 * median,
        100.0 * MEDIAN_BOUND
    );
}
