//! Output of `hwlint estimate`: a breakdown with bars and a verdict per target, or JSON.

use crate::estimate::command::{value_name, EstimateReport};

fn gib(b: f64) -> f64 {
    b / (1u64 << 30) as f64
}

fn params(n: u64) -> String {
    if n >= 1_000_000_000 {
        format!("{:.2} B", n as f64 / 1e9)
    } else {
        format!("{:.1} M", n as f64 / 1e6)
    }
}

fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

pub fn render_estimate(r: &EstimateReport) -> String {
    let p = &r.plan;
    let e = &r.estimate;
    let mut out = format!(
        "{}: {} parameters ({} trainable) · micro-batch {}{} · {} · {} · checkpointing {}{}{}\n\n",
        p.model,
        params(e.params),
        params(e.trainable_params),
        super::batch_words(p),
        if p.seq_len > 0 {
            format!(" x {} tokens", p.seq_len)
        } else {
            String::new()
        },
        p.precision_label(),
        value_name(p.optimizer),
        value_name(p.checkpointing),
        p.lora.as_ref().map_or(String::new(), |(r, t)| format!(
            " · LoRA r={r} on {}",
            t.iter()
                .chain(&p.lora_parameters)
                .cloned()
                .collect::<Vec<_>>()
                .join(",")
        )),
        if p.zero_stage > 0 {
            format!(" · ZeRO-{} over {} GPUs", p.zero_stage, p.gpus)
        } else {
            String::new()
        },
    );
    let mut terms = vec![
        ("weights", e.weights_bytes),
        ("gradients", e.gradients_bytes),
        ("optimizer", e.optimizer_bytes),
        ("activations", e.activations_bytes),
        ("logits", e.logits_bytes),
    ];
    if e.generating.is_some() {
        terms.push(("KV cache", e.generation_kv_bytes));
    }
    terms.push(("temporary", e.temporary_bytes));
    let scale = e.peak_bytes.max(1.0);
    for (name, bytes) in terms {
        let width = (40.0 * bytes / scale).round() as usize;
        out.push_str(&format!(
            "  {name:<12} {:>7.1} GiB  {}\n",
            gib(bytes),
            "█".repeat(width.min(40))
        ));
    }
    if e.paged_bytes > 0.0 {
        out.push_str(&format!(
            "  ({:.1} GiB of the optimizer state is paged: bitsandbytes allocates it outside PyTorch's allocator, and the driver may move it to host memory)\n",
            gib(e.paged_bytes)
        ));
    }
    if let (Some(g), Some(at)) = (&p.generation, e.generating) {
        out.push_str(&format!(
            "  (sampling completions between updates: {} sequence{} of {} + {} tokens at once with `model.generate`, {}; {:.1} GiB allocated then{})\n",
            g.rows(p.batch),
            if g.rows(p.batch) == 1 { "" } else { "s" },
            g.prompt,
            g.completion,
            if g.cache {
                "keeping a KV cache"
            } else {
                "re-running the sequence for each token (no KV cache under checkpointing)"
            },
            gib(at.total()),
            if g.whole_model {
                format!(
                    ", with {:.1} GiB of weights: ZeRO-3 gathers the whole model to generate",
                    gib(at.weights)
                )
            } else {
                String::new()
            }
        ));
    }
    if let (Some(engine), Some(at)) = (&p.engine, e.engine_sampling) {
        out.push_str(&format!(
            "  (the rollout engine samples between updates: {:.1} GiB of each card, beside {:.1} GiB of the trainer's states left on the GPUs ({}); {:.1} GiB allocated then)\n",
            gib(engine.reserved),
            gib(at.weights + at.optimizer),
            match (engine.params_kept, engine.optimizer_kept) {
                (true, true) => "parameters and optimizer state",
                (true, false) => "parameters; the optimizer state is offloaded",
                (false, true) => "optimizer state; the parameters are offloaded",
                (false, false) => "both offloaded",
            },
            gib(at.total())
        ));
    }
    if let (Some(engine), Some(at)) = (&p.reward_engine, e.reward_engine) {
        out.push_str(&format!(
            "  (the reward engine wakes to score the samples while the rollout engine sleeps: {:.1} GiB of each card, beside {:.1} GiB of the trainers' states left on the GPUs; {:.1} GiB allocated then)\n",
            gib(engine.reserved),
            gib(at.weights + at.optimizer),
            gib(at.total())
        ));
    }
    if let (Some(r), Some(at)) = (&p.reward_forward, e.reward_forward) {
        out.push_str(&format!(
            "  (the reward model's forward: {} sequence{} of {} tokens without gradients, its parameters gathered one unit at a time from the CPU; {:.1} GiB allocated then)\n",
            r.plan.batch,
            if r.plan.batch == 1 { "" } else { "s" },
            r.plan.seq_len,
            gib(at.total())
        ));
    }
    if let (Some(f), Some(at)) = (&p.logprob_forward, e.logprob_forward) {
        out.push_str(&format!(
            "  (the log-prob forward: {} sequence{} of {} tokens without gradients, {:.1} GiB of logits{}; {:.1} GiB allocated then)\n",
            f.rows,
            if f.rows == 1 { "" } else { "s" },
            p.seq_len,
            gib(at.logits),
            match f.logits_copies {
                0 => " (none: fused kernels)",
                1 => "",
                _ => " with a log-softmax copy",
            },
            gib(at.total())
        ));
    }
    if let (Some(c), Some(at)) = (&p.critic, e.critic_update) {
        out.push_str(&format!(
            "  (the critic's update: {} at micro-batch {} x {} tokens, checkpointing {}, beside {:.1} GiB the actor keeps on the GPUs; {:.1} GiB allocated then)\n",
            c.plan.model,
            c.plan.batch,
            c.plan.seq_len,
            value_name(c.plan.checkpointing),
            gib(at.actor_kept_bytes),
            gib(at.at_peak.total())
        ));
    }
    out.push_str(&format!(
        "\n  peak allocated {:.1} GiB ({}); the allocator reserves {:.1} GiB\n",
        gib(e.peak_bytes),
        e.peak_at,
        gib(r.need_bytes)
    ));
    out.push_str(
        "  (the terms are not summed: the peak is the largest of a few instants of the step)\n",
    );
    if let Some(least) = &r.least {
        out.push_str(&format!(
            "  at the least ({}): peak allocated {:.1} GiB\n",
            r.bounded.join("; "),
            gib(least.peak_bytes)
        ));
    }
    out.push('\n');
    out.push_str(&format!(
        "  {:<14} {:>10}  {:<12} {:>15}  {:>9}  {:>9}\n",
        "target", "usable", "fits", "max micro-batch", "step", "run"
    ));
    for t in &r.targets {
        out.push_str(&format!(
            "  {:<14} {:>6.1} GiB  {:<12} {:>15}  {:>9}  {:>9}\n",
            t.gpu,
            gib(t.usable_bytes),
            match t.verdict {
                "fits" => "yes",
                "may fit" => "maybe",
                _ => "no",
            },
            t.max_micro_batch,
            t.step_seconds.map_or("no bf16".into(), duration),
            t.run_seconds.map_or("-".into(), duration),
        ));
    }
    out.push_str(&format!(
        "  (max micro-batch: the largest whose need stays within {:.0}% of usable memory, as HW101 and HW102 count it)\n",
        crate::estimate::verdict::HEADROOM_LINE * 100.0
    ));
    if let Some(b) = &r.by_length {
        out.push_str(&format!(
            "\n  the sequence length is not set (pass --seq-len N): the need from 512 tokens to the model's context of {}\n",
            b.context
        ));
        out.push_str(&format!("  {:>9}  {:>19}\n", "tokens", "needs"));
        // A range only where its ends differ as printed.
        let exact = b
            .needs
            .iter()
            .all(|(_, most, least)| format!("{:.1}", gib(*most)) == format!("{:.1}", gib(*least)));
        for (n, most, least) in &b.needs {
            let need = if exact {
                format!("{:.1}", gib(*most))
            } else {
                format!("{:.1}-{:.1}", gib(*least), gib(*most))
            };
            out.push_str(&format!("  {n:>9}  {need:>15} GiB\n"));
        }
        for l in &b.longest {
            let tokens = |n: u64| match n {
                0 => "none".to_string(),
                n if n == b.context => format!("all {n} tokens"),
                n => format!("{n} tokens"),
            };
            if l.certain == l.possible {
                out.push_str(&format!(
                    "  longest sequence that fits {}: {}\n",
                    l.gpu,
                    tokens(l.certain)
                ));
            } else {
                out.push_str(&format!(
                    "  longest sequence that fits {}: {} as configured, {} at the least\n",
                    l.gpu,
                    tokens(l.certain),
                    tokens(l.possible)
                ));
            }
        }
    }
    for note in r.targets.iter().filter_map(|t| t.step_note.as_ref()) {
        out.push_str(&format!(
            "  {note}: set the precision to fp16 or fp32 for this GPU\n"
        ));
    }
    if !r.assumed.is_empty() {
        out.push_str(&format!("\n  assumed: {}", r.assumed.join("; ")));
        if r.inputs.is_empty() {
            out.push('\n');
        }
    }
    if !r.inputs.is_empty() {
        out.push_str("\n  inputs: ");
        out.push_str(
            &r.inputs
                .iter()
                .map(|(k, v)| format!("{k} from {v}"))
                .collect::<Vec<_>>()
                .join("; "),
        );
        out.push('\n');
    }
    out
}

pub fn render_estimate_json(r: &EstimateReport) -> String {
    let e = &r.estimate;
    let first = r.targets.first();
    let v = serde_json::json!({
        "model": r.plan.model,
        "params": e.params,
        "trainable_params": e.trainable_params,
        "peak_allocated_bytes": e.peak_bytes,
        "peak_at": e.peak_at,
        "weights_bytes": e.weights_bytes,
        "gradients_bytes": e.gradients_bytes,
        "optimizer_bytes": e.optimizer_bytes,
        "activations_bytes": e.activations_bytes,
        "logits_bytes": e.logits_bytes,
        "temporary_bytes": e.temporary_bytes,
        "paged_optimizer_bytes": e.paged_bytes,
        "generation_peak_allocated_bytes": e.generation_bytes(),
        "generation_weights_bytes": e.generating.map_or(0.0, |g| g.weights),
        "kv_cache_bytes": e.generation_kv_bytes,
        "engine_sampling_allocated_bytes": e.engine_sampling.map(|a| a.total()),
        "reward_engine_allocated_bytes": e.reward_engine.map(|a| a.total()),
        "logprob_forward_allocated_bytes": e.logprob_forward.map(|a| a.total()),
        "critic_update_allocated_bytes": e.critic_update.map(|c| c.at_peak.total()),
        "need_bytes": r.need_bytes,
        "least_peak_allocated_bytes": r.least.as_ref().map(|l| l.peak_bytes),
        "bounded": r.bounded,
        "assumed": r.assumed,
        "usable_bytes": first.map(|t| t.usable_bytes),
        "fits": first.map(|t| t.fits),
        "verdict": first.map(|t| t.verdict),
        "max_micro_batch": first.map(|t| t.max_micro_batch),
        "step_seconds": first.map(|t| t.step_seconds),
        "plan": r.plan,
        "steps": r.steps,
        "inputs": r.inputs.iter().map(|(k, v)| serde_json::json!({"input": k, "from": v})).collect::<Vec<_>>(),
        "targets": r.targets,
        "by_length": r.by_length,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
