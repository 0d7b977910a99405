//! ## What it does
//! Checks the share of GPU memory a JAX run takes (`XLA_PYTHON_CLIENT_MEM_FRACTION`, openpi's
//! launch line): a value outside (0, 1]; runs started together in one script (`&`) on the same
//! GPUs whose fractions add up past the whole card; and a fraction too small for the step
//! hwlint estimates when the card itself would hold it.
//!
//! ## Why is this bad?
//! JAX reserves its fraction of each visible GPU when it starts (unless
//! `XLA_PYTHON_CLIENT_PREALLOCATE=false`, which makes the fraction a cap instead): a second run
//! on the same GPU cannot get its share and stops with an out-of-memory error, and a run whose
//! step needs more than its fraction fails at the first step even though the card has room.
//! A fraction above 1 or not above 0 is refused by XLA's allocator.
//!
//! ## Example
//! ```sh
//! # target: 1 x rtx-4090; both runs start at once on GPU 0
//! CUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6 uv run scripts/train.py pi0_libero_low_mem_finetune --exp-name=a &
//! CUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6 uv run scripts/train.py pi0_libero_low_mem_finetune --exp-name=b &
//! ```
//!
//! Use instead: give each run its own GPU, or fractions that add up to at most 1.
//! ```sh
//! CUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 uv run scripts/train.py pi0_libero_low_mem_finetune --exp-name=a &
//! CUDA_VISIBLE_DEVICES=1 XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 uv run scripts/train.py pi0_libero_low_mem_finetune --exp-name=b &
//! ```
//!
//! ## Fix safety
//! A fraction too small for the step gets an unsafe fix that raises it to what the step needs
//! (the run then takes more of the card), for a target you chose. The other findings have no
//! fix: which run should get less is your call.

use super::memory::{for_target, gib};
use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::verdict::usable_bytes;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;
use crate::syntax::{Loader, Node, Value};

const VAR: &str = "XLA_PYTHON_CLIENT_MEM_FRACTION";
/// JAX's own default share when the variable is not set (jax docs, "GPU memory allocation").
const JAX_DEFAULT: f64 = 0.75;
/// A raised fraction stays under this: the driver, the CUDA context and other processes need
/// the rest.
const HIGHEST_FIX: f64 = 0.95;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((f, set)) = ctx.setup.float(Concept::MemFraction) else {
        return vec![];
    };
    if !(f > 0.0 && f <= 1.0) {
        if !set.origin.is_explicit() {
            return vec![];
        }
        return vec![Violation {
            message: format!(
                "{} {f} is outside (0, 1]: it is the share of each GPU's memory JAX takes, and XLA refuses the value at start",
                set.origin.describe()
            ),
            span: ctx.span_of(Concept::MemFraction),
            fix: None,
        }];
    }
    let mut out = Vec::new();
    if let Some(v) = oversubscribed(ctx, f, set.origin.is_explicit()) {
        out.push(v);
    }
    if let Some(v) = too_small(ctx, f) {
        out.push(v);
    }
    out
}

/// Whether JAX reserves the fraction up front (the default) or grows up to it.
fn preallocates(ctx: &Context) -> bool {
    ctx.setup
        .bool(Concept::MemPreallocate)
        .is_none_or(|(b, _)| b)
}

/// The fraction that would hold the step, when the run's fraction, not the card, is what the
/// step does not fit in (HW101 then leaves the finding to this rule, when it runs).
pub(crate) fn fraction_holding_the_step(ctx: &Context) -> Option<f64> {
    ctx.mem_fraction()?;
    raised(ctx).map(|(raised, _)| raised)
}

/// The smallest fraction in steps of 0.05 that holds the step, and the step's need, when the
/// step does not fit in the run's fraction of the card but would in one a fix may set.
fn raised(ctx: &Context) -> Option<(f64, f64)> {
    let m = ctx.gpu_memory()?;
    let e = m.least();
    if e.verdict.fits {
        return None;
    }
    let need = e.verdict.need_bytes;
    let gpu = &ctx.target.gpu;
    // Past the highest fraction a fix would set (never more than the card less the CUDA
    // context), raising the fraction cannot hold the step: HW101 says what does.
    if need > usable_bytes(gpu, Some(HIGHEST_FIX)) {
        return None;
    }
    let vram = gpu.vram_bytes as f64;
    // Above the run's fraction f, as the step does not fit in f x vram (nor, for f past 0.95,
    // in the card less the context, which returned above).
    let raised = ((need / vram) * 20.0).ceil() / 20.0;
    Some(((raised.min(HIGHEST_FIX) * 100.0).round() / 100.0, need))
}

/// The step needs more than the fraction leaves, but would fit in the card's usable memory.
fn too_small(ctx: &Context, f: f64) -> Option<Violation> {
    let (raised, need) = raised(ctx)?;
    let gpu = &ctx.target.gpu;
    let vram = gpu.vram_bytes as f64;
    let set = ctx.setup.get(Concept::MemFraction)?;
    let cap = if preallocates(ctx) {
        ""
    } else {
        " (with XLA_PYTHON_CLIENT_PREALLOCATE=false the fraction is a cap on what JAX may grow to, not a reservation; the step still cannot exceed it)"
    };
    let text = raised.to_string();
    let fix = set.origin.is_explicit().then(|| {
        for_target(
            ctx,
            ctx.set(
                Concept::MemFraction,
                NewValue::Str(text.clone()),
                Applicability::Unsafe,
                format!("set {VAR} to {text}"),
            ),
        )
    });
    let message = if set.origin.is_explicit() {
        format!(
            "{} {f} lets JAX use {} GiB of the {} GiB on {}, less than the ~{} GiB one step needs; {text} would hold it{cap}",
            set.origin.describe(),
            gib(f * vram),
            gib(vram),
            gpu.key,
            gib(need),
        )
    } else {
        format!(
            "JAX takes {f} of each GPU when {VAR} is not set: {} GiB of the {} GiB on {}, less than the ~{} GiB one step needs; launch it with {VAR}={text}{cap}",
            gib(f * vram),
            gib(vram),
            gpu.key,
            gib(need),
        )
    };
    Some(Violation {
        message,
        span: if set.origin.is_explicit() {
            ctx.span_of(Concept::MemFraction)
        } else {
            ctx.root.span.start..ctx.root.span.start
        },
        fix: fix.flatten(),
    })
}

/// Runs of one script started together on the same GPUs whose reserved fractions add up past
/// the card: reported on the run that tips it over.
/// `explicit`: whether the file sets this run's fraction (else it is JAX's default).
fn oversubscribed(ctx: &Context, f: f64, explicit: bool) -> Option<Violation> {
    if ctx.doc.format != crate::syntax::Format::Shell || !preallocates(ctx) {
        return None;
    }
    let roots = &ctx.doc.roots;
    let me = roots.iter().position(|r| std::ptr::eq(r, ctx.front))?;
    // The runs still going when this one starts: the background runs since the last run the
    // script waited for.
    let mut together = Vec::new();
    for (i, r) in roots.iter().enumerate().take(me) {
        if is_background(r) {
            together.push(i);
        } else {
            together.clear();
        }
    }
    let script = text_at(ctx.front, &["script"]);
    let mine = devices(ctx.front);
    let mut sum = f;
    // A share no key sets is JAX's default: the message says so, or 0.75 reads as a typo.
    let default_note = |explicit: bool| if explicit { "" } else { " (JAX's default)" };
    let mut parts = vec![format!("{f}{} here", default_note(explicit))];
    for &i in &together {
        let r = &roots[i];
        if text_at(r, &["env", "XLA_PYTHON_CLIENT_PREALLOCATE"])
            .is_some_and(|v| v.eq_ignore_ascii_case("false") || v == "0")
        {
            continue;
        }
        if !overlap(&mine, &devices(r)) {
            continue;
        }
        // A run without the variable takes JAX's default, when it runs the same JAX script.
        let (theirs, explicit) = match text_at(r, &["env", VAR]) {
            Some(t) => match t.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 1.0 => (v, true),
                _ => continue,
            },
            None if text_at(r, &["script"]) == script && script.is_some() => (JAX_DEFAULT, false),
            None => continue,
        };
        sum += theirs;
        let (line, _) = ctx.lines().position(ctx.text, r.span.start);
        parts.push(format!(
            "{theirs}{} for the run on line {line}",
            default_note(explicit)
        ));
    }
    // Past 1 only with another run's share, as `f` is at most 1. The margin keeps float sums
    // such as 0.34 + 0.56 + 0.1 (1.0000000000000002) at 1.
    if sum <= 1.0 + 1e-9 {
        return None;
    }
    let gpus = match &mine {
        Some(ids) => format!("GPU {}", ids.join(",")),
        None => "the same GPUs".into(),
    };
    Some(Violation {
        message: format!(
            "runs started together on {gpus} reserve {} = {:.2} of its memory ({VAR}): JAX takes its share at start, so this run fails with out-of-memory; give the runs separate GPUs (CUDA_VISIBLE_DEVICES) or fractions that add up to at most 1",
            parts.join(" + "),
            sum
        ),
        span: if explicit {
            ctx.span_of(Concept::MemFraction)
        } else {
            ctx.front.span.start..ctx.front.span.start
        },
        fix: None,
    })
}

fn is_background(root: &Node) -> bool {
    root.get_path(&["background"])
        .and_then(|n| n.as_scalar())
        .is_some_and(|s| s.value(Loader::Yaml11) == Value::Bool(true))
}

fn text_at<'n>(root: &'n Node, path: &[&str]) -> Option<&'n str> {
    root.get_path(path)
        .and_then(|n| n.as_scalar())
        .map(|s| s.text.as_str())
}

/// The GPU ids a run sees (`CUDA_VISIBLE_DEVICES`); `None`: all of them.
fn devices(root: &Node) -> Option<Vec<String>> {
    let t = text_at(root, &["env", "CUDA_VISIBLE_DEVICES"])?;
    Some(
        t.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
    )
}

fn overlap(a: &Option<Vec<String>>, b: &Option<Vec<String>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.iter().any(|x| b.contains(x)),
        _ => true,
    }
}
