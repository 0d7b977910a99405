//! Reads a document through a dialect into a [`TrainingSetup`].

use super::setup::{
    Concept, InlineModel, NewerKey, Origin, Setting, SettingValue, TrainingSetup, ValueType,
};
use super::spec::{ArchitectureSource, Condition, Dialect, Source};
use crate::syntax::{Loader, Node, NodeKind, Value};

/// The canonical setup a dialect reads from `root`.
pub fn resolve(dialect: &Dialect, root: &Node) -> TrainingSetup {
    let mut setup = TrainingSetup {
        dialect: dialect.name.clone(),
        settings: Default::default(),
        not_training: not_training(dialect, root),
        recipe: None,
        architecture: None,
        architecture_unread: None,
        unread: Default::default(),
        version: None,
        bitsandbytes: None,
        newer_keys: Default::default(),
        ignored: Default::default(),
    };
    // A policy or detector the file describes but hwlint cannot size from its keys is not read
    // at all: the catalog's entry for a policy's name would be another configuration of it.
    let mut policy_unread = None;
    let described = match architecture(dialect, root) {
        Ok(None) => match super::jepa::architecture(dialect, root) {
            Ok(None) => match super::policy::architecture(dialect, root) {
                Ok(None) => super::detector::architecture(dialect, root),
                found => found,
            }
            .or_else(|why| {
                policy_unread = Some(why);
                Ok(None)
            }),
            other => other,
        },
        other => other,
    };
    match described {
        Ok(a) => setup.architecture = a,
        Err(why) => setup.architecture_unread = Some(why),
    }
    let mut fractions = Vec::new();
    for (&concept, spec) in dialect.settings.iter() {
        // The first of the concept's keys the file sets, for saying why it was not read.
        let present = || {
            spec.from
                .iter()
                .find_map(|s| root.get_dotted(&s.key).map(|n| (s, n)))
        };
        if let Some(unless) = &spec.unless {
            if condition_holds(dialect.loader, root, unless) != Some(false) {
                if let Some((source, _)) = present() {
                    setup.unread.insert(
                        concept,
                        format!(
                            "hwlint does not read `{}` when {}",
                            source.key,
                            condition_text(unless)
                        ),
                    );
                }
                continue;
            }
        }
        if !spec.when_any.is_empty()
            && !spec
                .when_any
                .iter()
                .any(|c| condition_holds(dialect.loader, root, c) == Some(true))
        {
            if let Some((source, _)) = present() {
                let any: Vec<String> = spec.when_any.iter().map(condition_text).collect();
                setup.unread.insert(
                    concept,
                    format!(
                        "hwlint reads `{}` only when {}",
                        source.key,
                        any.join(" or ")
                    ),
                );
            }
            continue;
        }
        match spec
            .when
            .as_ref()
            .map(|c| condition_holds(dialect.loader, root, c))
        {
            Some(Some(false)) => {
                if let (Some((source, _)), Some(when)) = (present(), &spec.when) {
                    setup.unread.insert(
                        concept,
                        format!(
                            "hwlint reads `{}` only when {}",
                            source.key,
                            condition_text(when)
                        ),
                    );
                }
                continue;
            }
            Some(None) => {
                let Some(key) = spec.from.first().map(|s| s.key.clone()) else {
                    continue;
                };
                let value = SettingValue::Unknown("depends on a run-time value".into());
                let origin = Origin::Default {
                    key,
                    relevant: false,
                    framework: dialect.title.clone(),
                    caveat: None,
                    ignored: None,
                };
                setup.settings.insert(concept, Setting { value, origin });
                continue;
            }
            _ => {}
        }
        let mut found = None;
        for (i, source) in spec.from.iter().enumerate() {
            if let Some((setting, fraction)) = read_source(dialect.loader, root, concept, source) {
                if fraction {
                    fractions.push(concept);
                }
                // A key later releases added: what the setting is without it, for a pinned
                // release that predates it.
                if let Some(since) = &source.since {
                    let older = spec.from[i + 1..]
                        .iter()
                        .find_map(|s| read_source(dialect.loader, root, concept, s))
                        .map(|(s, _)| s)
                        .or_else(|| default_setting(dialect, root, concept, spec));
                    setup.newer_keys.insert(
                        concept,
                        NewerKey {
                            since: since.clone(),
                            key: source.key.clone(),
                            older,
                        },
                    );
                }
                found = Some(setting);
                break;
            }
        }
        if found.is_none() {
            if let Some(why) = present()
                .map(|(source, node)| source_unread(dialect.loader, root, concept, source, node))
            {
                setup.unread.insert(concept, why);
            }
        }
        let setting = found.or_else(|| default_setting(dialect, root, concept, spec));
        if let Some(s) = setting {
            setup.settings.insert(concept, s);
        }
    }
    // Fractions of the run (HF `warmup_steps: 0.1`) become steps once the run length is known.
    let total = setup.int(Concept::TotalSteps).map(|(t, _)| t);
    for concept in fractions {
        if let Some(s) = setup.settings.get_mut(&concept) {
            if let SettingValue::Float(f) = s.value {
                s.value = match total {
                    Some(t) => SettingValue::Float((f * t as f64).ceil()),
                    None => SettingValue::Unknown(format!("{f} of the total steps")),
                };
            }
        }
    }
    if let Some(why) = policy_unread {
        setup.settings.remove(&Concept::Model);
        setup.unread.insert(Concept::Model, why);
    }
    setup
}

/// The framework's default for a setting the file does not set, named by the key a reader
/// would add to change it.
fn default_setting(
    dialect: &Dialect,
    root: &Node,
    concept: Concept,
    spec: &super::spec::SettingSpec,
) -> Option<Setting> {
    if spec
        .default_unless
        .as_ref()
        .is_some_and(|c| condition_holds(dialect.loader, root, c) == Some(true))
    {
        return None;
    }
    let default = spec.default.as_ref()?;
    // The key a reader would add to change it: the one whose values include the default,
    // else one that takes any value (not a switch mapped to one), else the first; never
    // one read only under a condition the file does not meet (verl's Megatron dtype in
    // an FSDP run).
    let applies = |s: &&Source| {
        s.when
            .as_ref()
            .is_none_or(|c| condition_holds(dialect.loader, root, c) != Some(false))
    };
    let key = spec
        .from
        .iter()
        .filter(applies)
        .find(|s| {
            s.map
                .as_ref()
                .is_some_and(|m| m.values().any(|v| v == default))
        })
        .or_else(|| {
            spec.from
                .iter()
                .find(|s| s.map.is_none() && s.when.is_none())
        })
        .or(spec.from.first())?
        .key
        .clone();
    Some(Setting {
        value: from_toml(concept, default),
        origin: Origin::Default {
            key,
            relevant: spec.default_relevant,
            framework: dialect.title.clone(),
            caveat: None,
            ignored: None,
        },
    })
}

/// The first `[[not_training]]` marker of the dialect that holds for `root`, as its reason. A
/// condition on a symbolic value (`${mode}`) does not hold: unknown never silences a rule.
/// The model the file describes by its dimensions, as the dialect's `[architecture]` reads it:
/// `None` when the dialect has none or its mapping is absent; an error naming the condition that
/// does not hold when the file describes a model the estimator has no recipe for.
fn architecture(dialect: &Dialect, root: &Node) -> Result<Option<InlineModel>, String> {
    let Some(spec) = dialect.architecture.as_ref() else {
        return Ok(None);
    };
    let dashes = spec.dashes_are_underscores;
    let Some((at_key, at)) = spelled(root, &spec.at, dashes) else {
        return Ok(None);
    };
    if let Some(cond) = spec
        .when
        .iter()
        .find(|cond| condition_in(dialect.loader, root, cond, dashes) != Some(true))
    {
        // `*` accepts any value: the key must be there.
        let accepted = if cond.is.iter().any(|v| v == "*") {
            "a value it gives".to_string()
        } else {
            cond.is
                .iter()
                .map(|v| {
                    if v.is_empty() {
                        "an empty value".to_string()
                    } else {
                        format!("`{v}`")
                    }
                })
                .collect::<Vec<_>>()
                .join(" or ")
        };
        let value = match lookup(root, &cond.key, dashes) {
            Some(n) => n.as_scalar().map(|s| value_text(&s.value(dialect.loader))),
            None => cond.default.clone(),
        };
        return Err(match value {
            Some(v) => format!(
                "`{}` is `{v}`, and hwlint sizes it only at {accepted}",
                cond.key
            ),
            None if lookup(root, &cond.key, dashes).is_none()
                && cond.is.iter().any(|v| v == "*") =>
            {
                format!(
                    "`{}` is not set, and hwlint sizes this model only from it",
                    cond.key
                )
            }
            None if lookup(root, &cond.key, dashes).is_none() => format!(
                "`{}` is not set, and hwlint sizes it only at {accepted}",
                cond.key
            ),
            None => format!(
                "`{}` is not a plain value, and hwlint sizes it only at {accepted}",
                cond.key
            ),
        });
    }
    let family = spec
        .family_by
        .as_ref()
        .and_then(|by| {
            let loaded = lookup(root, &by.key, dashes)?
                .as_scalar()?
                .value(dialect.loader);
            by.map.get(&value_text(&loaded))
        })
        .unwrap_or(&spec.family);
    let mut table = toml::Table::new();
    table.insert("family".into(), toml::Value::String(family.clone()));
    for (field, value) in &spec.defaults {
        table.insert(field.clone(), value.clone());
    }
    for (field, sources) in &spec.fields {
        let value = sources
            .iter()
            .find_map(|s| architecture_value(dialect.loader, root, s, dashes));
        if let Some(v) = value {
            table.insert(field.clone(), v);
        }
    }
    Ok(Some(InlineModel {
        table,
        key: at_key,
        span: at.span.clone(),
        flat: at.as_scalar().is_some(),
        own_blocks: !spec.catalog_blocks,
        configures_named: false,
    }))
}

fn architecture_value(
    loader: Loader,
    root: &Node,
    source: &ArchitectureSource,
    dashes: bool,
) -> Option<toml::Value> {
    if let Some(cond) = &source.when {
        if condition_in(loader, root, cond, dashes) != Some(true) {
            return None;
        }
    }
    let scalar = lookup(root, &source.key, dashes)?.as_scalar()?;
    let loaded = scalar.value(loader);
    if let Some(map) = &source.map {
        return map.get(&value_text(&loaded)).cloned();
    }
    let number = |v: &Value| v.as_f64();
    match &loaded {
        Value::Bool(b) => Some(toml::Value::Boolean(*b)),
        Value::Int(_) | Value::Float(_) => {
            let mut x = number(&loaded)?;
            if let Some(other) = &source.times_key {
                let o = lookup(root, other, dashes)?.as_scalar()?.value(loader);
                x *= number(&o)?;
            }
            x *= source.scale.unwrap_or(1.0);
            // The catalog's dimensions are whole numbers: a fractional product is no dimension.
            (x >= 0.0 && x.fract() == 0.0 && x < 9e15).then_some(toml::Value::Integer(x as i64))
        }
        // An interpolation (`${variables.max_seq_len}`) is no dimension: the default stands.
        Value::Str(t) if is_symbolic(t) => None,
        Value::Str(t) => Some(toml::Value::String(t.clone())),
        Value::Null | Value::Unknown => None,
    }
}

fn not_training(dialect: &Dialect, root: &Node) -> Option<String> {
    dialect
        .not_training
        .iter()
        .find(|m| {
            m.when
                .iter()
                .all(|c| condition_holds(dialect.loader, root, c) == Some(true))
                && !m.absent.iter().any(|k| root.get_dotted(k).is_some())
        })
        .map(|m| m.why.clone())
}

fn path_of(key: &str) -> Vec<&str> {
    super::key_path(key)
}

/// The loaded value as text, the way the dialect's `map` tables spell it.
fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Str(s) => s.clone(),
        Value::Unknown => "?".into(),
    }
}

/// `auto`, OmegaConf interpolations and `???` are resolved at run time, not in the file.
fn is_symbolic(s: &str) -> bool {
    let t = s.trim();
    t.eq_ignore_ascii_case("auto") || t.contains("${") || t == "???" || t.starts_with("{{")
}

/// The name a call in code reads as (`lr_schedule=_optimizer.CosineDecaySchedule(...)` reads
/// as `CosineDecaySchedule`): a dialect's `map` and conditions name the class, not its module.
pub(super) fn callee(node: &Node) -> Option<&str> {
    let c = node.tag.as_deref()?.strip_prefix("call:")?;
    Some(c.rsplit('.').next().unwrap_or(c))
}

/// Whether another key has one of the accepted values: `None` when it is symbolic.
/// A condition as a message states it: "`key` is `a` or `b`" (or "is set" for `*`).
pub(super) fn condition_text(cond: &Condition) -> String {
    if let Some(other) = &cond.equals {
        return format!("`{}` equals `{other}`", cond.key);
    }
    if cond.is.iter().any(|v| v == "*") {
        return format!("`{}` is set", cond.key);
    }
    let values: Vec<String> = cond.is.iter().map(|v| format!("`{v}`")).collect();
    format!("`{}` is {}", cond.key, values.join(" or "))
}

/// Why a source whose key is in the file gave no setting: its own condition does not hold, or
/// its value is none the dialect maps.
fn source_unread(
    loader: Loader,
    root: &Node,
    concept: Concept,
    source: &Source,
    node: &Node,
) -> String {
    if let Some(cond) = &source.when {
        if condition_holds(loader, root, cond) == Some(false) {
            return format!(
                "hwlint reads `{}` only when {}",
                source.key,
                condition_text(cond)
            );
        }
    }
    let written = callee(node)
        .map(str::to_string)
        .or_else(|| node.as_scalar().map(|s| s.text.trim().to_string()));
    match (written, &source.map) {
        (Some(v), Some(_)) if concept == Concept::Model => format!(
            "`{}` is `{v}`, which hwlint does not map to a model in its catalog",
            source.key
        ),
        (Some(v), Some(_)) => format!(
            "`{}` is `{v}`, which hwlint does not map to a value it can use",
            source.key
        ),
        (Some(v), None) => format!("`{}` is `{v}`, which hwlint cannot read", source.key),
        (None, _) => format!("`{}` is not a plain value hwlint can read", source.key),
    }
}

pub(crate) fn condition_holds(loader: Loader, root: &Node, cond: &Condition) -> Option<bool> {
    condition_in(loader, root, cond, false)
}

/// Whether `cond` does not hold for sure or cannot be known (a symbolic value).
pub(super) fn unmet(loader: Loader, root: &Node, cond: &Condition) -> bool {
    condition_holds(loader, root, cond) != Some(true)
}

/// The loaded value at a dotted key, when it is a plain one.
pub(super) fn lookup_value(loader: Loader, root: &Node, key: &str) -> Option<Value> {
    Some(root.get_dotted(key)?.as_scalar()?.value(loader))
        .filter(|v| !matches!(v, Value::Unknown | Value::Null))
}

/// The node at a dotted key; with `dashes`, also under the spelling with `-` and `_` swapped
/// (GPT-NeoX reads `num-layers` as `num_layers`).
fn lookup<'a>(root: &'a Node, key: &str, dashes: bool) -> Option<&'a Node> {
    spelled(root, key, dashes).map(|(_, node)| node)
}

/// The node at `key` with the spelling the file uses: as written, or with `-` and `_` swapped
/// under `dashes`.
fn spelled<'a>(root: &'a Node, key: &str, dashes: bool) -> Option<(String, &'a Node)> {
    if let Some(node) = root.get_dotted(key) {
        return Some((key.to_string(), node));
    }
    if !dashes {
        return None;
    }
    let swapped: String = key
        .chars()
        .map(|c| match c {
            '_' => '-',
            '-' => '_',
            c => c,
        })
        .collect();
    let node = root.get_dotted(&swapped)?;
    Some((swapped, node))
}

fn condition_in(loader: Loader, root: &Node, cond: &Condition, dashes: bool) -> Option<bool> {
    if let Some(other) = &cond.equals {
        let value = |key: &str| {
            let s = lookup(root, key, dashes)?.as_scalar()?;
            Some(s.value(loader)).filter(|v| !matches!(v, Value::Unknown | Value::Null))
        };
        return match (value(&cond.key), value(other)) {
            (Some(a), Some(b)) => Some(a.as_f64().zip(b.as_f64()).map_or(a == b, |(x, y)| x == y)),
            _ => Some(false),
        };
    }
    // `is = ["*"]` asks whether the key is set at all: a value known only at run time is set.
    let any = cond.is.iter().any(|x| x == "*");
    let other = match lookup(root, &cond.key, dashes) {
        Some(node) if callee(node).is_some() => callee(node).map(str::to_string),
        Some(node) => match node.as_scalar() {
            Some(s) if s.value(loader) == Value::Unknown => return any.then_some(true),
            Some(s) => Some(s.value(loader))
                .filter(|v| *v != Value::Null)
                .map(|v| value_text(&v)),
            // A mapping or list: present, with no text to compare.
            None => Some(String::from("{...}")),
        },
        None => None,
    }
    .or_else(|| cond.default.clone());
    match other {
        Some(v) if is_symbolic(&v) => any.then_some(true),
        Some(v) => Some(
            cond.is
                .iter()
                .any(|x| x == "*" || x.eq_ignore_ascii_case(&v)),
        ),
        None => Some(false),
    }
}

/// Reads one source. Returns the setting and whether it is a fraction of the total steps.
fn read_source(
    loader: Loader,
    root: &Node,
    concept: Concept,
    source: &Source,
) -> Option<(Setting, bool)> {
    if !source.gather.is_empty() {
        return gathered(loader, root, source).map(|s| (s, false));
    }
    let entry = root.get_entry_path(&path_of(&source.key))?;
    if let Some(cond) = &source.when {
        if condition_holds(loader, root, cond) == Some(false) {
            return None;
        }
    }
    let origin = Origin::File {
        // A product names both factors (no fix writes such a setting).
        key: match (&source.times_key, &source.plus_key) {
            (Some(other), _) => format!("{} x {other}", source.key),
            (None, Some(other)) => format!("{} + {other}", source.key),
            (None, None) => source.key.clone(),
        },
        key_span: entry.key_span.clone(),
        value_span: entry.value.span.clone(),
    };
    let node = &entry.value;
    if let (Some(name), Some(map)) = (callee(node), &source.map) {
        let value = from_toml(concept, map.get(name)?);
        return Some((Setting { value, origin }, false));
    }
    let value = match &node.kind {
        NodeKind::Seq(items) if source.list_len => SettingValue::Int(items.len() as i64),
        // A list whose items the map names (torchtitan's `converters`): the distinct values of
        // the items it lists, `a,b`; none listed skips the source.
        NodeKind::Seq(items) if source.map.is_some() && concept.value_type() == ValueType::Str => {
            let map = source.map.as_ref()?;
            let mut names: Vec<String> = Vec::new();
            for item in items.iter().filter_map(|i| i.as_scalar()) {
                if let Some(toml::Value::String(v)) = map.get(item.text.trim()) {
                    if !names.contains(v) {
                        names.push(v.clone());
                    }
                }
            }
            if names.is_empty() {
                return None;
            }
            SettingValue::Str(names.join(","))
        }
        // A list of names for a text setting (LoRA target modules) reads as `a,b`.
        NodeKind::Seq(items)
            if concept.value_type() == ValueType::Str
                && !items.is_empty()
                && items.iter().all(|i| i.as_scalar().is_some()) =>
        {
            SettingValue::Str(
                items
                    .iter()
                    .filter_map(|i| i.as_scalar())
                    .map(|s| s.text.clone())
                    .collect::<Vec<_>>()
                    .join(","),
            )
        }
        NodeKind::Seq(_) | NodeKind::Map(_) => SettingValue::Unknown("a structured value".into()),
        NodeKind::Scalar(s) => {
            let loaded = s.value(loader);
            // In code, a dotted constant (`torch.bfloat16`) is what a dialect's map names.
            if let (Value::Unknown, Some(hit)) = (
                &loaded,
                source.map.as_ref().and_then(|m| m.get(s.text.trim())),
            ) {
                return Some((
                    Setting {
                        value: from_toml(concept, hit),
                        origin,
                    },
                    false,
                ));
            }
            // A map whose one entry is `*` gives its value whatever the key holds, a value
            // known only at run time (`${adv_estimator}`) too.
            if let (Value::Unknown, Some(any)) = (
                &loaded,
                source
                    .map
                    .as_ref()
                    .filter(|m| m.len() == 1)
                    .and_then(|m| m.get("*")),
            ) {
                return Some((
                    Setting {
                        value: from_toml(concept, any),
                        origin,
                    },
                    false,
                ));
            }
            if loaded == Value::Unknown {
                // A custom tag, or a tagged text the loader cannot construct: the file's
                // own spelling says what it is.
                let written = node
                    .tag
                    .as_deref()
                    .map_or(String::new(), |t| format!("{t} "));
                return Some((
                    Setting {
                        value: SettingValue::Unknown(format!("{written}{}", s.text)),
                        origin,
                    },
                    false,
                ));
            }
            if loaded == Value::Null {
                // `key: null` / `key:` means "use the default".
                return None;
            }
            let text = value_text(&loaded);
            if source.unset.contains(&text) {
                return None;
            }
            if let Some(name) = &source.entry {
                // `rank=64, scale=0.25`: transformers strips the spaces and splits on `,` and `=`.
                let value = text.split(',').find_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    (k.trim() == name).then(|| v.trim().to_string())
                })?;
                let typed = value
                    .parse::<i64>()
                    .map(Value::Int)
                    .or_else(|_| value.parse::<f64>().map(Value::Float))
                    .unwrap_or(Value::Str(value));
                return Some((
                    Setting {
                        value: convert(concept, &typed),
                        origin,
                    },
                    false,
                ));
            }
            // A device string: `"0,1"` lists ids, `"2"` is a count (Lightning's device parser).
            if source.list_len && matches!(loaded, Value::Str(_)) && !is_symbolic(&text) {
                let value = if text.contains(',') {
                    SettingValue::Int(
                        text.split(',').filter(|x| !x.trim().is_empty()).count() as i64
                    )
                } else {
                    text.trim()
                        .parse()
                        .map_or(SettingValue::Unknown(text.clone()), SettingValue::Int)
                };
                return Some((Setting { value, origin }, false));
            }
            if let Some(map) = &source.map {
                // `*` maps every other value (a key only one trainer has names the trainer).
                let hit = map
                    .get(&text)
                    .or_else(|| map.get(&text.to_ascii_lowercase()))
                    .or_else(|| map.get("*").filter(|_| !is_symbolic(&text)));
                match hit {
                    Some(v) => from_toml(concept, v),
                    None if is_symbolic(&text) => SettingValue::Unknown(text),
                    None => return None,
                }
            } else if matches!(&loaded, Value::Str(s) if is_symbolic(s)) {
                SettingValue::Unknown(text)
            } else if source.size_gb {
                size_in_gb(&text).map_or(SettingValue::Unknown(text), SettingValue::Float)
            } else if let Some(other) = &source.plus_key {
                combined(root, loader, concept, &loaded, other, |v, o| v + o)?
            } else if let Some(other) = &source.times_key {
                combined(root, loader, concept, &loaded, other, |v, o| v * o)?
            } else if let Some(suffix) = &source.suffix_key {
                match root.get_dotted(suffix).and_then(|n| n.as_scalar()) {
                    Some(sfx) => {
                        SettingValue::Str(format!("{text}/{}", value_text(&sfx.value(loader))))
                    }
                    None => convert(concept, &loaded),
                }
            } else {
                convert(concept, &loaded)
            }
        }
    };
    let fraction =
        source.fraction_of_total && matches!(value, SettingValue::Float(f) if f > 0.0 && f < 1.0);
    Some((Setting { value, origin }, fraction))
}

/// `loaded` combined with the number at the key `other` (a sum of replicas, a product of
/// frames and tokens), typed for `concept`; `None` when either is not a number or an integer
/// setting would get a fraction.
fn combined(
    root: &Node,
    loader: Loader,
    concept: Concept,
    loaded: &Value,
    other: &str,
    op: impl Fn(f64, f64) -> f64,
) -> Option<SettingValue> {
    let o = root
        .get_dotted(other)
        .and_then(|n| n.as_scalar())
        .and_then(|s| s.value(loader).as_f64())?;
    let v = op(loaded.as_f64()?, o);
    match concept.value_type() {
        ValueType::Int if v.fract() == 0.0 => Some(SettingValue::Int(v as i64)),
        ValueType::Float => Some(SettingValue::Float(v)),
        _ => None,
    }
}

/// A SLURM memory size (`--mem-per-gpu`, which submitit's `mem_per_gpu` becomes) in GB of 10^9
/// bytes, as hwlint.toml's `ram_gb` counts: sbatch(1) reads a bare number as megabytes and the
/// suffixes K, M, G and T in powers of 1024 (`55G` is 59.1 GB). A trailing `B` (`60GB`) is
/// read as if absent. Zero, which SLURM does not define per GPU, and anything else is unknown.
fn size_in_gb(text: &str) -> Option<f64> {
    let t = text.trim().to_ascii_uppercase();
    let t = t.strip_suffix('B').unwrap_or(&t);
    let (num, mib) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1.0 / 1024.0),
        'M' => (&t[..t.len() - 1], 1.0),
        'G' => (&t[..t.len() - 1], 1024.0),
        'T' => (&t[..t.len() - 1], 1024.0 * 1024.0),
        _ => (t, 1.0),
    };
    let n = num.trim().parse::<f64>().ok()?;
    (n.is_finite() && n > 0.0).then(|| n * mib * 1_048_576.0 / 1e9)
}

fn convert(concept: Concept, v: &Value) -> SettingValue {
    let unknown = || SettingValue::Unknown(value_text(v));
    match (concept.value_type(), v) {
        (ValueType::Int, Value::Int(i)) => SettingValue::Int(*i),
        (ValueType::Int, Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9e15 => {
            SettingValue::Int(*f as i64)
        }
        (ValueType::Float, Value::Int(i)) => SettingValue::Float(*i as f64),
        (ValueType::Float, Value::Float(f)) => SettingValue::Float(*f),
        (ValueType::Bool, Value::Bool(b)) => SettingValue::Bool(*b),
        (ValueType::Str, Value::Str(s)) => SettingValue::Str(s.clone()),
        (ValueType::Str, Value::Int(_) | Value::Float(_) | Value::Bool(_)) => {
            SettingValue::Str(value_text(v))
        }
        _ => unknown(),
    }
}

pub(crate) fn from_toml(concept: Concept, v: &toml::Value) -> SettingValue {
    let value = match v {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        other => Value::Str(other.to_string()),
    };
    convert(concept, &value)
}

/// A [`Source::gather`]: the names of the boolean keys that hold, each absent one at its
/// default; nothing when none of them is in the file, unknown when one is not a boolean.
fn gathered(loader: Loader, root: &Node, source: &Source) -> Option<Setting> {
    let first = source
        .gather
        .iter()
        .find_map(|g| root.get_entry_path(&path_of(&g.key)))?;
    let origin = Origin::File {
        key: source.key.clone(),
        key_span: first.key_span.clone(),
        value_span: first.value.span.clone(),
    };
    let mut names: Vec<String> = Vec::new();
    for g in &source.gather {
        // A list of names (torchtune's `lora_attn_modules`) adds its items.
        if g.names.is_empty() {
            if let Some(NodeKind::Seq(items)) = root.get_dotted(&g.key).map(|n| &n.kind) {
                names.extend(
                    items
                        .iter()
                        .filter_map(|i| i.as_scalar())
                        .map(|s| s.text.trim().to_string()),
                );
            }
            continue;
        }
        let on = match lookup_value(loader, root, &g.key) {
            None => g.default,
            Some(Value::Bool(b)) => b,
            Some(other) => {
                return Some(Setting {
                    value: SettingValue::Unknown(format!("`{}` is {}", g.key, value_text(&other))),
                    origin,
                })
            }
        };
        if on {
            names.push(g.names.clone());
        }
    }
    Some(Setting {
        value: SettingValue::Str(names.join(",")),
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::parse_dialect;
    use crate::syntax::{parse, Format};

    /// The fields every test dialect has.
    const HEADER: &str = "name = \"t\"\ntitle = \"Test\"\nformats = [\"yaml\"]\n";

    fn dialect_with(body: &str) -> crate::dialect::Dialect {
        parse_dialect("t", &format!("{HEADER}{body}")).unwrap()
    }

    /// SLURM sizes: megabytes when bare, binary suffixes, in GB of 10^9 bytes.
    #[test]
    fn slurm_sizes_read_as_sbatch_reads_them() {
        let gb = |t: &str| size_in_gb(t).map(|g| (g * 1000.0).round() / 1000.0);
        assert_eq!(gb("55G"), Some(59.056));
        assert_eq!(gb("55GB"), Some(59.056));
        assert_eq!(gb("60g"), Some(64.425));
        assert_eq!(gb("61440M"), Some(64.425));
        assert_eq!(gb("61440"), Some(64.425));
        assert_eq!(gb("1T"), Some(1099.512));
        assert_eq!(gb("1048576K"), Some(1.074));
        for unknown in ["0", "0G", "-5G", "lots", "80GiB", "G", "", "inf", "NaNG"] {
            assert_eq!(size_in_gb(unknown), None, "{unknown}");
        }
    }

    const D: &str = r#"
[[detect]]
keys = { a = 1 }
min_score = 1
[settings.num_workers]
from = [{ key = "data.workers" }]
default = 0
[settings.precision]
from = [
  { key = "fp16", map = { "true" = "fp16-mixed" } },
  { key = "bf16", map = { "true" = "bf16-mixed", "false" = "fp32" } },
]
default = "fp32"
[settings.total_steps]
from = [{ key = "max_steps" }]
[settings.warmup_steps]
from = [{ key = "warmup", fraction_of_total = true }]
[settings.save_interval]
from = [{ key = "save_steps", when = { key = "save_strategy", is = ["steps"], default = "steps" } }]
[settings.devices_per_node]
from = [{ key = "gpus", list_len = true, unset = ["-1"] }]
[[not_training]]
why = "mode test"
when = [{ key = "mode", is = ["test"] }]
[[not_training]]
why = "inference only"
when = [{ key = "inference", is = ["*"] }]
absent = ["max_steps"]
"#;

    fn setup(yaml: &str) -> TrainingSetup {
        let d = dialect_with(D);
        let doc = parse(yaml, Format::Yaml).unwrap();
        resolve(&d, &doc.roots[0])
    }

    #[test]
    fn not_training_markers_and_device_strings() {
        assert_eq!(
            setup("mode: test\n").not_training.as_deref(),
            Some("mode test")
        );
        assert_eq!(setup("mode: ${m}\n").not_training, None);
        assert_eq!(setup("mode: train\n").not_training, None);
        let gen = "inference: {top_k: 1}\n";
        assert_eq!(setup(gen).not_training.as_deref(), Some("inference only"));
        assert_eq!(setup(&format!("{gen}max_steps: 10\n")).not_training, None);
        let devices = |yaml: &str| setup(yaml).int(Concept::DevicesPerNode).map(|(n, _)| n);
        assert_eq!(devices("gpus: \"0,1\"\n"), Some(2));
        assert_eq!(devices("gpus: \"3,\"\n"), Some(1));
        assert_eq!(devices("gpus: \"4\"\n"), Some(4));
        assert_eq!(devices("gpus: [0, 1, 2]\n"), Some(3));
        assert_eq!(devices("gpus: -1\n"), None);
    }

    #[test]
    fn defaults_maps_fractions_and_conditions() {
        let s =
            setup("a: 1\nfp16: false\nbf16: true\nmax_steps: 1000\nwarmup: 0.1\nsave_steps: 50\n");
        assert_eq!(s.str(Concept::Precision).unwrap().0, "bf16-mixed");
        let (w, origin) = s.int(Concept::NumWorkers).unwrap();
        assert_eq!(w, 0);
        assert!(!origin.origin.is_explicit());
        assert_eq!(s.float(Concept::WarmupSteps).unwrap().0, 100.0);
        assert_eq!(s.int(Concept::SaveInterval).unwrap().0, 50);
        let s = setup("a: 1\nsave_strategy: epoch\nsave_steps: 50\ndata: {workers: auto}\n");
        assert!(s.get(Concept::SaveInterval).is_none());
        assert!(s.is_unknown(Concept::NumWorkers));
        assert_eq!(s.str(Concept::Precision).unwrap().0, "fp32");
    }

    /// An `[architecture]` keyed in one spelling reads a file written in the other when the
    /// framework treats `-` as `_`, and picks its family by a key.
    #[test]
    fn architecture_keys_in_either_spelling_and_family_by_a_key() {
        let d = dialect_with(
            r#"
[[detect]]
keys = { num_layers = 1 }
min_score = 1
[architecture]
family = "gpt2"
family_by = { key = "gpt_j_residual", map = { "true" = "neox" } }
at = "num_layers"
dashes_are_underscores = true
when = [{ key = "pos_emb", is = ["rotary"] }]
[architecture.fields]
num_layers = [{ key = "num_layers" }]
hidden_size = [{ key = "hidden_size" }]
"#,
        );
        let model = |yaml: &str| {
            let doc = parse(yaml, Format::Yaml).unwrap();
            resolve(&d, &doc.roots[0]).architecture
        };
        let m = model("num-layers: 6\nhidden-size: 512\npos-emb: rotary\n").unwrap();
        assert_eq!((m.key.as_str(), m.flat), ("num-layers", true));
        assert_eq!(m.table["family"].as_str(), Some("gpt2"));
        assert_eq!(m.table["hidden_size"].as_integer(), Some(512));
        let m = model("num_layers: 6\npos_emb: rotary\ngpt_j_residual: true\n").unwrap();
        assert_eq!(m.table["family"].as_str(), Some("neox"));
        // A condition that does not hold, in either spelling: no model.
        assert!(model("num-layers: 6\npos-emb: learned\n").is_none());
    }

    #[test]
    fn a_setting_without_sources_is_refused() {
        let err = parse_dialect(
            "t.toml",
            &format!(
                "{HEADER}{}",
                D.replace(r#"from = [{ key = "max_steps" }]"#, "from = []")
            ),
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("[settings.total_steps] has an empty `from`"),
            "{}",
            err.message
        );
    }
}
