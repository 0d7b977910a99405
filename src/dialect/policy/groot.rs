//! GR00T N1.7's step (LeRobot's `groot`), sized from its config: which of its five groups
//! train (the `tune_*` flags, true meaning *train*), its cameras and the chunk. The parts are
//! the catalog's (`groot-n1.7` in rules/models.toml: the Cosmos-Reason2-2B vision tower and
//! its first 16 LLM layers, the VL self-attention, the DiT and the per-embodiment projectors),
//! each given its tokens here.
//!
//! Cited at lerobot@7427f318, paths under src/lerobot/policies/groot/.

use serde::Deserialize;

use super::super::described::{composite, int, opaque, part};
use super::{unread_cameras, Cameras, Freeze, Key, PolicySpec, Reader};
use crate::estimate::models::{lookup, Architecture};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrootSpec {
    /// The catalog composite whose parts are sized.
    pub model: String,
    /// The `tune_*` flags: unlike a freeze flag, true means the named parts train.
    pub tune: Vec<Freeze>,
    /// The top LLM layers that train while the rest of it is frozen.
    pub top_layers: Key,
    pub chunk: Key,
    /// The checkpoint's action horizon: the DiT reads at most this many action rows.
    pub horizon: u64,
    /// All parameters cast to fp32 (false: the checkpoint's dtype, which the file does not give).
    pub params_fp32: Key,
    /// Tokens per camera in the LLM's sequence, and the chat template's own.
    pub image_tokens: u64,
    pub template_tokens: u64,
    /// The task text, least and most tokens: padded to the batch's longest, no maximum.
    pub task_tokens: (u64, u64),
    pub source: String,
}

fn catalog(name: &str) -> Result<&'static Architecture, String> {
    lookup(name).ok_or_else(|| format!("the catalog has no `{name}`"))
}

/// The LLM's dims with `layers` of its blocks (the rest in another part): a language model
/// inside a policy, no LM loss; `embeddings` false for the part past the first.
fn llm_dims(a: &Architecture, layers: u64, embeddings: bool) -> toml::Value {
    let mut t = toml::Table::new();
    t.insert("family".into(), "llama".into());
    t.insert("hidden_size".into(), int(a.hidden_size));
    t.insert("num_layers".into(), int(layers));
    t.insert("num_heads".into(), int(a.num_heads));
    t.insert("num_kv_heads".into(), int(a.kv_heads()));
    t.insert("head_dim".into(), int(a.head_dim()));
    t.insert("intermediate_size".into(), int(a.intermediate()));
    t.insert(
        "vocab_size".into(),
        int(if embeddings { a.vocab_size } else { 0 }),
    );
    t.insert("tie_word_embeddings".into(), a.tie_word_embeddings.into());
    t.insert("qk_norm".into(), a.qk_norm.into());
    t.insert(
        "max_position_embeddings".into(),
        int(a.max_position_embeddings),
    );
    toml::Value::Table(t)
}

/// GR00T's step (`GrootPolicy.forward`, modeling_groot.py:446-471, into
/// groot_n1_7.py:869-872): every camera's frame goes through the vision tower at 256x256
/// (64 tokens after the 2x2 merge, configuration_groot.py:46-49, processor_groot.py:1246-1250)
/// into one chat message with the task text (processor_groot.py:2165-2192); the LLM's 16th
/// layer feeds the VL self-attention over the whole sequence (groot_n1_7.py:562-565), whose
/// output the DiT's even blocks cross-attend to, over the state token and the action rows
/// (:576-598).
pub(super) fn groot(
    r: &Reader,
    spec: &PolicySpec,
    g: &GrootSpec,
    cams: &Cameras,
) -> Result<toml::Table, String> {
    let model = catalog(&g.model)?;
    if !r.bool(&g.params_fp32)? {
        return Err(format!(
            "`{}` is false, which leaves the parameters in the checkpoint's dtype, and the file does not say which",
            r.full(&g.params_fp32.key)
        ));
    }
    let mut trains = std::collections::BTreeMap::new();
    for t in &g.tune {
        let on = r.bool(&Key {
            key: t.key.clone(),
            default: Some(toml::Value::Boolean(t.default)),
        })?;
        for p in &t.parts {
            trains.insert(p.as_str(), (on, r.full(&t.key)));
        }
    }
    let trained = |name: &str| trains.get(name).is_some_and(|(on, _)| *on);
    let (most, least) = match cams {
        Cameras::Listed(c) => (c.len() as u64, c.len() as u64),
        Cameras::Fixed(n) => (*n, *n),
        Cameras::Unread => (spec.cameras_unread.1, spec.cameras_unread.0),
    };
    if most == 0 {
        return Err(format!(
            "`{}` lists no camera, and GR00T reads at least one",
            r.full(&spec.features)
        ));
    }
    let chunk = r.int(&g.chunk)?.min(g.horizon);
    let (task_least, task_most) = g.task_tokens;
    let seq = |cams: u64, task: u64| cams * g.image_tokens + g.template_tokens + task;
    let (s_most, s_least) = (seq(most, task_most), seq(least, task_least));
    let top = r.int(&g.top_layers)?;
    let vlm = model
        .parts
        .iter()
        .find(|p| p.name == "vlm")
        .ok_or_else(|| format!("the catalog's `{}` has no vlm", g.model))?;
    let llm = &vlm.arch;
    if top > llm.num_layers {
        return Err(format!(
            "`{}` is {top}, more than the LLM's {} layers",
            r.full(&g.top_layers.key),
            llm.num_layers
        ));
    }
    // A trained vision tower under a frozen LLM: its gradient passes back through the LLM.
    let passes = trained("vision") && !trained("vlm");
    let dit = model
        .parts
        .iter()
        .find(|p| p.name == "action expert")
        .ok_or_else(|| format!("the catalog's `{}` has no action expert", g.model))?;
    let mut parts = Vec::new();
    for p in &model.parts {
        let name = p.name.as_str();
        let mut e: Vec<(&str, toml::Value)> = vec![("name", p.name.clone().into())];
        let tokens = |e: &mut Vec<(&str, toml::Value)>| {
            e.push(("tokens", int(s_most)));
            if s_least < s_most {
                e.push(("tokens_least", int(s_least)));
            }
        };
        match name {
            "vision" | "vision mergers" => {
                e.push(("model", p.model.clone().into()));
                e.push(("count", int(most)));
                if least < most {
                    e.push(("count_least", int(least)));
                }
                if name == "vision" {
                    e.push((
                        "tokens",
                        int((p.arch.image_size / p.arch.patch_size.max(1)).pow(2)),
                    ));
                }
            }
            "vlm" if top > 0 && !trained("vlm") => {
                // The bottom layers frozen, the top ones trained (groot_n1_7.py:326-329).
                let bottom = llm.num_layers - top;
                let mut low = vec![
                    ("name", "vlm".into()),
                    ("dims", llm_dims(llm, bottom, true)),
                ];
                tokens(&mut low);
                low.push((
                    if passes { "passes_gradients" } else { "frozen" },
                    true.into(),
                ));
                if bottom > 0 {
                    parts.push(part(low));
                }
                e = vec![
                    ("name", "vlm top layers".into()),
                    ("dims", llm_dims(llm, top, bottom == 0)),
                ];
                tokens(&mut e);
                parts.push(part(e));
                continue;
            }
            "vlm" | "vl self-attention" => {
                e.push(("model", p.model.clone().into()));
                tokens(&mut e);
            }
            "backbone outputs" => {
                // The backbone's forward returns, before the action head runs, with every
                // hidden state (`output_hidden_states=True`, groot_n1_7.py:436; fp32 under
                // fp32 weights: two compute-dtype elements each) and the LM head's logits at
                // every position, which nothing reads (Qwen3VLForConditionalGeneration applies
                // it to all of them).
                let outputs =
                    s_most * (llm.vocab_size + 2 * (llm.num_layers + 1) * llm.hidden_size);
                e.push(("dims", opaque(0, 0, 0, outputs)));
                parts.push(part(e));
                continue;
            }
            "action expert" => {
                e.push(("model", p.model.clone().into()));
                e.push(("tokens", int(1 + chunk)));
            }
            "action expert extras" => {
                // The cross-attending half of the DiT's blocks keep their keys and values over
                // the backbone's tokens, and the backbone features they read
                // (action_head/cross_attention_dit.py:351-378).
                let cross = dit.arch.num_layers / 2;
                let kept = cross * s_most * 2 * dit.arch.hidden_size + s_most * llm.hidden_size;
                e.push(("dims", opaque(p.arch.params, kept, 0, 0)));
            }
            "projectors" => e.push(("model", p.model.clone().into())),
            other => {
                return Err(format!(
                    "the catalog's `{}` has a part `{other}` hwlint does not size",
                    g.model
                ))
            }
        }
        if !trained(name) {
            e.push((
                if name == "vlm" && passes {
                    "passes_gradients"
                } else {
                    "frozen"
                },
                true.into(),
            ));
        }
        parts.push(part(e));
    }
    // Parts of weights only: the backbone's outputs have none to freeze.
    let frozen: Vec<String> = model
        .parts
        .iter()
        .filter(|p| !trained(&p.name) && p.name != "backbone outputs")
        .map(|p| match trains.get(p.name.as_str()) {
            Some((_, key)) => format!("{} (`{key}` false)", p.name),
            None => p.name.clone(),
        })
        .collect();
    let cams_text = if least < most {
        format!("{least}-{most} cameras")
    } else {
        format!("{most} camera(s)")
    };
    let mut source = format!(
        "{}: {cams_text} x {} tokens at 256x256 + {} template + {}-{} task tokens through the LLM (its unused vocabulary logits a transient of forward), the VL self-attention over them; the DiT over 1 + {chunk} action tokens",
        g.source, g.image_tokens, g.template_tokens, task_least, task_most
    );
    if top > 0 && !trained("vlm") {
        source.push_str(&format!(
            "; the LLM's top {top} layers train (`{}`)",
            r.full(&g.top_layers.key)
        ));
    }
    if !frozen.is_empty() {
        source.push_str(&format!("; frozen: {}", frozen.join(", ")));
    }
    if passes {
        source.push_str("; the vision tower's gradient passes back through the frozen LLM");
    }
    let mut why = vec![format!(
        "the task text, {task_least} to {task_most} tokens: the prompt is padded to the batch's longest task (processor_groot.py:2187-2192)"
    )];
    if least < most {
        why.insert(0, unread_cameras(r, spec, false));
    }
    Ok(composite(parts, source, Some(why.join("; "))))
}
