//! The estimator against the training steps measured on an H100 (../shared/calibration: 74
//! measured steps, 73 of them in the accuracy figures; see `CASE_ROWS`). Without ../shared the
//! tests skip with a `SKIPPED` line, or fail when `HWLINT_REQUIRE_SHARED` is set (CI sets it).
//! Prints per-row and per-family error of the peak allocated memory.

use hwlint::estimate::memory::{estimate, Checkpointing, MemoryEstimate, Plan, Precision};
use hwlint::estimate::models::from_hf_config;
use hwlint::estimate::params;
use hwlint::estimate::verdict::{need_bytes, need_with, usable_bytes};
use hwlint::hardware::Allocator;

#[path = "support/shared.rs"]
mod shared;

/// The measured steps in h100-peak-memory.jsonl: one `"kind": "case"` line per step, after the
/// `"kind": "env"` line (../shared/calibration/README.md). A file with more or fewer means the
/// data changed under the test: update this number together with the figures below.
const CASE_ROWS: usize = 74;
/// The rows in the accuracy figures: every case but the one `excluded` (a harness build
/// artifact the README says to leave out).
const ACCURACY_ROWS: usize = CASE_ROWS - 1;
/// Bounds on the |error| of the peak allocated memory over the `ACCURACY_ROWS` rows. Measured
/// when they were set: median 0.88%, worst 7.62% (a few percent of room, not 3x): a change to
/// the estimator that loses accuracy on these rows fails here.
const MEDIAN_BOUND: f64 = 0.015;
const WORST_BOUND: f64 = 0.08;

/// Its peak is set by how the harness built the model (fp32 then cast), not by training: see
/// the calibration README.
fn excluded(row: &serde_json::Value) -> bool {
    row["name"] == "tinyllama-1.1b-lora16" && row["checkpointing"] == true && row["batch_size"] == 1
}

/// Why a case row cannot be used, or `None` when every field `plan` and the tests read is
/// there with the right type.
fn invalid_case(row: &serde_json::Value) -> Option<String> {
    let is_u64 = |k: &str| row[k].as_u64().is_some();
    let is_num = |k: &str| row[k].as_f64().is_some_and(|x| x.is_finite() && x > 0.0);
    if !row["name"].is_string() {
        return Some("`name` is not a string".into());
    }
    if !row["model"].is_object() {
        return Some("`model` is not an object".into());
    }
    if let Err(e) = from_hf_config("calibration", &row["model"]) {
        return Some(format!("`model` is not an architecture hwlint reads: {e}"));
    }
    match row["precision"].as_str() {
        Some("fp32" | "amp_bf16" | "bf16") => {}
        other => {
            return Some(format!(
                "`precision` {other:?} is not fp32, amp_bf16 or bf16"
            ))
        }
    }
    if !row["checkpointing"].is_boolean() {
        return Some("`checkpointing` is not a boolean".into());
    }
    if !(row["seq_len"].is_null() || is_u64("seq_len")) {
        return Some("`seq_len` is neither null nor a count".into());
    }
    let lora = &row["lora"];
    if !(lora.is_null()
        || (lora["r"].as_u64().is_some()
            && lora["target_modules"]
                .as_array()
                .is_some_and(|a| a.iter().all(|t| t.is_string()))))
    {
        return Some("`lora` is neither null nor {r, target_modules}".into());
    }
    for k in ["batch_size", "params", "trainable_params"] {
        if !is_u64(k) {
            return Some(format!("`{k}` is not a count"));
        }
    }
    for k in ["peak_allocated", "peak_reserved", "step_s"] {
        if !is_num(k) {
            return Some(format!("`{k}` is not a positive number"));
        }
    }
    if row["status"] != "ok" {
        return Some(format!("`status` is {}, not \"ok\"", row["status"]));
    }
    None
}

/// The case rows of the calibration file, `None` when ../shared/calibration is absent (and
/// `HWLINT_REQUIRE_SHARED` is not set). Every line must be a JSON object of a known kind and
/// every case row must be complete: a line that is not fails with its file:line and the
/// reason, and so does a count other than `CASE_ROWS`.
fn rows() -> Option<Vec<serde_json::Value>> {
    let p = shared::shared_path("calibration")?.join("h100-peak-memory.jsonl");
    let text =
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: cannot read: {e}", p.display()));
    let mut cases = Vec::new();
    let mut envs = 0;
    for (i, line) in text.lines().enumerate() {
        let at = format!("{}:{}", p.display(), i + 1);
        let row: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{at}: not a JSON value: {e}"));
        match row["kind"].as_str() {
            Some("env") => envs += 1,
            Some("case") => {
                if let Some(why) = invalid_case(&row) {
                    panic!("{at}: {why}");
                }
                cases.push(row);
            }
            other => panic!("{at}: `kind` is {other:?}, not \"env\" or \"case\""),
        }
    }
    assert_eq!(envs, 1, "{}: {envs} `env` lines, expected 1", p.display());
    assert_eq!(
        cases.len(),
        CASE_ROWS,
        "{}: {} case rows, expected {CASE_ROWS} (calibration/README.md)",
        p.display(),
        cases.len()
    );
    assert_eq!(
        cases.iter().filter(|r| !excluded(r)).count(),
        ACCURACY_ROWS,
        "{}: the excluded row is not exactly one row",
        p.display()
    );
    Some(cases)
}

fn plan(row: &serde_json::Value) -> Plan {
    let arch = from_hf_config("calibration", &row["model"]).unwrap();
    let lora = row["lora"].as_object().map(|l| {
        (
            l["r"].as_u64().unwrap(),
            l["target_modules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect(),
        )
    });
    Plan {
        batch: row["batch_size"].as_u64().unwrap(),
        seq_len: row["seq_len"].as_u64().unwrap_or(0),
        image_size: 224,
        precision: match row["precision"].as_str().unwrap() {
            "fp32" => Precision::Fp32,
            "amp_bf16" => Precision::Bf16Mixed,
            "bf16" => Precision::Bf16True,
            other => panic!("precision {other}"),
        },
        checkpointing: if row["checkpointing"] == true {
            Checkpointing::Full
        } else {
            Checkpointing::None
        },
        lora,
        ..Plan::new(row["name"].as_str().unwrap().to_string(), arch)
    }
}

#[test]
fn parameter_counts_match_every_row() {
    let Some(rows) = rows() else {
        return;
    };
    for row in &rows {
        let p = plan(row);
        let est = estimate(&p);
        let want = row["params"].as_u64().unwrap() as f64;
        let got = params::count(&p.arch).total as f64;
        assert!(
            (got - want).abs() / want < 0.01,
            "{}: {got} vs {want}",
            p.model
        );
        let want_t = row["trainable_params"].as_u64().unwrap() as f64;
        let got_t = est.trainable_params as f64;
        assert!(
            (got_t - want_t).abs() / want_t < 0.01,
            "{}: trainable {got_t} vs {want_t}",
            p.model
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn peak_allocated_within_bounds() {
    let Some(rows) = rows() else {
        return;
    };
    let mut all = Vec::new();
    let mut families: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for row in &rows {
        let p = plan(row);
        let est = estimate(&p);
        let want = row["peak_allocated"].as_f64().unwrap();
        let err = (est.peak_bytes - want) / want;
        let skip = excluded(row);
        eprintln!(
            "{:<22} {:<9} ck={} b={:<3} measured {:>7.3} GiB  estimated {:>7.3} GiB  {:>+6.1}%  ({}){}",
            p.model,
            row["precision"].as_str().unwrap(),
            u8::from(row["checkpointing"] == true),
            p.batch,
            want / (1u64 << 30) as f64,
            est.peak_bytes / (1u64 << 30) as f64,
            err * 100.0,
            est.peak_at,
            if skip { "  [excluded: harness build artifact]" } else { "" }
        );
        if skip {
            continue;
        }
        all.push(err.abs());
        families
            .entry(format!(
                "{} {}",
                p.model,
                row["precision"].as_str().unwrap()
            ))
            .or_default()
            .push(err.abs());
    }
    for (f, errs) in &mut families {
        let worst = errs.iter().copied().fold(0.0, f64::max);
        eprintln!(
            "{f:<32} median {:>5.1}%  worst {:>5.1}%",
            median(errs) * 100.0,
            worst * 100.0
        );
    }
    let worst = all.iter().copied().fold(0.0, f64::max);
    let med = median(&mut all);
    eprintln!(
        "all {} rows: median {:.2}%, worst {:.2}%",
        all.len(),
        med * 100.0,
        worst * 100.0
    );
    assert_eq!(all.len(), ACCURACY_ROWS, "rows in the accuracy figures");
    assert!(
        med <= MEDIAN_BOUND,
        "median error {:.2}% > {:.1}%",
        med * 100.0,
        MEDIAN_BOUND * 100.0
    );
    assert!(
        worst <= WORST_BOUND,
        "worst error {:.2}% > {:.1}%",
        worst * 100.0,
        WORST_BOUND * 100.0
    );
}

/// The cards the verdict test holds each measured step against: their usable memory cuts
/// through the measured range (0.8 to 62 GiB reserved).
const CARDS: [&str; 4] = ["t4", "rtx-4090", "v100-32gb", "a100-40gb"];

struct Case {
    family: String,
    label: String,
    est: MemoryEstimate,
    reserved: f64,
    checkpointed: bool,
}

fn cases(rows: &[serde_json::Value]) -> Vec<Case> {
    rows.iter()
        .filter(|r| !excluded(r))
        .map(|r| {
            let p = plan(r);
            let name = r["name"].as_str().unwrap();
            Case {
                family: name.split('-').next().unwrap().to_string(),
                label: format!(
                    "{name} {} ck={} b={}",
                    r["precision"].as_str().unwrap(),
                    u8::from(r["checkpointing"] == true),
                    p.batch
                ),
                est: estimate(&p),
                reserved: r["peak_reserved"].as_f64().unwrap(),
                checkpointed: r["checkpointing"] == true,
            }
        })
        .collect()
}

/// (right verdicts, measured OOMs called "fits") over the cases on every card, for a need
/// function.
fn score(cases: &[&Case], need: impl Fn(&MemoryEstimate) -> f64) -> (usize, usize) {
    let gpus = hwlint::hardware::catalog();
    let (mut right, mut oom_called_fits) = (0, 0);
    for card in CARDS {
        let usable = usable_bytes(gpus.gpu(card).unwrap(), None);
        for c in cases {
            let (measured, predicted) = (c.reserved <= usable, need(&c.est) <= usable);
            right += usize::from(measured == predicted);
            oom_called_fits += usize::from(!measured && predicted);
        }
    }
    (right, oom_called_fits)
}

/// The allocator constants that call no measured OOM "fits", get the most verdicts right, and
/// then sit closest to the measured reserved memory (mean relative error, an underestimate
/// weighing three times an overestimate). Grid search over the overhead and the optimizer
/// step's share (one for every run: reusing freed blocks does not depend on how they were
/// freed); the forward/backward share is fitted separately with and without checkpointing.
fn fit(cases: &[&Case]) -> Allocator {
    type Key = (usize, usize, f64);
    let better =
        |x: &Key, y: &Key| (x.0, x.1) < (y.0, y.1) || ((x.0, x.1) == (y.0, y.1) && x.2 < y.2);
    let grid = |i: i32| f64::from(i) * 0.025;
    let mut best: Option<(Key, Allocator)> = None;
    for ci in 0..=16 {
        let c = f64::from(ci) * 64.0 * 1024.0 * 1024.0;
        for bi in 0..=48 {
            let b = grid(bi);
            let pick = |ckpt: bool| -> (Key, f64) {
                let rows: Vec<&Case> = cases
                    .iter()
                    .copied()
                    .filter(|x| x.checkpointed == ckpt)
                    .collect();
                let mut local: Option<(Key, f64)> = None;
                for ai in 0..=48 {
                    let a = grid(ai);
                    let al = Allocator {
                        transient: a,
                        transient_checkpointed: a,
                        step_transient: b,
                        overhead_bytes: c,
                    };
                    let (right, bad) = score(&rows, |e| need_with(e, &al));
                    let err: f64 = rows
                        .iter()
                        .map(|x| {
                            // An underestimate can call an OOM "fits": it costs three times more.
                            let rel = need_with(&x.est, &al) / x.reserved - 1.0;
                            if rel < 0.0 {
                                -3.0 * rel
                            } else {
                                rel
                            }
                        })
                        .sum();
                    let key = (bad, usize::MAX / 2 - right, err);
                    if local.as_ref().is_none_or(|(k, _)| better(&key, k)) {
                        local = Some((key, a));
                    }
                }
                local.unwrap()
            };
            let (k0, a0) = pick(false);
            let (k1, a1) = pick(true);
            let key = (k0.0 + k1.0, k0.1 + k1.1, k0.2 + k1.2);
            let al = Allocator {
                transient: a0,
                transient_checkpointed: a1,
                step_transient: b,
                overhead_bytes: c,
            };
            if best.as_ref().is_none_or(|(k, _)| better(&key, k)) {
                best = Some((key, al));
            }
        }
    }
    best.unwrap().1
}

/// The allocator model fitted on the calibration rows: the constants in rules/hardware.toml are
/// the fit; cross-validated by leaving each model family out; no measured OOM called "fits".
#[test]
fn allocator_verdicts_cross_validated_by_family() {
    let Some(rows) = rows() else {
        return;
    };
    let cases = cases(&rows);
    let all: Vec<&Case> = cases.iter().collect();
    let total = all.len() * CARDS.len();
    let fitted = fit(&all);
    let committed = hwlint::hardware::catalog().allocator;
    eprintln!("fit on all rows: {fitted:?}");
    assert!(
        (fitted.transient - committed.transient).abs() < 1e-9
            && (fitted.step_transient - committed.step_transient).abs() < 1e-9
            && (fitted.transient_checkpointed - committed.transient_checkpointed).abs() < 1e-9
            && (fitted.overhead_bytes - committed.overhead_bytes).abs() < 1.0,
        "rules/hardware.toml [allocator] {committed:?} is not the fit {fitted:?}"
    );
    for c in &all {
        eprintln!(
            "  {:<42} reserved {:>6.2}  need {:>6.2} ({:+5.1}%)  fb {:>6.2} T {:>6.2} step {:>6.2}",
            c.label,
            c.reserved / GIB,
            need_bytes(&c.est) / GIB,
            (need_bytes(&c.est) / c.reserved - 1.0) * 100.0,
            c.est.fwd_bwd_bytes / GIB,
            c.est.fwd_bwd_transient_bytes / GIB,
            c.est.step_bytes / GIB
        );
    }
    let (right, bad) = score(&all, need_bytes);
    eprintln!("in-sample: {right} of {total} verdicts right, {bad} measured OOMs called fits");
    // The flat factor this replaced: peak allocated x 1.21 (x 1.35 with checkpointing).
    let flat = |c: &Case| -> f64 {
        let ckpt = c.label.contains("ck=1");
        c.est.peak_bytes * if ckpt { 1.35 } else { 1.21 }
    };
    let gpus = hwlint::hardware::catalog();
    let mut flat_right = 0;
    for card in CARDS {
        let usable = usable_bytes(gpus.gpu(card).unwrap(), None);
        flat_right += all
            .iter()
            .filter(|c| (c.reserved <= usable) == (flat(c) <= usable))
            .count();
    }
    eprintln!("flat x1.21/x1.35 factor: {flat_right} of {total} right");

    let mut families: Vec<&str> = cases.iter().map(|c| c.family.as_str()).collect();
    families.sort();
    families.dedup();
    let (mut cv_right, mut cv_bad) = (0, 0);
    for fam in &families {
        let (held, train): (Vec<&Case>, Vec<&Case>) = all.iter().partition(|c| c.family == *fam);
        let a = fit(&train);
        let (r, b) = score(&held, |e| need_with(e, &a));
        eprintln!(
            "leave {fam} out: {a:?}; {r} of {} right, {b} OOM called fits",
            held.len() * CARDS.len()
        );
        for c in &held {
            let n = need_with(&c.est, &a);
            if (n / c.reserved - 1.0).abs() > 0.15 {
                eprintln!(
                    "    {:<40} reserved {:>6.2} GiB, need {:>6.2} GiB ({:+.0}%)",
                    c.label,
                    c.reserved / GIB,
                    n / GIB,
                    (n / c.reserved - 1.0) * 100.0
                );
            }
        }
        cv_right += r;
        cv_bad += b;
    }
    eprintln!("cross-validated (leave one family out): {cv_right} of {total} right, {cv_bad} measured OOMs called fits");
    assert_eq!(bad, 0, "a measured OOM is called fits in-sample");
    assert_eq!(cv_bad, 0, "a measured OOM is called fits out of sample");
    assert!(
        cv_right as f64 >= 0.95 * total as f64,
        "cross-validated verdicts {cv_right} of {total} < 95%"
    );
    assert!(
        right >= flat_right,
        "the fitted model is worse than the flat factor"
    );
}

const GIB: f64 = (1u64 << 30) as f64;

/// The measured `step_s` of each row against the two-term roofline (a report; the issue aims at
/// a median within 30%).
#[test]
fn step_time_error() {
    let Some(rows) = rows() else {
        return;
    };
    let h100 = hwlint::hardware::catalog().gpu("h100-sxm").unwrap();
    let mut errs = Vec::new();
    for row in &rows {
        let p = plan(row);
        let est = estimate(&p);
        let got = hwlint::estimate::throughput::step_seconds(&p, &est, h100);
        let want = row["step_s"].as_f64().unwrap();
        let err = (got - want) / want;
        eprintln!(
            "{:<22} {:<9} ck={} b={:<3} step {:>6.3}s estimated {:>6.3}s {:>+6.0}%",
            p.model,
            row["precision"].as_str().unwrap(),
            u8::from(row["checkpointing"] == true),
            p.batch,
            want,
            got,
            err * 100.0
        );
        errs.push(err.abs());
    }
    let med = median(&mut errs);
    eprintln!(
        "step time: median error {:.0}%, worst {:.0}%",
        med * 100.0,
        errs.last().unwrap() * 100.0
    );
    assert!(
        med <= 0.30,
        "step-time median error {:.0}% > 30%",
        med * 100.0
    );
}
