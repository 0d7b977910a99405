//! The catalog tables of models a config describes by its own keys (V-JEPA's steps, robot
//! policies): what the builders in jepa.rs, jepa_ac.rs and policy.rs hand the estimator, in the
//! shape rules/models.toml entries have.

/// A count as a TOML integer (counts past i64 are capped; the estimator's bounds refuse them).
pub(super) fn int(n: u64) -> toml::Value {
    toml::Value::Integer(n.min(i64::MAX as u64) as i64)
}

/// An opaque part's dimensions: its parameters and, where the dialect counted them op by op,
/// the elements a sample keeps for backward, holds as fp32 input and holds for a moment
/// (`Architecture`'s `kept_per_sample`, `input_per_sample`, `transient_per_sample`; zero: none).
pub(super) fn opaque(params: u64, kept: u64, input: u64, transient: u64) -> toml::Value {
    let mut t = toml::Table::new();
    t.insert("family".into(), "opaque".into());
    t.insert("params".into(), int(params));
    for (key, n) in [
        ("kept_per_sample", kept),
        ("input_per_sample", input),
        ("transient_per_sample", transient),
    ] {
        if n > 0 {
            t.insert(key.into(), int(n));
        }
    }
    toml::Value::Table(t)
}

/// One `[[parts]]` entry.
pub(super) fn part(entries: Vec<(&str, toml::Value)>) -> toml::Value {
    toml::Value::Table(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// A composite of `parts`, with where its dimensions come from and, when its counts are
/// bounded by something other than random masks, what decides them.
pub(super) fn composite(
    parts: Vec<toml::Value>,
    source: String,
    least_when: Option<String>,
) -> toml::Table {
    let mut table = toml::Table::new();
    table.insert("family".into(), "composite".into());
    table.insert("parts".into(), toml::Value::Array(parts));
    table.insert("source".into(), source.into());
    if let Some(w) = least_when {
        table.insert("least_when".into(), w.into());
    }
    table
}

/// A ViT block stack of the config's own dimensions (a V-JEPA predictor): `depth` blocks of
/// `width`, `heads` heads and an MLP of `mlp_ratio` x the width.
pub(super) fn vit_dims(depth: u64, width: u64, heads: u64, mlp_ratio: f64) -> toml::Value {
    let mut dims = toml::Table::new();
    dims.insert("family".into(), "vit".into());
    dims.insert("hidden_size".into(), int(width));
    dims.insert("num_layers".into(), int(depth));
    dims.insert("num_heads".into(), int(heads));
    dims.insert(
        "intermediate_size".into(),
        int((width as f64 * mlp_ratio) as u64),
    );
    toml::Value::Table(dims)
}
