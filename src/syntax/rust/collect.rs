//! The syn visitor that gathers Burn's config structs, builder chains and backend type, and
//! assembles them into the tree the module documentation describes.

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::span_of;
use crate::syntax::MAX_DEPTH;
use crate::syntax::{Entry, Map, MapStyle, Node, NodeKind, Quote, ScalarKind, Span};

/// Prefix of the tag a `x.field` placeholder carries until the config struct is known.
const FIELD_TAG: &str = "field:";

/// A `#[derive(Config)]` struct.
#[derive(Default)]
struct ConfigStruct {
    name: String,
    name_span: Span,
    span: Span,
    /// Fields without a default, in order (what `::new(..)` takes).
    required: Vec<String>,
    /// Every field name, to tell which struct the builders read.
    fields: Vec<String>,
    entries: Vec<Entry>,
}

#[derive(Default)]
pub(super) struct Collect<'t> {
    text: &'t str,
    /// First pass: only the structs, so that `Name::new(..)` before the struct still counts.
    structs_only: bool,
    configs: Vec<ConfigStruct>,
    /// Builder chains: (kind, binding name, node).
    builders: Vec<(&'static str, Option<String>, Node)>,
    /// Chains already read (syn visits their inner method calls again).
    seen: Vec<Span>,
    binding: Option<String>,
    /// The backend type and whether it came from inside `Autodiff<..>`.
    backend: Option<(Node, bool)>,
    /// Field names the builders read through `config.x`, to tell which struct is the config.
    used_fields: Vec<String>,
    /// Chain links walked, to show a test that reading a chain is linear in its length.
    links_walked: usize,
}

/// Builder types whose chains the tree keeps, and the key they are kept under.
fn builder_kind(root: &str) -> Option<&'static str> {
    match root {
        "DataLoaderBuilder" => Some("DataLoaderBuilder"),
        // Burn before 0.19 built a `Learner` with `LearnerBuilder`; newer releases configure
        // `SupervisedTraining` with the same methods (num_epochs, grads_accumulation).
        "LearnerBuilder" | "SupervisedTraining" => Some("LearnerBuilder"),
        _ => None,
    }
}

impl<'t> Collect<'t> {
    pub(super) fn read(file: &syn::File, text: &'t str) -> Node {
        Self::read_counting(file, text).0
    }

    /// [`Collect::read`], and how many chain links it walked.
    pub(super) fn read_counting(file: &syn::File, text: &'t str) -> (Node, usize) {
        let mut c = Collect {
            text,
            structs_only: true,
            ..Default::default()
        };
        c.visit_file(file);
        c.structs_only = false;
        c.visit_file(file);
        let walked = c.links_walked;
        (c.root(), walked)
    }

    fn source(&self, s: &Span) -> &str {
        self.text.get(s.clone()).unwrap_or("")
    }

    fn unknown(&self, e: &syn::Expr) -> Node {
        let s = span_of(e.span());
        Node::scalar(self.source(&s), ScalarKind::CustomTag, s)
    }

    fn node(&mut self, e: &syn::Expr, depth: usize) -> Node {
        if depth > MAX_DEPTH {
            return self.unknown(e);
        }
        let s = span_of(e.span());
        match e {
            syn::Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => match i.base10_parse::<i64>() {
                    Ok(v) => Node::scalar(self.source(&s), ScalarKind::Int(v), s),
                    Err(_) => self.unknown(e),
                },
                syn::Lit::Float(f) => match f.base10_parse::<f64>() {
                    Ok(v) => Node::scalar(self.source(&s), ScalarKind::Float(v), s),
                    Err(_) => self.unknown(e),
                },
                syn::Lit::Bool(b) => Node::scalar(self.source(&s), ScalarKind::Bool(b.value), s),
                syn::Lit::Str(st) => {
                    // Raw strings are never rewritten in place: their delimiters vary.
                    let q = if self.source(&s).starts_with('r') {
                        Quote::Block
                    } else {
                        Quote::Double
                    };
                    Node::scalar(st.value(), ScalarKind::Str(q), s)
                }
                _ => self.unknown(e),
            },
            syn::Expr::Paren(p) => self.node(&p.expr, depth + 1),
            syn::Expr::Field(f) => {
                // Resolved once the whole file is read (a `.with_x(..)` may come later).
                let mut n = self.unknown(e);
                if let syn::Member::Named(id) = &f.member {
                    let field = id.to_string();
                    n.tag = Some(format!("{FIELD_TAG}{field}"));
                    self.used_fields.push(field);
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
                let kind = match fold(e, depth) {
                    Some(Num::Int(i)) => ScalarKind::Int(i),
                    Some(Num::Float(f)) => ScalarKind::Float(f),
                    None => return self.unknown(e),
                };
                let mut n = Node::scalar(self.source(&s), kind, s);
                // `-1` is a literal a fix may rewrite; `4 * 16` is a computation it must not.
                n.shared =
                    !matches!(e, syn::Expr::Unary(u) if matches!(&*u.expr, syn::Expr::Lit(_)));
                n
            }
            _ => self.unknown(e),
        }
    }

    /// `config.x` placeholders replaced by what the config struct finally gives `x`; those it
    /// gives nothing stay unknown, without the placeholder tag.
    fn resolve_fields(node: &mut Node, config: &[Entry]) {
        if let Some(field) = node.tag.as_deref().and_then(|t| t.strip_prefix(FIELD_TAG)) {
            match config.iter().rev().find(|e| e.key == field) {
                Some(e) => *node = e.value.clone(),
                None => node.tag = None,
            }
            return;
        }
        match &mut node.kind {
            NodeKind::Map(m) => {
                let mut entries = std::mem::take(&mut m.entries);
                for e in &mut entries {
                    Self::resolve_fields(&mut e.value, config);
                }
                // Rebuilt through `Map::new` so that its key index stays right.
                let style = m.style;
                node.kind = NodeKind::Map(Map::new(entries, style));
            }
            NodeKind::Seq(items) => items
                .iter_mut()
                .for_each(|i| Self::resolve_fields(i, config)),
            NodeKind::Scalar(_) => {}
        }
    }

    /// A chain `Root::new(..).a(x).b(y)` (or a bare `Root::new(..)`): its root type, the `new`
    /// call and the method calls, inner first.
    fn chain<'e>(
        &mut self,
        e: &'e syn::Expr,
    ) -> Option<(String, &'e syn::ExprCall, Vec<&'e syn::ExprMethodCall>)> {
        let mut calls = Vec::new();
        let mut cur = e;
        loop {
            self.links_walked += 1;
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
                    let [.., root, new] = segs.as_slice() else {
                        return None;
                    };
                    if new != "new" {
                        return None;
                    }
                    calls.reverse();
                    return Some((root.clone(), c, calls));
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
        let Some((root, new_call, calls)) = self.chain(e) else {
            return;
        };
        if let Some(i) = self.configs.iter().position(|c| c.name == root) {
            self.seen.push(s);
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
        let Some(kind) = builder_kind(&root) else {
            return;
        };
        self.seen.push(s.clone());
        let mut entries = Vec::new();
        // `.build(dataset)` ends the builder: what follows configures something else.
        for m in calls.iter().take_while(|m| m.method != "build") {
            if let Some(arg) = m.args.first() {
                entries.push(Entry {
                    key: m.method.to_string(),
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

    /// The config the training reads: among the structs with a `batch_size` or `num_epochs`
    /// field, the first whose fields the builders read (`config.batch_size`), else the first.
    fn main_config(&self) -> Option<usize> {
        let has =
            |c: &ConfigStruct, names: &[&str]| c.fields.iter().any(|f| names.contains(&f.as_str()));
        let used: Vec<&str> = self.used_fields.iter().map(String::as_str).collect();
        let candidates = || {
            self.configs
                .iter()
                .enumerate()
                .filter(|(_, c)| has(c, &["batch_size", "num_epochs"]))
        };
        candidates()
            .find(|(_, c)| has(c, &used))
            .or_else(|| candidates().next())
            .map(|(i, _)| i)
    }

    fn root(mut self) -> Node {
        let len = self.text.len();
        let mut entries = Vec::new();
        // One chain per builder kind: the one bound to a name with `train` in it, else the
        // first (`dataloader_train` over `dataloader_test`).
        let mut by_kind: HashMap<&str, (bool, Node)> = HashMap::new();
        for (kind, binding, node) in std::mem::take(&mut self.builders) {
            let train = binding.is_some_and(|b| b.to_ascii_lowercase().contains("train"));
            match by_kind.get(kind) {
                Some((true, _)) => {}
                Some((false, _)) if !train => {}
                _ => {
                    by_kind.insert(kind, (train, node));
                }
            }
        }
        let main = self.main_config();
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
        for (kind, (_, mut node)) in kinds {
            Self::resolve_fields(&mut node, &main_entries);
            entries.push(Entry {
                key: kind.to_string(),
                key_span: node.span.start..node.span.start,
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

    /// A backend type (`Wgpu<f32, i32>`), from a path that names one. Its name and float type
    /// are type tokens, not literals: `Quote::Block` keeps fixes from rewriting them in place.
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
            value: Node::scalar(&name, ScalarKind::Str(Quote::Block), ns),
        }];
        if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
            if let Some(syn::GenericArgument::Type(syn::Type::Path(t))) = a.args.first() {
                // `burn::tensor::bf16` and `bf16` alike: the last segment names the type.
                if let Some(f) = t.path.segments.last().filter(|s| s.arguments.is_none()) {
                    let fs = span_of(f.ident.span());
                    entries.push(Entry {
                        key: "float".into(),
                        key_span: fs.clone(),
                        value: Node::scalar(f.ident.to_string(), ScalarKind::Str(Quote::Block), fs),
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

    fn read_config_struct(&mut self, s: &syn::ItemStruct) {
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
        if !is_config {
            return;
        }
        let mut c = ConfigStruct {
            name: s.ident.to_string(),
            name_span: span_of(s.ident.span()),
            span: span_of(s.span()),
            ..Default::default()
        };
        for f in &s.fields {
            let Some(id) = &f.ident else { continue };
            c.fields.push(id.to_string());
            let mut default = None;
            for a in f.attrs.iter().filter(|a| a.path().is_ident("config")) {
                // burn-derive reads `#[config(default = <expr>)]`; anything it cannot read is
                // a compile error there, so nothing is lost by ignoring it here.
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
}

impl<'ast> Visit<'ast> for Collect<'_> {
    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        if self.structs_only {
            self.read_config_struct(s);
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
        if self.structs_only {
            return;
        }
        if !matches!(e, syn::Expr::MethodCall(_) | syn::Expr::Call(_)) {
            syn::visit::visit_expr(self, e);
            return;
        }
        // A chain is read once, from its top: its links share its root, so a link is a chain
        // the reader takes only if it takes the whole. Then each link's arguments are visited
        // in a loop: syn's visitor would recurse once per link and offer every link as a chain
        // of its own, each read to its root again (quadratic in the chain's length).
        self.read_chain(e);
        let mut link = e;
        while let syn::Expr::MethodCall(m) = link {
            self.links_walked += 1;
            for a in &m.attrs {
                self.visit_attribute(a);
            }
            if let Some(t) = &m.turbofish {
                self.visit_angle_bracketed_generic_arguments(t);
            }
            for arg in &m.args {
                self.visit_expr(arg);
            }
            link = &m.receiver;
        }
        syn::visit::visit_expr(self, link);
    }

    fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
        if self.structs_only {
            return;
        }
        let last = p.path.segments.last();
        if last.is_some_and(|s| s.ident == "Autodiff") {
            // The backend inside `Autodiff<..>` is the one training runs on.
            if let Some(syn::PathArguments::AngleBracketed(a)) = last.map(|s| &s.arguments) {
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

/// A constant expression's value (`4 * 16`, `-1e-4`, `(1 << 0) + 2` is not one: shifts are
/// left unknown), or `None`.
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
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            match fold(&u.expr, depth + 1)? {
                Num::Int(i) => i.checked_neg().map(Num::Int),
                Num::Float(f) => Some(Num::Float(-f)),
            }
        }
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
