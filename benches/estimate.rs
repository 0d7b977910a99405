//! `hwlint estimate` must answer in under 5 ms of compute. Run with `cargo bench --bench estimate`.

use std::hint::black_box;
use std::time::Instant;

use hwlint::estimate::memory::{estimate, Checkpointing, Plan, Precision};
use hwlint::estimate::models::lookup;
use hwlint::estimate::throughput::step_seconds;
use hwlint::estimate::verdict::{max_micro_batch, usable_bytes};
use hwlint::hardware::catalog;

fn main() {
    let plan = Plan {
        batch: 8,
        seq_len: 4096,
        precision: Precision::Bf16Mixed,
        checkpointing: Checkpointing::Full,
        lora: Some((16, vec!["q_proj".into(), "v_proj".into()])),
        ..Plan::new(
            "llama-3-8b",
            lookup("llama-3-8b").expect("in the catalog").clone(),
        )
    };
    // What one `hwlint estimate --targets all` computes: the estimate, and per GPU the verdict,
    // the largest micro-batch (a bisection of estimates) and the step time.
    let rounds = 200;
    let start = Instant::now();
    for _ in 0..rounds {
        let est = estimate(black_box(&plan));
        for gpu in &catalog().gpus {
            let usable = usable_bytes(gpu, None);
            black_box(max_micro_batch(&plan, usable, 1.0));
            black_box(step_seconds(&plan, &est, gpu));
        }
    }
    let per = start.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "estimate + {} targets (max micro-batch, step time): {:.3} ms per run (budget 5 ms)",
        catalog().gpus.len(),
        per * 1e3
    );
    let start = Instant::now();
    for _ in 0..10_000 {
        black_box(estimate(black_box(&plan)));
    }
    println!(
        "one estimate: {:.2} µs",
        start.elapsed().as_secs_f64() / 10_000.0 * 1e6
    );
}
