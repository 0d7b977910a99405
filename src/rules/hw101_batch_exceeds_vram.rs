//! ## What it does
//! Estimates the peak GPU memory of one training step from the model's architecture, the
//! micro-batch, sequence length or image size, precision, optimizer, activation checkpointing,
//! LoRA and sharding, and reports when it exceeds the target GPU's usable memory.
//!
//! "Needs" is what PyTorch's caching allocator reserves at the step's peak: model states do
//! not fragment, the transient part of forward and backward does, and the optimizer step
//! cannot reuse what backward freed (a form fitted on 73 measured steps on an H100 and
//! cross-validated by model family; no measured out-of-memory is called "fits"). "Usable" is the
//! memory the driver reports minus the CUDA context. The estimate is built per operation (what
//! autograd keeps for backward, in the dtype each op runs in).
//!
//! The message adds the need up from what is allocated at the step's peak instant (the end of
//! forward, the start of backward, the recompute or backward of the last block, the optimizer
//! step, loading a quantized base, an RL trainer sampling its completions with
//! `model.generate` in the training process, a colocated rollout engine sampling between updates
//! (verl; TRL's vLLM in sleep mode), verl's no-grad log-prob forward or reward model's forward
//! (its legacy worker, parameters gathered from the CPU one unit at a time), or a no-grad forward of
//! TRL's PPO rollout: the reference's over `local_rollout_forward_batch_size` prompts with every
//! layer's hidden state and cache, or the value model's), by kind, the three largest named:
//! - weights: the parameters on this GPU (a shard and the gathered blocks under ZeRO-3/FSDP),
//!   a frozen reference or reward model's, a PPO value model's, and LoRA adapters in fp32;
//! - gradients: all of them when the step is at the optimizer or accumulates, else the ones
//!   backward has produced by that instant (the LM head's, the last block's);
//! - optimizer: the optimizer's state (AdamW's two moments) and an fp32 master copy of 16-bit
//!   weights;
//! - activations: what autograd saves for backward (only block inputs under checkpointing);
//! - logits: the LM head's output and the loss's fp32 copies of it (TRL's PPO rollout also
//!   keeps every sampled token's fp32 scores over the vocabulary);
//! - KV cache: the keys and values of the sequences an RL trainer samples at once (TRL's GRPO
//!   without vLLM: the accumulation's micro-batches by default), while the weights (the whole
//!   model under ZeRO-3 unless `ds3_gather_for_generation: false`) and optimizer state stay;
//! - rollout engine: the share of each card a colocated engine (vLLM, SGLang) reserves while it
//!   samples (`gpu_memory_utilization` of the whole card), beside the trainer's parameters and
//!   optimizer state that its offload switches leave on the GPUs; an engine that sleeps through
//!   the update is counted only then, one that does not is taken off the usable memory;
//! - temporary: what exists only at that instant: autocast's 16-bit copies of the weights, a
//!   recomputed block's activations, a block's backward working set, the optimizer step's
//!   foreach copies, a block dequantized while loading;
//! - other: the kinds past the three largest;
//! - the allocator reserves: PyTorch's caching allocator holds more than is allocated (the
//!   fragmented transient part and a fixed overhead); "needs" includes it.
//!
//! When the number of GPUs is unknown and the run may be sharded (ZeRO-3, FSDP), or an option
//! is only bounded (torchtitan's selective checkpointing, Liger kernels, an optimizer the
//! estimator does not model), it fires only when even the least the step can need does not
//! fit.
//!
//! ## Why is this bad?
//! The run stops with `CUDA out of memory` at the first step (or at the first optimizer step,
//! when the AdamW states appear), after the dataset and model have loaded.
//!
//! ## Example
//! ```yaml
//! # target: rtx-4090 (24 GB)
//! model_name_or_path: TinyLlama/TinyLlama_v1.1
//! per_device_train_batch_size: 16
//! gradient_accumulation_steps: 1
//! max_length: 2048
//! ```
//!
//! Use instead:
//! ```yaml
//! per_device_train_batch_size: 2
//! gradient_accumulation_steps: 8
//! ```
//!
//! ## Fix safety
//! Safe: it sets the largest micro-batch that fits under 90% of usable memory and raises
//! gradient accumulation so that micro-batch x accumulation (the effective batch) is unchanged.
//! Unsafe when the config has no accumulation key (the effective batch would change). Where the
//! config states only a global batch that the GPUs split (detectron2's `SOLVER.IMS_PER_BATCH`)
//! and the number of GPUs is known, the fix lowers that batch to the most that fit on each GPU
//! and, where the framework documents the linear scaling rule, scales the learning rate
//! (`SOLVER.BASE_LR`) by the same ratio: unsafe, as the optimisation changes. No fix
//! when not even a micro-batch of 1 fits; the message says what would (for a peak in the
//! sampling between updates, which the micro-batch does not change: fewer sequences sampled at
//! once, the ZeRO-3 shards kept, or vLLM; for a rollout engine's sampling, the largest
//! `gpu_memory_utilization` that fits, to 0.05, or the trainer's states offloaded while it
//! samples; for verl's log-prob or reward model's forward or TRL's PPO rollout forward, the most rows per GPU that
//! fit; never activation checkpointing where the trainer ignores it, as TRL's PPOTrainer does).
//! Under the built-in
//! default target the GPU is a guess: the fix is shown, not applied.

use super::memory::{
    batch_fix, batch_phrase, for_target, gib, global_batch_fix, gpu_named, largest_terms,
    micro_batch_to_set, need_with, per_device_batch,
};
use super::{Context, Violation};
use crate::estimate::memory::{
    estimate, AtPeak, Checkpointing, MemoryEstimate, Plan, CRITIC_UPDATE, ENGINE_SAMPLING,
    GENERATING, LOGPROB_FORWARD, REWARD_ENGINE, REWARD_FORWARD,
};
use crate::estimate::step::Engine;
use crate::estimate::verdict::need_bytes;
use crate::estimate::verdict::{largest_below, max_micro_batch, HEADROOM_LINE};

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(m) = ctx.gpu_memory() else {
        return vec![];
    };
    // With sharding unknown, report only what holds even if the model states were sharded.
    let e = m.least();
    // A JAX run whose card would hold the step in a larger share: HW104 raises the share.
    let raise = super::hw104_memory_fraction_invalid::fraction_holding_the_step(ctx);
    if e.verdict.fits || (raise.is_some() && ctx.runs("HW104")) {
        return vec![];
    }
    let plan = &e.plan;
    let usable = e.verdict.usable_bytes;
    // What the figure already grants: each bound is written "X: between LOW and HIGH".
    let mut least = Vec::new();
    if m.sharding_unknown {
        least.push("with the model states sharded across any number of GPUs".to_string());
    }
    if !m.bounded.is_empty() {
        least.push(format!(
            "with each option hwlint bounds at its lower end ({})",
            m.bounded
                .iter()
                .map(|b| b.what.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    // A range's spread is stated: the least (whose terms follow) and the most.
    let spread = if m.least.is_some() && gib(m.most.verdict.need_bytes) != gib(e.verdict.need_bytes)
    {
        format!(
            " at its least, ~{} GiB at its most",
            gib(m.most.verdict.need_bytes)
        )
    } else {
        String::new()
    };
    let mut message = format!(
        "one step of {} at {} ({}) needs ~{} GiB{spread} ({}) > {} GiB usable on {}{}",
        plan.model,
        // An unset length (or prompt length) is counted at its least: the step fails at any
        // length. (A length bounded otherwise, verl's packed responses, is said at its least.)
        if plan.seq_len < m.most.plan.seq_len
            && m.bounded.iter().any(|b| {
                use crate::dialect::Concept::{PromptLength, SeqLen};
                use crate::estimate::plan::Decider::Setting;
                [Setting(SeqLen), Setting(PromptLength)].contains(&b.decided_by)
            })
        {
            format!("micro-batch {} at any sequence length", plan.batch)
        } else if plan.seq_len < m.most.plan.seq_len && plan.batch == m.most.plan.batch {
            // The step as the file sets it: a packed step's least is a token a sequence.
            batch_phrase(&m.most.plan)
        } else {
            batch_phrase(plan)
        },
        plan.precision_label(),
        gib(e.verdict.need_bytes),
        largest_terms(&e.estimate, e.verdict.need_bytes),
        gib(usable),
        gpu_named(ctx),
        if least.is_empty() {
            String::new()
        } else {
            format!(", even counted {}", least.join(" and "))
        },
    );
    let can_checkpoint = checkpointing_can_be_set(ctx) && !plan.checkpointing_fixed;
    if plan.checkpointing == Checkpointing::None && can_checkpoint {
        let with = need_with(plan, plan.batch, Checkpointing::Full);
        if with <= usable {
            message.push_str(&format!(
                "; activation checkpointing alone would fit ({} GiB)",
                gib(with)
            ));
        }
    }
    // The largest micro-batch under the headroom line; when none is, micro-batch 1 may still
    // fit above it (HW105's territory): then it is the way out, with little headroom, never
    // "not even micro-batch 1 fits".
    // Where the range is the run's own steps (V-JEPA's random masks), the step that keeps the
    // most will come: the micro-batch is sized to the most, when one fits there.
    let at_most = m
        .steps_only()
        .then(|| max_micro_batch(&m.most.plan, usable, HEADROOM_LINE) as i64)
        .filter(|n| *n >= 1);
    let under_line = at_most.unwrap_or_else(|| max_micro_batch(plan, usable, HEADROOM_LINE) as i64);
    let only_one = (under_line == 0)
        .then(|| need_with(plan, 1, plan.checkpointing))
        .filter(|one| *one <= usable);
    let fitting = if only_one.is_some() { 1 } else { under_line };
    let fix = match per_device_batch(ctx) {
        Some(per_device) if fitting >= 1 => for_target(ctx, {
            let micro = micro_batch_to_set(ctx, per_device, fitting);
            let low = need_with(plan, micro as u64, plan.checkpointing);
            // The micro-batch is sized to the least the step can need; where that is a bound
            // (sharding over GPUs hwlint does not know, options between two ends), say what
            // the most is at it, not only the figure at unlimited sharding.
            let most = &m.most.plan;
            let high = need_with(most, micro as u64, most.checkpointing);
            let why = if m.least.is_none() || high <= usable {
                format!("fits in {} GiB", gib(high.max(low)))
            } else {
                format!(
                    "needs ~{}-{} GiB: it fits with {}",
                    gib(low),
                    gib(high),
                    m.least_reasons().join(" and ")
                )
            };
            batch_fix(ctx, micro, per_device, &why)
        }),
        // The file states only the global batch, which the GPUs split (detectron2).
        None if fitting >= 1
            && ctx.dialect.semantics.global_batch_splits_over_devices
            && ctx.setup.get(crate::dialect::Concept::MicroBatch).is_none() =>
        {
            let fits = need_with(plan, fitting as u64, plan.checkpointing);
            for_target(
                ctx,
                global_batch_fix(ctx, fitting, &format!("fits in {} GiB", gib(fits))),
            )
        }
        _ => None,
    };
    match raise {
        Some(f) => message.push_str(&format!(
            "; the card holds the step at XLA_PYTHON_CLIENT_MEM_FRACTION={f}"
        )),
        None if only_one.is_some() => {
            let one = only_one.unwrap_or_default();
            message.push_str(&format!(
                ": only micro-batch 1 fits, at ~{} GiB ({:.0}% of usable: little headroom against fragmentation or longer samples)",
                gib(one),
                one / usable * 100.0
            ))
        }
        None if e.estimate.peak_at == ENGINE_SAMPLING => {
            message.push_str(&engine_advice(ctx, plan, usable, &ROLLOUT_ENGINE));
        }
        None if e.estimate.peak_at == REWARD_ENGINE => {
            message.push_str(&engine_advice(ctx, plan, usable, &REWARD_LOOP_ENGINE));
        }
        None if e.estimate.peak_at == LOGPROB_FORWARD => {
            message.push_str(&logprob_advice(ctx, plan, usable));
        }
        None if e.estimate.peak_at == CRITIC_UPDATE => {
            message.push_str(&critic_advice(ctx, plan, usable));
        }
        None if e.estimate.peak_at == REWARD_FORWARD => {
            message.push_str(&reward_advice(ctx, plan, usable));
        }
        None if fitting == 0 && e.estimate.peak_at == GENERATING => {
            message.push_str(&format!(
                ": the peak is the sampling between updates, {}, and a smaller micro-batch does not shrink it; {}",
                sampling_phrase(plan),
                sampling_ways(ctx, plan).join(", or ")
            ));
        }
        None if fitting == 0 => {
            // Only advice the config does not already follow, and that the figure has not
            // already granted.
            let mut ways = Vec::new();
            // LoRA only where the framework has it (torchtitan has none).
            if plan.lora.is_none()
                && ctx
                    .dialect
                    .settings
                    .contains_key(&crate::dialect::Concept::LoraR)
            {
                ways.push("train LoRA adapters on a frozen base");
            }
            // A program that runs one process whatever the keys say (torchtune's single-device
            // recipes) shards only if the user runs another one.
            let implied = ctx
                .setup
                .get(crate::dialect::Concept::Processes)
                .and_then(|s| s.origin.implied_by());
            let shard;
            if !m.sharding_unknown && plan.zero_stage < 3 && sharding_can_be_set(ctx) {
                shard = match implied {
                    Some(by) => {
                        format!("shard the model states over more GPUs, which {by} does not do")
                    }
                    None => match key_of(ctx, crate::dialect::Concept::Fsdp) {
                        Some(key) => format!("shard the model states over more GPUs (`{key}`)"),
                        None => "shard the model states (ZeRO-3/FSDP) over more GPUs".to_string(),
                    },
                };
                ways.push(&shard);
            }
            let checkpoint = match key_of(ctx, crate::dialect::Concept::ActivationCheckpointing) {
                Some(key) => format!("turn on activation checkpointing (`{key}`)"),
                None => "turn on activation checkpointing".to_string(),
            };
            if plan.checkpointing == Checkpointing::None && can_checkpoint {
                ways.push(&checkpoint);
            }
            ways.push("use a GPU with more memory");
            message.push_str(&format!(
                ": not even micro-batch 1 fits; {}",
                ways.join(", or ")
            ));
        }
        None => {}
    }
    vec![Violation {
        message,
        span: ctx.batch_span(),
        fix,
    }]
}

/// The key the dialect reads `concept` from first, for advice.
fn key_of(ctx: &Context, concept: crate::dialect::Concept) -> Option<String> {
    ctx.dialect
        .settings
        .get(&concept)
        .and_then(|spec| spec.from.first())
        .map(|s| s.key.clone())
}

/// The trainer's offload switches that are off, as advice: `set `KEY: true` (why)` for the
/// parameters and the optimizer state the trainer keeps on the GPUs.
fn offload_ways(ctx: &Context, (params, optimizer): (bool, bool), why: &str) -> Vec<String> {
    use crate::dialect::Concept;
    [
        (params, Concept::PhaseOffloadParams),
        (optimizer, Concept::PhaseOffloadOptimizer),
    ]
    .into_iter()
    .filter(|(kept, _)| *kept)
    .filter_map(|(_, c)| key_of(ctx, c))
    .map(|k| format!("set `{k}: true` ({why})"))
    .collect()
}

/// One of the inference engines that wake on the trainer's GPUs: where the plan and the
/// estimate hold it, the setting of its share, and how a message names it.
struct EngineKind {
    plan: fn(&Plan) -> Option<Engine>,
    at: fn(&MemoryEstimate) -> Option<AtPeak>,
    share: crate::dialect::Concept,
    /// "the rollout engine's sampling"
    instant: &'static str,
    /// "fewer sequences sampled at once"
    smaller: &'static str,
    /// "while the engine samples"
    during: &'static str,
}

const ROLLOUT_ENGINE: EngineKind = EngineKind {
    plan: |p| p.engine,
    at: |e| e.engine_sampling,
    share: crate::dialect::Concept::ColocatedShare,
    instant: "the rollout engine's sampling",
    smaller: "a smaller KV cache: fewer sequences sampled at once",
    during: "moved to the CPU while the engine samples",
};

const REWARD_LOOP_ENGINE: EngineKind = EngineKind {
    plan: |p| p.reward_engine,
    at: |e| e.reward_engine,
    share: crate::dialect::Concept::RewardEngineShare,
    instant: "the reward engine's scoring",
    smaller: "a smaller KV cache: fewer sequences scored at once",
    during: "moved to the CPU while the reward engine scores",
};

/// Why a colocated engine's waking is the peak, and what shrinks it: a smaller share (the
/// largest that fits, to 0.05), or the trainer's states moved off the GPUs while it runs.
fn engine_advice(ctx: &Context, plan: &Plan, usable: f64, kind: &EngineKind) -> String {
    let Some(engine) = (kind.plan)(plan) else {
        return String::new();
    };
    let e = estimate(plan);
    let at = (kind.at)(&e).unwrap_or_default();
    let states = at.weights + at.optimizer;
    let vram = ctx.target.gpu.vram_bytes as f64;
    let share = engine.reserved / vram;
    let mut out = format!(
        ": the peak is {}, its {share:.2} of each card ({} GiB) beside {} GiB of the trainer's states left on the GPUs, and a smaller micro-batch does not shrink it",
        kind.instant,
        gib(engine.reserved),
        gib(states)
    );
    let mut ways = Vec::new();
    // The largest share, in steps of 0.05, that leaves room for the states and the allocator.
    let room = usable - (need_bytes(&e) - at.total()) - states;
    let fits = (room / vram * 20.0).floor() / 20.0;
    if let Some(k) = key_of(ctx, kind.share) {
        if fits >= 0.1 && fits < share {
            ways.push(format!("lower `{k}` to {fits:.2} ({})", kind.smaller));
        }
    }
    ways.extend(offload_ways(
        ctx,
        (engine.params_kept, engine.optimizer_kept),
        kind.during,
    ));
    ways.push("use a GPU with more memory".to_string());
    out.push_str("; ");
    out.push_str(&ways.join(", or "));
    out
}

/// The most of a count below `current` (rows, a micro-batch: memory grows with it) at which the
/// plan, as `set` changes it, stays under the headroom line; `None` when not even 1 does.
fn most_that_fit(
    plan: &Plan,
    usable: f64,
    current: u64,
    set: impl Fn(&mut Plan, u64),
) -> Option<u64> {
    let fits = |n: u64| {
        let mut p = plan.clone();
        set(&mut p, n);
        need_bytes(&estimate(&p)) <= usable * HEADROOM_LINE
    };
    fits(1).then(|| largest_below(1, current.max(2), fits))
}

/// Why a critic's update is the peak, and the largest critic micro-batch that fits.
fn critic_advice(ctx: &Context, plan: &Plan, usable: f64) -> String {
    use crate::dialect::Concept;
    let Some(c) = &plan.critic else {
        return String::new();
    };
    let most = most_that_fit(plan, usable, c.plan.batch, |p, batch| {
        if let Some(c) = &mut p.critic {
            c.plan.batch = batch;
        }
    });
    let key = key_of(ctx, Concept::CriticMicroBatch)
        .map_or("the critic's micro-batch".to_string(), |k| format!("`{k}`"));
    let mut out = format!(
        ": the peak is the critic's update ({} at micro-batch {} x {} tokens), which the actor's micro-batch does not change; ",
        c.plan.model, c.plan.batch, c.plan.seq_len
    );
    let mut ways = Vec::new();
    match most {
        Some(b) if b < c.plan.batch => ways.push(format!(
            "lower {key} to {b} (it fits under 90% of usable memory)"
        )),
        _ => out.push_str("not even micro-batch 1 fits; "),
    }
    if c.plan.checkpointing == Checkpointing::None {
        if let Some(k) = key_of(ctx, Concept::CriticCheckpointing) {
            ways.push(format!("turn the critic's checkpointing on (`{k}: true`)"));
        }
    }
    ways.extend(offload_ways(
        ctx,
        (c.actor_params_kept, c.actor_optimizer_kept),
        "off the GPUs during the critic's update",
    ));
    ways.push("use a GPU with more memory".to_string());
    out.push_str(&ways.join(", or "));
    out
}

/// Why the reward model's forward is the peak, and the most rows per GPU that fit.
fn reward_advice(ctx: &Context, plan: &Plan, usable: f64) -> String {
    use crate::dialect::Concept;
    let Some(r) = &plan.reward_forward else {
        return String::new();
    };
    let most = most_that_fit(plan, usable, r.plan.batch, |p, rows| {
        if let Some(f) = &mut p.reward_forward {
            f.plan.batch = rows;
        }
    });
    let key = key_of(ctx, Concept::RewardMicroBatch)
        .map_or("the reward model's micro-batch".to_string(), |k| {
            format!("`{k}`")
        });
    let mut out = format!(
        ": the peak is the reward model's forward, {} sequence{} of {} tokens without gradients, whose rows the actor's micro-batch does not change; ",
        r.plan.batch,
        if r.plan.batch == 1 { "" } else { "s" },
        r.plan.seq_len
    );
    let mut ways = offload_ways(
        ctx,
        (r.actor_params_kept, r.actor_optimizer_kept),
        "off the GPUs while the reward model scores",
    );
    match most {
        Some(n) => ways.insert(
            0,
            format!("lower {key} to {n}, which fits under 90% of usable memory"),
        ),
        None => ways.push("use a GPU with more memory".to_string()),
    }
    out.push_str(&ways.join(", or "));
    out
}

/// Why the no-grad log-prob forward is the peak, and the most rows per GPU that fit.
fn logprob_advice(ctx: &Context, plan: &Plan, usable: f64) -> String {
    use crate::dialect::Concept;
    let Some(f) = plan.logprob_forward else {
        return String::new();
    };
    // TRL's PPO: one count of prompts sets the rows of its generation and of every no-grad
    // forward of the rollout (the value model's included).
    let rollout = key_of(ctx, Concept::RolloutBatch)
        .filter(|_| ctx.setup.get(Concept::RolloutBatch).is_some());
    let most = most_that_fit(plan, usable, f.rows, |p, rows| {
        p.logprob_forward = Some(crate::estimate::step::LogprobForward { rows, ..f });
        if rollout.is_some() {
            if let Some(g) = &mut p.generation {
                g.rows = Some(rows);
            }
            let generation = p.generation;
            if let Some(c) = &mut p.critic {
                c.plan.generation = generation;
                c.plan.logprob_forward = c
                    .plan
                    .logprob_forward
                    .map(|cf| crate::estimate::step::LogprobForward { rows, ..cf });
            }
        }
    });
    let (key, also) = match &rollout {
        Some(k) => (format!("`{k}`"), ""),
        None => (
            key_of(ctx, Concept::LogprobMicroBatch)
                .map_or("the log-prob micro-batch".to_string(), |k| format!("`{k}`")),
            " (and the reference's)",
        ),
    };
    let mut out = if rollout.is_some() {
        format!(
            ": the peak is a no-grad forward of the rollout (the reference's log-probs, or the value and reward models' scores), {} sequence{} of {} tokens, whose rows {key} sets; ",
            f.rows,
            if f.rows == 1 { "" } else { "s" },
            plan.seq_len
        )
    } else {
        format!(
            ": the peak is the log-prob forward, {} sequence{} of {} tokens without gradients, whose logits the actor's micro-batch does not change; ",
            f.rows,
            if f.rows == 1 { "" } else { "s" },
            plan.seq_len
        )
    };
    match most {
        Some(r) => out.push_str(&format!(
            "{r} per GPU fit{} under 90% of usable memory: lower {key}{also} to {r}",
            if r == 1 { "s" } else { "" }
        )),
        None => out.push_str(&format!(
            "not even 1 per GPU fits: lower {key}, or use a GPU with more memory"
        )),
    }
    out
}

/// `64 sequences of 512 + 2048 tokens at once with `model.generate``.
fn sampling_phrase(plan: &Plan) -> String {
    plan.generation.map_or_else(String::new, |g| {
        format!(
            "{} sequence{} of {} + {} tokens at once with `model.generate` in the training process",
            g.rows(plan.batch),
            if g.rows(plan.batch) == 1 { "" } else { "s" },
            g.prompt,
            g.completion
        )
    })
}

/// What shrinks the sampling between updates, in the dialect's own keys: sample fewer sequences
/// at once, keep the ZeRO-3 shards while sampling, or sample with vLLM.
fn sampling_ways(ctx: &Context, plan: &Plan) -> Vec<String> {
    use crate::dialect::Concept;
    // A key the user writes the value of (no `map`), or one whose map yields `canonical`: a
    // key that only implies the setting (axolotl's `rl: grpo` implies TRL's gather) is no
    // switch to name.
    let key = |c: Concept, canonical: Option<&str>| {
        ctx.dialect.settings.get(&c).and_then(|spec| {
            spec.from
                .iter()
                .find(|s| match canonical {
                    Some(v) => s.maps_to(v),
                    None => s.map.is_none(),
                })
                .map(|s| s.key.clone())
        })
    };
    let mut ways = Vec::new();
    // TRL's PPO samples `local_rollout_forward_batch_size` prompts at a time.
    let rollout = ctx.setup.get(Concept::RolloutBatch).is_some();
    let fewer = if rollout {
        Concept::RolloutBatch
    } else {
        Concept::StepsPerGeneration
    };
    if let Some(k) = key(fewer, None) {
        ways.push(format!("sample fewer sequences at once (a smaller `{k}`)"));
    }
    if plan.generation.is_some_and(|g| g.whole_model) {
        if let Some(k) = key(Concept::GenerationGathersWhole, None) {
            ways.push(format!(
                "set `{k}: false` (ZeRO-3 then gathers one block at a time to generate, instead of the whole model)"
            ));
        }
    }
    if let Some(k) = key(Concept::Generator, Some("vllm")).filter(|_| !rollout) {
        ways.push(format!("sample with vLLM (`{k}`) on its own GPUs"));
    }
    ways.push("use a GPU with more memory".into());
    ways
}

/// Whether the run can shard its model states: the dialect has a key for ZeRO, FSDP or a
/// DeepSpeed config, or a launcher may add sharding the file does not name. V-JEPA wraps its
/// models in DDP and nothing else, so no message tells its user to shard.
fn sharding_can_be_set(ctx: &Context) -> bool {
    use crate::dialect::Concept;
    !ctx.dialect.semantics.sharding_in_file_only
        || [Concept::ZeroStage, Concept::Fsdp, Concept::DeepspeedConfig]
            .iter()
            .any(|c| ctx.dialect.settings.contains_key(c))
}

/// Whether the file can turn activation checkpointing on: a key of the dialect reads a value
/// other than none, and that key is not the number of devices. LitGPT checkpoints only because
/// it runs on several devices (`devices` maps to it), so no message suggests checkpointing to a
/// single-device LitGPT run.
fn checkpointing_can_be_set(ctx: &Context) -> bool {
    use crate::dialect::Concept;
    let world = ctx.world_size_keys();
    ctx.setup.get(Concept::ActivationCheckpointing).is_some()
        && ctx
            .dialect
            .settings
            .get(&Concept::ActivationCheckpointing)
            .is_some_and(|spec| {
                spec.from.iter().any(|s| {
                    !world.contains(&s.key.as_str())
                        && s.map
                            .as_ref()
                            .is_none_or(|m| m.values().any(|v| v.as_str() != Some("none")))
                })
            })
}
