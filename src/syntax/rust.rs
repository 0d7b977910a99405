//! Rust configs (Burn), read with syn: `#[derive(Config)]` structs, their builder chains, data
//! loader and training builders, and the backend type.
//!
//! The tree (the contract `rules/dialects/burn.toml` relies on): `roots[0]` is a mapping (style
//! `Implicit`) holding
//! * one entry per `#[derive(Config)]` struct, keyed by its name (`TrainingConfig`): a mapping of
//!   its fields' `#[config(default = ...)]` values, then the values given to `Name::new(...)`
//!   (positional, for the fields without a default, in declaration order) and to `.with_<field>(..)`
//!   calls on it (last wins);
//! * `config`: the same mapping for the config struct the training reads (the one whose fields
//!   the builders use, else the first with `batch_size` or `num_epochs`), so the dialect need not
//!   know the struct's name;
//! * `DataLoaderBuilder`: `.batch_size(..)`, `.num_workers(..)`, `.shuffle(..)` of the builder
//!   chain bound to a name containing `train` (else the first), a mapping of style `Call`;
//! * `LearnerBuilder`: `.devices(vec![..])` (a sequence), `.num_epochs(..)`,
//!   `.grads_accumulation(..)` of `LearnerBuilder::new(..)` or `SupervisedTraining::new(..)`,
//!   style `Call`;
//! * `backend`: `{ name = "Wgpu", float = "f32" }` from the backend type in the file
//!   (`Autodiff<Wgpu<f32, i32>>`), the one inside `Autodiff` first.
//!
//! Expressions become nodes as in the Python front-end: literals editable, `config.field` the
//! field's node, constant expressions folded and `shared`, anything else unknown (`CustomTag`).

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::{
    Document, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError, Scalar, ScalarKind, Span,
    MAX_DEPTH,
};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;

/// syn recurses; this thread stack holds `MAX_DEPTH` levels with room to spare.
const STACK_BYTES: usize = 64 << 20;

/// Parses Rust source into the tree described in the module documentation.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    if let Some(at) = nested_too_deep(text) {
        return Err(ParseError::too_deep(at));
    }
    let owned = text.to_string();
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let out = build(&owned);
            // Spans keep a per-thread source map; this thread ends here, but say it anyway.
            proc_macro2::extra::invalidate_current_thread_spans();
            out
        })
        .map_err(|e| ParseError {
            message: format!("cannot start the Rust parser: {e}"),
            span: 0..0,
        })?;
    worker.join().unwrap_or_else(|_| {
        Err(ParseError {
            message: "the Rust parser failed on this file".into(),
            span: 0..0,
        })
    })
}

/// Where brackets nest deeper than [`MAX_DEPTH`], outside strings and comments (roughly).
fn nested_too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'"' {
            in_str = true;
        } else if matches!(c, b'(' | b'[' | b'{') {
            depth += 1;
            if depth > MAX_DEPTH {
                return Some(i);
            }
        } else if matches!(c, b')' | b']' | b'}') {
            depth = depth.saturating_sub(1);
        }
        i += 1;
    }
    None
}

fn span_of(s: proc_macro2::Span) -> Span {
    s.byte_range()
}

fn build(text: &str) -> Result<Document, ParseError> {
    let file = syn::parse_file(text).map_err(|e| ParseError {
        message: e.to_string(),
        span: span_of(e.span()),
    })?;
    let mut c = Collect {
        text,
        ..Default::default()
    };
    c.visit_file(&file);
    Ok(Document {
        format: Format::Rust,
        roots: vec![c.root()],
        duplicates: Vec::new(),
    })
}

/// A `#[derive(Config)]` struct.
#[derive(Default)]
struct ConfigStruct {
    name: String,
    name_span: Span,
    span: Span,
    /// Fields without a default, in order (what `::new(..)` takes).
    required: Vec<String>,
    entries: Vec<Entry>,
}

#[derive(Default)]
struct Collect<'t> {
    text: &'t str,
    configs: Vec<ConfigStruct>,
    /// Builder chains: (kind, binding name, node).
    builders: Vec<(&'static str, Option<String>, Node)>,
    /// Chains already read (their inner method calls are visited again by syn).
    seen: Vec<Span>,
    binding: Option<String>,
    backend: Option<(Node, bool)>,
    /// Field names the builders read through `config.x`, to tell which struct is the config.
    used_fields: Vec<String>,
}

fn scalar(text: &str, kind: ScalarKind, span: Span) -> Node {
    Node {
        span,
        kind: NodeKind::Scalar(Scalar {
            text: text.into(),
            kind,
        }),
        tag: None,
        shared: false,
    }
}

impl Collect<'_> {
    fn source(&self, s: &Span) -> &str {
        self.text.get(s.clone()).unwrap_or("")
    }

    fn unknown(&self, e: &syn::Expr) -> Node {
        let s = span_of(e.span());
        scalar(self.source(&s), ScalarKind::CustomTag, s)
    }

    fn node(&mut self, e: &syn::Expr, depth: usize) -> Node {
        if depth > MAX_DEPTH {
            return self.unknown(e);
        }
        let s = span_of(e.span());
        match e {
            syn::Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => match i.base10_parse::<i64>() {
                    Ok(v) => scalar(self.source(&s), ScalarKind::Int(v), s),
                    Err(_) => self.unknown(e),
                },
                syn::Lit::Float(f) => match f.base10_parse::<f64>() {
                    Ok(v) => scalar(self.source(&s), ScalarKind::Float(v), s),
                    Err(_) => self.unknown(e),
                },
                syn::Lit::Bool(b) => scalar(self.source(&s), ScalarKind::Bool(b.value), s),
                syn::Lit::Str(st) => {
                    let raw = self.source(&s).starts_with('r');
                    let q = if raw {
                        super::Quote::Block
                    } else {
                        super::Quote::Double
                    };
                    scalar(&st.value(), ScalarKind::Str(q), s)
                }
                _ => self.unknown(e),
            },
            syn::Expr::Paren(p) => self.node(&p.expr, depth + 1),
            syn::Expr::Field(f) => {
                // Resolved once the whole file is read (a `.with_x(..)` may come later).
                let mut n = self.unknown(e);
                if let syn::Member::Named(id) = &f.member {
                    let field = id.to_string();
                    self.used_fields.push(field.clone());
                    n.tag = Some(format!("field:{field}"));
                }
                n
            }
            syn::Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                let parsed = m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                );
                match parsed {
                    Ok(items) => Node {
                        span: s,
                        kind: NodeKind::Seq(
                            items.iter().map(|i| self.node(i, depth + 1)).collect(),
                        ),
                        tag: None,
                        shared: false,
                    },
                    Err(_) => self.unknown(e),
                }
            }
            syn::Expr::Unary(_) | syn::Expr::Binary(_) => {
                match fold(e, depth) {
                    Some(Num::Int(i)) => {
                        let mut n = scalar(self.source(&s), ScalarKind::Int(i), s);
                        // `-1` is a literal; `4 * 16` is not.
                        n.shared = !matches!(e, syn::Expr::Unary(u) if matches!(&*u.expr, syn::Expr::Lit(_)));
                        n
                    }
                    Some(Num::Float(f)) => {
                        let mut n = scalar(self.source(&s), ScalarKind::Float(f), s);
                        n.shared = !matches!(e, syn::Expr::Unary(u) if matches!(&*u.expr, syn::Expr::Lit(_)));
                        n
                    }
                    None => self.unknown(e),
                }
            }
            _ => self.unknown(e),
        }
    }

    /// `config.x` placeholders replaced by what the config struct finally gives `x`.
    fn resolve_fields(node: &mut Node, config: &[Entry]) {
        if let Some(field) = node.tag.as_deref().and_then(|t| t.strip_prefix("field:")) {
            if let Some(e) = config.iter().rev().find(|e| e.key == field) {
                *node = e.value.clone();
            }
            return;
        }
        match &mut node.kind {
            NodeKind::Map(m) => {
                let mut entries = m.entries.clone();
                for e in &mut entries {
                    Self::resolve_fields(&mut e.value, config);
                }
                let style = m.style;
                node.kind = NodeKind::Map(Map::new(entries, style));
            }
            NodeKind::Seq(items) => items
                .iter_mut()
                .for_each(|i| Self::resolve_fields(i, config)),
            NodeKind::Scalar(_) => {}
        }
    }

    /// A method chain `Root::new(..).a(x).b(y)`: its root type and its calls, inner first.
    fn chain(e: &syn::Expr) -> Option<(String, &syn::ExprCall, Vec<&syn::ExprMethodCall>)> {
        let mut calls = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                syn::Expr::MethodCall(m) => {
                    calls.push(m);
                    cur = &m.receiver;
                }
                syn::Expr::Call(c) => {
                    let syn::Expr::Path(p) = &*c.func else {
                        return None;
                    };
                    let segs: Vec<String> = p
                        .path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    if segs.len() < 2 || segs.last()? != "new" {
                        return None;
                    }
                    calls.reverse();
                    return Some((segs[segs.len() - 2].clone(), c, calls));
                }
                _ => return None,
            }
        }
    }

    fn read_chain(&mut self, e: &syn::Expr) {
        let s = span_of(e.span());
        if self
            .seen
            .iter()
            .any(|x| x.start <= s.start && s.end <= x.end)
        {
            return;
        }
        let Some((root, new_call, calls)) = Self::chain(e) else {
            return;
        };
        self.seen.push(s.clone());
        if let Some(i) = self.configs.iter().position(|c| c.name == root) {
            let required = self.configs[i].required.clone();
            let mut add = Vec::new();
            for (field, arg) in required.iter().zip(new_call.args.iter()) {
                add.push(Entry {
                    key: field.clone(),
                    key_span: span_of(arg.span()),
                    value: self.node(arg, 1),
                });
            }
            for m in &calls {
                let name = m.method.to_string();
                if let (Some(field), Some(arg)) = (name.strip_prefix("with_"), m.args.first()) {
                    add.push(Entry {
                        key: field.to_string(),
                        key_span: span_of(m.method.span()),
                        value: self.node(arg, 1),
                    });
                }
            }
            self.configs[i].entries.extend(add);
            return;
        }
        let kind: &'static str = match root.as_str() {
            "DataLoaderBuilder" => "DataLoaderBuilder",
            "LearnerBuilder" | "SupervisedTraining" => "LearnerBuilder",
            _ => return,
        };
        let mut entries = Vec::new();
        for m in &calls {
            let name = m.method.to_string();
            if let Some(arg) = m.args.first() {
                entries.push(Entry {
                    key: name,
                    key_span: span_of(m.method.span()),
                    value: self.node(arg, 1),
                });
            }
        }
        let node = Node {
            span: s,
            kind: NodeKind::Map(Map::new(entries, MapStyle::Call)),
            tag: Some(format!("call:{root}")),
            shared: false,
        };
        self.builders.push((kind, self.binding.clone(), node));
    }

    fn root(mut self) -> Node {
        let len = self.text.len();
        let mut entries = Vec::new();
        let mut by_kind: HashMap<&str, (bool, Node, Span)> = HashMap::new();
        for (kind, binding, node) in std::mem::take(&mut self.builders) {
            let train = binding.is_some_and(|b| b.to_ascii_lowercase().contains("train"));
            let key_span = node.span.start..node.span.start;
            match by_kind.get(kind) {
                Some((true, _, _)) => {}
                Some((false, _, _)) if !train => {}
                _ => {
                    by_kind.insert(kind, (train, node, key_span));
                }
            }
        }
        // The config the training reads: the one whose fields the builders use.
        let main = self
            .configs
            .iter()
            .position(|c| c.entries.iter().any(|e| self.used_fields.contains(&e.key)))
            .or_else(|| {
                self.configs.iter().position(|c| {
                    c.entries
                        .iter()
                        .any(|e| e.key == "batch_size" || e.key == "num_epochs")
                })
            });
        for (i, c) in self.configs.iter().enumerate() {
            let node = Node {
                span: c.span.clone(),
                kind: NodeKind::Map(Map::new(c.entries.clone(), MapStyle::Implicit)),
                tag: None,
                shared: false,
            };
            if Some(i) == main {
                entries.push(Entry {
                    key: "config".into(),
                    key_span: c.name_span.clone(),
                    value: node.clone(),
                });
            }
            entries.push(Entry {
                key: c.name.clone(),
                key_span: c.name_span.clone(),
                value: node,
            });
        }
        let mut kinds: Vec<_> = by_kind.into_iter().collect();
        kinds.sort_by_key(|(k, _)| *k);
        let main_entries = main
            .map(|i| self.configs[i].entries.clone())
            .unwrap_or_default();
        for (kind, (_, mut node, key_span)) in kinds {
            Self::resolve_fields(&mut node, &main_entries);
            entries.push(Entry {
                key: kind.to_string(),
                key_span,
                value: node,
            });
        }
        if let Some((b, _)) = self.backend.take() {
            entries.push(Entry {
                key: "backend".into(),
                key_span: b.span.clone(),
                value: b,
            });
        }
        Node {
            span: 0..len,
            kind: NodeKind::Map(Map::new(entries, MapStyle::Implicit)),
            tag: None,
            shared: false,
        }
    }

    /// A backend type (`Wgpu<f32, i32>`), from a path that names one.
    fn backend_of(&self, p: &syn::TypePath) -> Option<Node> {
        const BACKENDS: &[&str] = &[
            "Wgpu", "Cuda", "CudaJit", "LibTorch", "NdArray", "Candle", "Rocm", "Metal", "Vulkan",
            "WebGpu", "Cpu",
        ];
        let seg = p.path.segments.last()?;
        let name = seg.ident.to_string();
        if !BACKENDS.contains(&name.as_str()) {
            return None;
        }
        let ns = span_of(seg.ident.span());
        let mut entries = vec![Entry {
            key: "name".into(),
            key_span: ns.clone(),
            value: scalar(&name, ScalarKind::Str(super::Quote::Block), ns),
        }];
        if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
            if let Some(syn::GenericArgument::Type(syn::Type::Path(t))) = a.args.first() {
                if let Some(f) = t.path.get_ident() {
                    let fs = span_of(f.span());
                    entries.push(Entry {
                        key: "float".into(),
                        key_span: fs.clone(),
                        value: scalar(&f.to_string(), ScalarKind::Str(super::Quote::Block), fs),
                    });
                }
            }
        }
        Some(Node {
            span: span_of(p.span()),
            kind: NodeKind::Map(Map::new(entries, MapStyle::Implicit)),
            tag: None,
            shared: false,
        })
    }
}

impl<'ast> Visit<'ast> for Collect<'_> {
    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        let is_config = s.attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|ps| {
                    ps.iter()
                        .any(|p| p.segments.last().is_some_and(|x| x.ident == "Config"))
                })
        });
        if is_config {
            let mut c = ConfigStruct {
                name: s.ident.to_string(),
                name_span: span_of(s.ident.span()),
                span: span_of(s.span()),
                ..Default::default()
            };
            for f in &s.fields {
                let Some(id) = &f.ident else { continue };
                let mut default = None;
                for a in f.attrs.iter().filter(|a| a.path().is_ident("config")) {
                    let _ = a.parse_nested_meta(|meta| {
                        if meta.path.is_ident("default") {
                            default = Some(meta.value()?.parse::<syn::Expr>()?);
                        }
                        Ok(())
                    });
                }
                match default {
                    Some(e) => {
                        let value = self.node(&e, 1);
                        c.entries.push(Entry {
                            key: id.to_string(),
                            key_span: span_of(id.span()),
                            value,
                        });
                    }
                    None => c.required.push(id.to_string()),
                }
            }
            self.configs.push(c);
        }
        syn::visit::visit_item_struct(self, s);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let outer = self.binding.take();
        if let syn::Pat::Ident(p) = &l.pat {
            self.binding = Some(p.ident.to_string());
        }
        syn::visit::visit_local(self, l);
        self.binding = outer;
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let outer = self.binding.replace(f.sig.ident.to_string());
        syn::visit::visit_item_fn(self, f);
        self.binding = outer;
    }

    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        if matches!(e, syn::Expr::MethodCall(_)) {
            self.read_chain(e);
        }
        syn::visit::visit_expr(self, e);
    }

    fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
        let in_autodiff = p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Autodiff");
        if in_autodiff {
            if let Some(syn::PathArguments::AngleBracketed(a)) =
                p.path.segments.last().map(|s| &s.arguments)
            {
                if let Some(syn::GenericArgument::Type(syn::Type::Path(inner))) = a.args.first() {
                    if let Some(b) = self.backend_of(inner) {
                        self.backend = Some((b, true));
                    }
                }
            }
        } else if !self.backend.as_ref().is_some_and(|(_, autodiff)| *autodiff) {
            if let Some(b) = self.backend_of(p) {
                self.backend = Some((b, false));
            }
        }
        syn::visit::visit_type_path(self, p);
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn fold(e: &syn::Expr, depth: usize) -> Option<Num> {
    if depth > MAX_DEPTH {
        return None;
    }
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<i64>().ok().map(Num::Int),
            syn::Lit::Float(f) => f.base10_parse::<f64>().ok().map(Num::Float),
            _ => None,
        },
        syn::Expr::Paren(p) => fold(&p.expr, depth + 1),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match fold(&u.expr, depth + 1)?
        {
            Num::Int(i) => i.checked_neg().map(Num::Int),
            Num::Float(f) => Some(Num::Float(-f)),
        },
        syn::Expr::Binary(b) => {
            let (l, r) = (fold(&b.left, depth + 1)?, fold(&b.right, depth + 1)?);
            Some(match (&b.op, l, r) {
                (syn::BinOp::Add(_), Num::Int(a), Num::Int(b)) => Num::Int(a.checked_add(b)?),
                (syn::BinOp::Sub(_), Num::Int(a), Num::Int(b)) => Num::Int(a.checked_sub(b)?),
                (syn::BinOp::Mul(_), Num::Int(a), Num::Int(b)) => Num::Int(a.checked_mul(b)?),
                (syn::BinOp::Div(_), Num::Int(a), Num::Int(b)) => Num::Int(a.checked_div(b)?),
                (syn::BinOp::Add(_), Num::Float(a), Num::Float(b)) => Num::Float(a + b),
                (syn::BinOp::Sub(_), Num::Float(a), Num::Float(b)) => Num::Float(a - b),
                (syn::BinOp::Mul(_), Num::Float(a), Num::Float(b)) => Num::Float(a * b),
                (syn::BinOp::Div(_), Num::Float(a), Num::Float(b)) if b != 0.0 => Num::Float(a / b),
                _ => return None,
            })
        }
        _ => None,
    }
}

/// Integer and float type suffixes a literal may carry (`64usize`, `1e-4f64`).
const SUFFIXES: &[&str] = &[
    "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8", "f32",
    "f64",
];

/// Replaces a literal keeping its form (`64usize` -> `16usize`). `None` for non-literals.
pub fn replace_literal(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    if node.shared || node.span.is_empty() {
        return None;
    }
    let s = node.as_scalar()?;
    let raw = text.get(node.span.clone())?;
    let suffix = SUFFIXES
        .iter()
        .find(|x| raw.ends_with(**x) && !raw.starts_with("0x"))
        .copied()
        .unwrap_or("");
    let body = match (s.kind, value) {
        (ScalarKind::Int(_), NewValue::Int(i)) => i.to_string(),
        (ScalarKind::Float(_), NewValue::Int(i)) => format!("{i}.0"),
        (ScalarKind::Int(_) | ScalarKind::Float(_), NewValue::Raw(r)) => r.clone(),
        (ScalarKind::Bool(_), NewValue::Bool(b)) => b.to_string(),
        (ScalarKind::Str(super::Quote::Double), NewValue::Str(v)) => {
            return Some(Edit::replace(node.span.clone(), format!("{v:?}")));
        }
        _ => return None,
    };
    Some(Edit::replace(node.span.clone(), format!("{body}{suffix}")))
}

/// Adds `.key(value)` to a builder chain (before `.build(..)`). `None` elsewhere.
pub fn insert_argument(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let [key] = path else { return None };
    if map.shared
        || m.style != MapStyle::Call
        || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let rendered = match value {
        NewValue::Int(i) => i.to_string(),
        NewValue::Bool(b) => b.to_string(),
        NewValue::Raw(r) => r.clone(),
        NewValue::Str(s) => format!("{s:?}"),
    };
    let chain = text.get(map.span.clone())?;
    let build = map.span.start + chain.rfind(".build(")?;
    let line_start = super::line_start_of(text, build);
    let before = &text[line_start..build];
    if before.trim().is_empty() {
        // One call per line: a line of its own, indented as `.build(`.
        let nl = super::newline_style(text);
        Some(Edit::insert(
            line_start,
            format!("{before}.{key}({rendered}){nl}"),
        ))
    } else {
        Some(Edit::insert(build, format!(".{key}({rendered})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = r#"
use burn::{data::dataloader::DataLoaderBuilder, optim::AdamConfig, prelude::*};

type MyBackend = Wgpu<f32, i32>;
type MyAutodiffBackend = Autodiff<MyBackend>;

#[derive(Config, Debug)]
pub struct TrainingConfig {
    pub model: ModelConfig,
    pub optimizer: AdamConfig,
    #[config(default = 10)]
    pub num_epochs: usize,
    #[config(default = 64)]
    pub batch_size: usize,
    #[config(default = 0)]
    pub num_workers: usize,
    #[config(default = 1.0e-4)]
    pub learning_rate: f64,
}

pub fn train(artifact_dir: &str, config: TrainingConfig, device: B::Device) {
    let dataloader_train = DataLoaderBuilder::new(batcher.clone())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .build(MnistDataset::train());
    let learner = LearnerBuilder::new(artifact_dir)
        .devices(vec![device.clone()])
        .num_epochs(config.num_epochs)
        .build(model, optim, lr);
}

fn main() {
    train("x", TrainingConfig::new(ModelConfig::new(10, 512), AdamConfig::new()).with_batch_size(32usize), d);
}
"#;

    fn text_at<'a>(root: &'a Node, path: &[&str]) -> Option<&'a str> {
        root.get_path(path)
            .and_then(|n| n.as_scalar())
            .map(|s| s.text.as_str())
    }

    #[test]
    fn the_burn_guide_reads_as_its_tree() {
        let d = parse(GUIDE).unwrap();
        let r = &d.roots[0];
        assert_eq!(text_at(r, &["config", "num_epochs"]), Some("10"));
        // `.with_batch_size(32usize)` after the default wins.
        assert_eq!(
            text_at(r, &["TrainingConfig", "batch_size"]),
            Some("32usize")
        );
        let w = r.get_path(&["DataLoaderBuilder", "num_workers"]).unwrap();
        assert_eq!(&GUIDE[w.span.clone()], "0");
        let NodeKind::Seq(devices) = &r.get_path(&["LearnerBuilder", "devices"]).unwrap().kind
        else {
            panic!()
        };
        assert_eq!(devices.len(), 1);
        assert_eq!(text_at(r, &["backend", "name"]), Some("Wgpu"));
        assert_eq!(text_at(r, &["backend", "float"]), Some("f32"));
    }

    #[test]
    fn edits_keep_suffixes_and_builder_layout() {
        let d = parse(GUIDE).unwrap();
        let r = &d.roots[0];
        let bs = r.get_path(&["TrainingConfig", "batch_size"]).unwrap();
        let e = replace_literal(GUIDE, bs, &NewValue::Int(16)).unwrap();
        assert_eq!(e.content, "16usize");
        let b = r.get_path(&["DataLoaderBuilder"]).unwrap();
        let NodeKind::Map(m) = &b.kind else { panic!() };
        let e = insert_argument(GUIDE, b, m, &["prefetch"], &NewValue::Int(2)).unwrap();
        let out = format!(
            "{}{}{}",
            &GUIDE[..e.range.start],
            e.content,
            &GUIDE[e.range.end..]
        );
        assert!(
            out.contains(
                "        .num_workers(config.num_workers)\n        .prefetch(2)\n        .build("
            ),
            "{out}"
        );
        assert!(syn::parse_file(&out).is_ok());
    }

    #[test]
    fn errors_not_panics() {
        assert!(parse("fn main( {").is_err());
        let deep = format!(
            "fn f() {{ let x = {}1{}; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert!(parse(&deep)
            .unwrap_err()
            .message
            .contains("nested too deeply"));
        assert_eq!(parse("fn main() {}").unwrap().roots.len(), 1);
    }
}
