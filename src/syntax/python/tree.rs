//! From ruff's syntax tree to hwlint's: the module namespace, the calls by name, argparse
//! defaults, environment settings, and the named setups of config lists.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Number, Operator, Stmt, StringFlags, UnaryOp};
use ruff_text_size::Ranged;

use crate::syntax::{Entry, MapStyle, Node, NodeKind, Quote, Scalar, ScalarKind, Span, MAX_DEPTH};

fn span(r: &impl Ranged) -> Span {
    usize::from(r.start())..usize::from(r.end())
}

/// The callee as written (`torch.utils.data.DataLoader`), when it is a dotted name.
fn callee(func: &Expr) -> Option<String> {
    let mut out = String::new();
    push_callee(func, &mut out).then_some(out)
}

/// Whether `func` is a dotted name (what [`callee`] names).
fn is_dotted(func: &Expr) -> bool {
    match func {
        Expr::Name(_) => true,
        Expr::Attribute(a) => is_dotted(&a.value),
        _ => false,
    }
}

/// Appends the dotted name to `out` (one allocation for the whole name); false when `func` is
/// no dotted name.
fn push_callee(func: &Expr, out: &mut String) -> bool {
    match func {
        Expr::Name(n) => {
            out.push_str(n.id.as_str());
            true
        }
        Expr::Attribute(a) => {
            if !push_callee(&a.value, out) {
                return false;
            }
            out.push('.');
            out.push_str(a.attr.id.as_str());
            true
        }
        _ => false,
    }
}

/// The callee's last name and its span (`DataLoader`, also for `loss.backward()`).
fn last_name(func: &Expr) -> Option<(String, Span)> {
    match func {
        Expr::Name(n) => Some((n.id.as_str().to_string(), span(n))),
        Expr::Attribute(a) => Some((a.attr.id.as_str().to_string(), span(&a.attr))),
        _ => None,
    }
}

/// `os.environ` or an imported `environ`.
fn is_environ(e: &Expr) -> bool {
    match e {
        Expr::Attribute(a) => {
            a.attr.id.as_str() == "environ"
                && matches!(&*a.value, Expr::Name(n) if n.id.as_str() == "os")
        }
        Expr::Name(n) => n.id.as_str() == "environ",
        _ => false,
    }
}

fn str_lit(e: &Expr) -> Option<&str> {
    match e {
        Expr::StringLiteral(s) if !s.value.is_implicit_concatenated() => Some(s.value.to_str()),
        _ => None,
    }
}

/// A call site and what it is bound to (the assigned name, or the enclosing function).
struct Site<'a> {
    call: &'a ast::ExprCall,
    binding: Option<String>,
    /// The names of the function the call is in, which hide module-level ones.
    scope: Option<Rc<Bindings<'a>>>,
}

/// The names one scope binds: each name's plain assignments (`x = v`, `x: T = v`), and the
/// names bound any other way (parameters, `+=`, unpacking, loop and `with` targets, imports,
/// `def`, `global`), which are never resolved.
#[derive(Default)]
struct Bindings<'a> {
    bound: HashMap<String, Vec<&'a Expr>>,
    rebound: HashSet<String>,
}

impl<'a> Bindings<'a> {
    /// The value of a name one plain assignment binds; `Err` when the scope binds it otherwise.
    fn value(&self, name: &str) -> Result<Option<&'a Expr>, ()> {
        if self.rebound.contains(name) {
            return Err(());
        }
        match self.bound.get(name).map(Vec::as_slice) {
            None => Ok(None),
            Some([v]) => Ok(Some(*v)),
            Some(_) => Err(()),
        }
    }

    fn declares(&self, name: &str) -> bool {
        self.rebound.contains(name) || self.bound.contains_key(name)
    }

    /// Every binding in a scope's body, in blocks too (`if __name__ == "__main__":`), not in
    /// nested functions and classes (whose names alone it binds).
    fn collect(&mut self, body: &'a [Stmt], depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for stmt in body {
            match stmt {
                Stmt::Assign(a) => {
                    for t in &a.targets {
                        match t {
                            Expr::Name(n) => self
                                .bound
                                .entry(n.id.as_str().to_string())
                                .or_default()
                                .push(&a.value),
                            other => self.target(other),
                        }
                    }
                }
                Stmt::AnnAssign(a) => match (&*a.target, &a.value) {
                    (Expr::Name(n), Some(v)) => {
                        self.bound
                            .entry(n.id.as_str().to_string())
                            .or_default()
                            .push(v);
                    }
                    (_, None) => {}
                    (other, Some(_)) => self.target(other),
                },
                Stmt::AugAssign(a) => self.target(&a.target),
                Stmt::For(f) => {
                    self.target(&f.target);
                    self.collect(&f.body, depth + 1);
                    self.collect(&f.orelse, depth + 1);
                }
                Stmt::While(w) => {
                    self.collect(&w.body, depth + 1);
                    self.collect(&w.orelse, depth + 1);
                }
                Stmt::If(i) => {
                    self.collect(&i.body, depth + 1);
                    for c in &i.elif_else_clauses {
                        self.collect(&c.body, depth + 1);
                    }
                }
                Stmt::With(w) => {
                    for item in &w.items {
                        if let Some(v) = &item.optional_vars {
                            self.target(v);
                        }
                    }
                    self.collect(&w.body, depth + 1);
                }
                Stmt::Try(t) => {
                    self.collect(&t.body, depth + 1);
                    for h in &t.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        if let Some(n) = &h.name {
                            self.rebound.insert(n.id.as_str().to_string());
                        }
                        self.collect(&h.body, depth + 1);
                    }
                    self.collect(&t.orelse, depth + 1);
                    self.collect(&t.finalbody, depth + 1);
                }
                Stmt::Match(m) => {
                    for c in &m.cases {
                        self.collect(&c.body, depth + 1);
                    }
                }
                Stmt::Import(i) => {
                    for a in &i.names {
                        let name = a.asname.as_ref().unwrap_or(&a.name).id.as_str();
                        let first = name.split('.').next().unwrap_or(name);
                        self.rebound.insert(first.to_string());
                    }
                }
                Stmt::ImportFrom(i) => {
                    for a in &i.names {
                        let name = a.asname.as_ref().unwrap_or(&a.name);
                        self.rebound.insert(name.id.as_str().to_string());
                    }
                }
                Stmt::FunctionDef(f) => {
                    self.rebound.insert(f.name.id.as_str().to_string());
                }
                Stmt::ClassDef(c) => {
                    self.rebound.insert(c.name.id.as_str().to_string());
                }
                Stmt::Global(ast::StmtGlobal { names, .. })
                | Stmt::Nonlocal(ast::StmtNonlocal { names, .. }) => {
                    self.rebound
                        .extend(names.iter().map(|n| n.id.as_str().to_string()));
                }
                _ => {}
            }
        }
    }

    /// The names an assignment target other than a plain name binds (`a, *b = ...`).
    fn target(&mut self, target: &Expr) {
        match target {
            Expr::Name(n) => {
                self.rebound.insert(n.id.as_str().to_string());
            }
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.target(e)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e)),
            Expr::Starred(st) => self.target(&st.value),
            _ => {}
        }
    }
}

/// What the first pass learns about the module.
#[derive(Default)]
struct Facts<'a> {
    /// Module-level names (also those a function declares `global`).
    module: Bindings<'a>,
    /// How often each name is read.
    uses: HashMap<String, usize>,
    /// Names bound to `parser.parse_args()` (anywhere).
    args_names: HashSet<String>,
    /// argparse destinations: key span (the option string) and the default's node source.
    argparse: Vec<(String, Span, ArgDefault<'a>)>,
    /// Environment variables the script sets: name, key span, value.
    env: Vec<(String, Span, &'a Expr)>,
    sites: Vec<Site<'a>>,
    /// Calls that are setups of their own (`TrainConfig(name=...)` in a config list).
    named: Vec<&'a ast::ExprCall>,
    /// Calls inside those setups (their arguments), not collected by name.
    inside_named: HashSet<usize>,
}

enum ArgDefault<'a> {
    Expr(&'a Expr),
    /// `action="store_true"` (false) or `"store_false"` (true), spanning the action.
    Flag(bool, Span),
}

pub fn build(text: &str, body: &[Stmt]) -> Vec<Node> {
    let mut facts = Facts::default();
    let mut first = FirstPass {
        facts: &mut facts,
        function: None,
        scope: None,
        depth: 0,
    };
    first.module(body);
    let b = Builder {
        text,
        facts: &facts,
        visiting: Default::default(),
        scope: Default::default(),
    };
    let mut roots = vec![b.module(body)];
    for call in &facts.named {
        roots.push(b.call(call, 0));
    }
    roots
}

struct FirstPass<'f, 'a> {
    facts: &'f mut Facts<'a>,
    function: Option<String>,
    scope: Option<Rc<Bindings<'a>>>,
    depth: usize,
}

impl<'a> FirstPass<'_, 'a> {
    fn module(&mut self, body: &'a [Stmt]) {
        for stmt in body {
            match stmt {
                Stmt::Assign(a) => self.named_lists(&a.value),
                Stmt::AnnAssign(a) => {
                    if let Some(v) = &a.value {
                        self.named_lists(v);
                    }
                }
                // `configs.extend([...])`, `_CONFIGS += [...]`
                Stmt::Expr(e) => self.named_lists(&e.value),
                Stmt::AugAssign(a) => self.named_lists(&a.value),
                _ => {}
            }
        }
        self.facts.module.collect(body, 0);
        self.body(body);
    }

    /// Lists (or tuples) of calls with a `name=` string: each such call is a setup.
    fn named_lists(&mut self, e: &'a Expr) {
        let items: &[Expr] = match e {
            Expr::List(l) => &l.elts,
            Expr::Tuple(t) => &t.elts,
            Expr::Call(c) => {
                for a in c.arguments.args.iter() {
                    self.named_lists(a);
                }
                return;
            }
            Expr::BinOp(b) => {
                self.named_lists(&b.left);
                self.named_lists(&b.right);
                return;
            }
            _ => return,
        };
        for item in items {
            if let Expr::Call(c) = item {
                let named = c.arguments.keywords.iter().any(|k| {
                    k.arg.as_ref().is_some_and(|a| a.id.as_str() == "name")
                        && str_lit(&k.value).is_some()
                });
                if named
                    && !matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "dict")
                    && is_dotted(&c.func)
                {
                    self.facts.named.push(c);
                    let mut inner = Inner(&mut self.facts.inside_named);
                    inner.visit_arguments(&c.arguments);
                }
            }
        }
    }

    fn body(&mut self, body: &'a [Stmt]) {
        for stmt in body {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        match stmt {
            Stmt::FunctionDef(f) => {
                let mut scope = Bindings::default();
                scope.rebound.extend(
                    f.parameters
                        .iter()
                        .map(|p| p.as_parameter().name.id.as_str().to_string()),
                );
                scope.collect(&f.body, 0);
                let outer_scope = self.scope.replace(Rc::new(scope));
                let outer = self.function.replace(f.name.id.as_str().to_string());
                self.body(&f.body);
                self.function = outer;
                self.scope = outer_scope;
            }
            // Class-level fields are defaults (a dataclass), not settings; methods are code.
            Stmt::ClassDef(c) => {
                for s in &c.body {
                    if let Stmt::FunctionDef(_) = s {
                        self.stmt(s);
                    }
                }
            }
            Stmt::Assign(a) => {
                self.parse_args_binding(&a.targets, &a.value);
                for t in &a.targets {
                    if let Expr::Subscript(s) = t {
                        if is_environ(&s.value) {
                            if let Some(name) = str_lit(&s.slice) {
                                self.facts
                                    .env
                                    .push((name.to_string(), span(&*s.slice), &a.value));
                            }
                        }
                    }
                }
                let binding = match a.targets.first() {
                    Some(Expr::Name(n)) => Some(n.id.as_str().to_string()),
                    Some(Expr::Attribute(at)) => Some(at.attr.id.as_str().to_string()),
                    _ => None,
                };
                self.exprs(&a.value, binding);
            }
            Stmt::AnnAssign(a) => {
                if let Some(v) = &a.value {
                    let binding = match &*a.target {
                        Expr::Name(n) => Some(n.id.as_str().to_string()),
                        _ => None,
                    };
                    self.exprs(v, binding);
                }
            }
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    self.exprs(v, None);
                }
            }
            Stmt::If(i) => {
                self.exprs(&i.test, None);
                self.body(&i.body);
                for c in &i.elif_else_clauses {
                    self.body(&c.body);
                }
            }
            Stmt::For(f) => {
                self.exprs(&f.iter, None);
                self.body(&f.body);
                self.body(&f.orelse);
            }
            Stmt::While(w) => {
                self.body(&w.body);
                self.body(&w.orelse);
            }
            Stmt::With(w) => {
                for item in &w.items {
                    self.exprs(&item.context_expr, None);
                }
                self.body(&w.body);
            }
            Stmt::Try(t) => {
                self.body(&t.body);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    self.body(&h.body);
                }
                self.body(&t.orelse);
                self.body(&t.finalbody);
            }
            Stmt::Expr(e) => self.exprs(&e.value, None),
            // A function that rebinds a module-level name makes its value unknown.
            Stmt::Global(g) => {
                for n in &g.names {
                    self.facts.module.rebound.insert(n.id.as_str().to_string());
                }
            }
            _ => {}
        }
        self.depth -= 1;
    }

    /// `args = parser.parse_args()`, `args, _ = parser.parse_known_args()`.
    fn parse_args_binding(&mut self, targets: &[Expr], value: &Expr) {
        let call = match value {
            Expr::Call(c) => c,
            Expr::Subscript(s) => match &*s.value {
                Expr::Call(c) => c,
                _ => return,
            },
            _ => return,
        };
        let Some((name, _)) = last_name(&call.func) else {
            return;
        };
        if name != "parse_args" && name != "parse_known_args" {
            return;
        }
        for t in targets {
            match t {
                Expr::Name(n) => {
                    self.facts.args_names.insert(n.id.as_str().to_string());
                }
                Expr::Tuple(tu) => {
                    if let Some(Expr::Name(n)) = tu.elts.first() {
                        self.facts.args_names.insert(n.id.as_str().to_string());
                    }
                }
                _ => {}
            }
        }
    }

    /// Collects the calls in an expression (and the names it reads).
    fn exprs(&mut self, e: &'a Expr, binding: Option<String>) {
        let mut v = Calls {
            pass: self,
            binding,
            depth: 0,
        };
        v.visit_expr(e);
    }
}

/// Marks every call inside a named setup.
struct Inner<'s>(&'s mut HashSet<usize>);

impl<'a> Visitor<'a> for Inner<'_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if let Expr::Call(c) = e {
            self.0.insert(usize::from(c.start()));
        }
        visitor::walk_expr(self, e);
    }
}

struct Calls<'p, 'f, 'a> {
    pass: &'p mut FirstPass<'f, 'a>,
    binding: Option<String>,
    depth: usize,
}

impl<'a> Visitor<'a> for Calls<'_, '_, 'a> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        match e {
            Expr::Name(n) => {
                *self
                    .pass
                    .facts
                    .uses
                    .entry(n.id.as_str().to_string())
                    .or_default() += 1
            }
            Expr::Call(c) => {
                let facts = &mut *self.pass.facts;
                let last = last_name(&c.func).map(|(n, _)| n);
                match last.as_deref() {
                    Some("add_argument") => argparse(facts, c),
                    Some("setdefault") if matches!(&*c.func, Expr::Attribute(a) if is_environ(&a.value)) => {
                        if let (Some(k), Some(v)) =
                            (c.arguments.args.first(), c.arguments.args.get(1))
                        {
                            if let Some(name) = str_lit(k) {
                                facts.env.push((name.to_string(), span(k), v));
                            }
                        }
                    }
                    // `os.environ.update({"X": "v"})`, `os.environ.update(X="v")`
                    Some("update") if matches!(&*c.func, Expr::Attribute(a) if is_environ(&a.value)) =>
                    {
                        if let Some(Expr::Dict(d)) = c.arguments.args.first() {
                            for item in &d.items {
                                if let Some(k) = &item.key {
                                    if let Some(name) = str_lit(k) {
                                        facts.env.push((name.to_string(), span(k), &item.value));
                                    }
                                }
                            }
                        }
                        for k in c.arguments.keywords.iter() {
                            if let Some(arg) = &k.arg {
                                facts
                                    .env
                                    .push((arg.id.as_str().to_string(), span(arg), &k.value));
                            }
                        }
                    }
                    _ => {}
                }
                let binding = self.binding.take().or_else(|| self.pass.function.clone());
                let scope = self.pass.scope.clone();
                self.pass.facts.sites.push(Site {
                    call: c,
                    binding,
                    scope,
                });
            }
            _ => {}
        }
        visitor::walk_expr(self, e);
        self.depth -= 1;
    }
}

/// Reads one `add_argument(...)`.
fn argparse<'a>(facts: &mut Facts<'a>, c: &'a ast::ExprCall) {
    let options: Vec<(&str, Span)> = c
        .arguments
        .args
        .iter()
        .map_while(|a| str_lit(a).map(|s| (s, span(a))))
        .collect();
    let Some((_, key_span)) = options.first().cloned() else {
        return;
    };
    if !options[0].0.starts_with('-') {
        return;
    }
    let kw = |name: &str| {
        c.arguments
            .keywords
            .iter()
            .find(|k| k.arg.as_ref().is_some_and(|a| a.id.as_str() == name))
    };
    let dest = match kw("dest").and_then(|k| str_lit(&k.value)) {
        Some(d) => d.to_string(),
        None => {
            let long = options.iter().find(|(o, _)| o.starts_with("--"));
            let o = long.unwrap_or(&options[0]).0;
            o.trim_start_matches('-').replace('-', "_")
        }
    };
    let default = match kw("default") {
        Some(k) => ArgDefault::Expr(&k.value),
        None => match kw("action").and_then(|k| str_lit(&k.value).map(|a| (a, span(&k.value)))) {
            Some(("store_true", s)) => ArgDefault::Flag(false, s),
            Some(("store_false", s)) => ArgDefault::Flag(true, s),
            _ => return,
        },
    };
    facts.argparse.push((dest, key_span, default));
}

struct Builder<'t, 'a> {
    text: &'t str,
    facts: &'t Facts<'a>,
    /// Names being resolved, so `a = b; b = a` ends.
    visiting: RefCell<HashSet<String>>,
    /// The function whose call is being built: its names hide the module's.
    scope: RefCell<Option<Rc<Bindings<'a>>>>,
}

fn map(entries: Vec<Entry>, style: MapStyle, span: Span, tag: Option<String>) -> Node {
    Node {
        tag,
        ..Node::map(entries, style, span)
    }
}

impl Builder<'_, '_> {
    fn source(&self, s: &Span) -> &str {
        self.text.get(s.clone()).unwrap_or("")
    }

    fn unknown(&self, e: &Expr) -> Node {
        let s = span(e);
        Node::scalar(self.source(&s), ScalarKind::CustomTag, s)
    }

    fn module(&self, body: &[Stmt]) -> Node {
        let mut entries = Vec::new();
        // Calls by the callee's last name: a train-bound one, else the first.
        let mut chosen: Vec<(String, Span, &ast::ExprCall, &Option<Rc<Bindings>>)> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for site in &self.facts.sites {
            if self
                .facts
                .inside_named
                .contains(&usize::from(site.call.start()))
                || self.facts.named.iter().any(|n| std::ptr::eq(*n, site.call))
            {
                continue;
            }
            let Some((name, name_span)) = last_name(&site.call.func) else {
                continue;
            };
            if name == "dict" {
                continue;
            }
            let train = site
                .binding
                .as_deref()
                .is_some_and(|b| b.to_ascii_lowercase().contains("train"));
            match by_name.get(&name) {
                None => {
                    by_name.insert(name.clone(), chosen.len());
                    chosen.push((name, name_span, site.call, &site.scope));
                }
                Some(&i) if train && !self.is_train_site(chosen[i].2) => {
                    chosen[i] = (name, name_span, site.call, &site.scope);
                }
                Some(_) => {}
            }
        }
        for (name, name_span, call, scope) in chosen {
            *self.scope.borrow_mut() = scope.clone();
            let value = self.call(call, 0);
            *self.scope.borrow_mut() = None;
            entries.push(Entry {
                key: name,
                key_span: name_span,
                value,
            });
        }
        for stmt in body {
            let (target, value) = match stmt {
                Stmt::Assign(a) if a.targets.len() == 1 => (&a.targets[0], &*a.value),
                Stmt::AnnAssign(a) => match &a.value {
                    Some(v) => (&*a.target, &**v),
                    None => continue,
                },
                _ => continue,
            };
            if let Expr::Name(n) = target {
                entries.push(Entry {
                    key: n.id.as_str().to_string(),
                    key_span: span(n),
                    value: self.node(value, 0),
                });
            }
        }
        let len = self.text.len();
        let args = self
            .facts
            .argparse
            .iter()
            .map(|(dest, key_span, d)| Entry {
                key: dest.clone(),
                key_span: key_span.clone(),
                value: self.arg_default(d),
            })
            .collect();
        entries.push(Entry {
            key: "args".into(),
            key_span: 0..0,
            value: map(args, MapStyle::Implicit, 0..len, None),
        });
        let env = self
            .facts
            .env
            .iter()
            .map(|(name, key_span, v)| Entry {
                key: name.clone(),
                key_span: key_span.clone(),
                value: self.node(v, 0),
            })
            .collect();
        entries.push(Entry {
            key: "env".into(),
            key_span: 0..0,
            value: map(env, MapStyle::Implicit, 0..len, None),
        });
        map(entries, MapStyle::Implicit, 0..len, None)
    }

    fn is_train_site(&self, call: &ast::ExprCall) -> bool {
        self.facts.sites.iter().any(|s| {
            std::ptr::eq(s.call, call)
                && s.binding
                    .as_deref()
                    .is_some_and(|b| b.to_ascii_lowercase().contains("train"))
        })
    }

    fn arg_default(&self, d: &ArgDefault) -> Node {
        match d {
            ArgDefault::Expr(e) => self.node(e, 0),
            ArgDefault::Flag(b, s) => {
                let mut n = Node::scalar(
                    if *b { "True" } else { "False" },
                    ScalarKind::Bool(*b),
                    s.clone(),
                );
                // The action's text is not the value: a fix never writes over it.
                n.shared = true;
                n
            }
        }
    }

    /// A call as a mapping of its arguments.
    fn call(&self, c: &ast::ExprCall, depth: usize) -> Node {
        let mut entries = Vec::new();
        let mut positional = true;
        for (i, a) in c.arguments.args.iter().enumerate() {
            if let Expr::Starred(_) = a {
                positional = false;
            }
            if positional {
                entries.push(Entry {
                    key: i.to_string(),
                    key_span: span(a),
                    value: self.node(a, depth + 1),
                });
            }
        }
        for k in c.arguments.keywords.iter() {
            if let Some(arg) = &k.arg {
                entries.push(Entry {
                    key: arg.id.as_str().to_string(),
                    key_span: span(arg),
                    value: self.node(&k.value, depth + 1),
                });
            }
        }
        let tag = callee(&c.func).map(|n| format!("call:{n}"));
        map(entries, MapStyle::Call, span(c), tag)
    }

    /// The node an expression is, as the module documentation describes.
    fn node(&self, e: &Expr, depth: usize) -> Node {
        if depth > MAX_DEPTH {
            return self.unknown(e);
        }
        let s = span(e);
        match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => match i.as_i64() {
                    Some(v) => Node::scalar(self.source(&s), ScalarKind::Int(v), s),
                    None => self.unknown(e),
                },
                Number::Float(f) => Node::scalar(self.source(&s), ScalarKind::Float(*f), s),
                Number::Complex { .. } => self.unknown(e),
            },
            Expr::BooleanLiteral(b) => Node::scalar(self.source(&s), ScalarKind::Bool(b.value), s),
            Expr::NoneLiteral(_) => Node::scalar("None", ScalarKind::Null, s),
            Expr::StringLiteral(lit) => {
                let editable = !lit.value.is_implicit_concatenated()
                    && lit.value.iter().all(|p| !p.flags.is_triple_quoted())
                    && self.source(&s).starts_with(['"', '\'']);
                let quote = match lit.value.iter().next().map(|p| p.flags.quote_style()) {
                    _ if !editable => Quote::Block,
                    Some(ruff_python_ast::str::Quote::Single) => Quote::Single,
                    _ => Quote::Double,
                };
                Node::scalar(lit.value.to_str(), ScalarKind::Str(quote), s)
            }
            Expr::UnaryOp(u) if u.op == UnaryOp::USub => match &*u.operand {
                Expr::NumberLiteral(n) => match &n.value {
                    Number::Int(i) => match i.as_i64().and_then(|v| v.checked_neg()) {
                        Some(v) => Node::scalar(self.source(&s), ScalarKind::Int(v), s),
                        None => self.unknown(e),
                    },
                    Number::Float(f) => Node::scalar(self.source(&s), ScalarKind::Float(-f), s),
                    Number::Complex { .. } => self.unknown(e),
                },
                _ => self.folded(e, depth),
            },
            Expr::BinOp(_) | Expr::UnaryOp(_) => self.folded(e, depth),
            Expr::Name(n) => self.named(n.id.as_str(), e, depth),
            Expr::Attribute(a) => {
                if let Expr::Name(base) = &*a.value {
                    if self.facts.args_names.contains(base.id.as_str()) {
                        let dest = a.attr.id.as_str();
                        if let Some((_, _, d)) =
                            self.facts.argparse.iter().find(|(n, _, _)| n == dest)
                        {
                            let mut n = self.arg_default(d);
                            n.tag = Some(format!("arg:{dest}"));
                            return n;
                        }
                    }
                }
                self.unknown(e)
            }
            Expr::Call(c) => self.call_value(c, e, depth),
            Expr::Subscript(sub) if is_environ(&sub.value) => match str_lit(&sub.slice) {
                Some(name) => {
                    let mut n = self.unknown(e);
                    n.tag = Some(format!("env:{name}"));
                    n
                }
                None => self.unknown(e),
            },
            Expr::Dict(d) => {
                let entries = d
                    .items
                    .iter()
                    .filter_map(|item| {
                        let k = item.key.as_ref()?;
                        let key = str_lit(k)?;
                        Some(Entry {
                            key: key.to_string(),
                            key_span: span(k),
                            value: self.node(&item.value, depth + 1),
                        })
                    })
                    .collect();
                map(entries, MapStyle::Flow, s, None)
            }
            Expr::List(l) => self.seq(&l.elts, s, depth),
            Expr::Tuple(t) => self.seq(&t.elts, s, depth),
            _ => self.unknown(e),
        }
    }

    fn seq(&self, items: &[Expr], s: Span, depth: usize) -> Node {
        Node {
            span: s,
            kind: NodeKind::Seq(items.iter().map(|i| self.node(i, depth + 1)).collect()),
            tag: None,
            shared: false,
        }
    }

    /// A name bound once at module level reads as its value.
    /// In a function, a name it binds once by a plain assignment reads as that value, and any
    /// other name it binds (a parameter, a loop variable) is unknown, whatever the module says.
    fn named(&self, name: &str, e: &Expr, depth: usize) -> Node {
        let scope = self.scope.borrow().clone();
        let local = scope.as_ref().filter(|s| s.declares(name));
        let (value, key) = match local {
            Some(s) => (s.value(name), format!("local:{name}")),
            None => (self.facts.module.value(name), name.to_string()),
        };
        let Ok(Some(value)) = value else {
            return self.unknown(e);
        };
        if !self.visiting.borrow_mut().insert(key.clone()) {
            return self.unknown(e);
        }
        // A module-level value reads module-level names, even when a function refers to it.
        let outer = if local.is_none() {
            self.scope.replace(None)
        } else {
            scope.clone()
        };
        let mut n = self.node(value, depth + 1);
        *self.scope.borrow_mut() = outer;
        self.visiting.borrow_mut().remove(&key);
        if self.facts.uses.get(name).copied().unwrap_or(0) > 1 {
            n.shared = true;
        }
        n
    }

    /// A call used as a value: `dict(...)`, an environment lookup, `int(...)`, or a call kept
    /// as a mapping of its arguments.
    fn call_value(&self, c: &ast::ExprCall, e: &Expr, depth: usize) -> Node {
        let name = callee(&c.func).unwrap_or_default();
        let args = &c.arguments.args;
        let env_lookup = matches!(&*c.func, Expr::Attribute(a) if a.attr.id.as_str() == "get" && is_environ(&a.value))
            || name == "os.getenv"
            || name == "getenv";
        if env_lookup {
            let Some(var) = args.first().and_then(str_lit) else {
                return self.unknown(e);
            };
            let mut n = match args.get(1) {
                Some(d) => self.node(d, depth + 1),
                None => self.unknown(e),
            };
            n.tag = Some(format!("env:{var}"));
            n.shared = true;
            return n;
        }
        if (name == "int" || name == "float") && args.len() == 1 && c.arguments.keywords.is_empty()
        {
            let inner = self.node(&args[0], depth + 1);
            if let Some(v) = inner
                .as_scalar()
                .and_then(|sc| number_of(sc, name == "int"))
            {
                let mut n = Node::scalar(self.source(&span(e)), v, span(e));
                n.tag = inner.tag.clone();
                n.shared = true;
                return n;
            }
            let mut n = self.unknown(e);
            n.tag = inner.tag;
            return n;
        }
        self.call(c, depth)
    }

    /// A constant expression folded to its value (never edited: it is not a literal).
    fn folded(&self, e: &Expr, depth: usize) -> Node {
        match self.fold(e, depth) {
            Some(v) => {
                let s = span(e);
                let kind = match v {
                    Num::Int(i) => ScalarKind::Int(i),
                    Num::Float(f) => ScalarKind::Float(f),
                };
                let mut n = Node::scalar(self.source(&s), kind, s);
                n.shared = true;
                n
            }
            None => self.unknown(e),
        }
    }

    fn fold(&self, e: &Expr, depth: usize) -> Option<Num> {
        if depth > MAX_DEPTH {
            return None;
        }
        match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => i.as_i64().map(Num::Int),
                Number::Float(f) => Some(Num::Float(*f)),
                Number::Complex { .. } => None,
            },
            Expr::UnaryOp(u) => {
                let v = self.fold(&u.operand, depth + 1)?;
                match (u.op, v) {
                    (UnaryOp::USub, Num::Int(i)) => i.checked_neg().map(Num::Int),
                    (UnaryOp::USub, Num::Float(f)) => Some(Num::Float(-f)),
                    (UnaryOp::UAdd, v) => Some(v),
                    _ => None,
                }
            }
            Expr::Name(n) => {
                let node = self.named(n.id.as_str(), e, depth + 1);
                match node.as_scalar()?.kind {
                    ScalarKind::Int(i) => Some(Num::Int(i)),
                    ScalarKind::Float(f) => Some(Num::Float(f)),
                    _ => None,
                }
            }
            Expr::BinOp(b) => {
                let l = self.fold(&b.left, depth + 1)?;
                let r = self.fold(&b.right, depth + 1)?;
                binop(b.op, l, r)
            }
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Python's arithmetic on two constants; `None` on overflow, division by zero or an operator
/// that is not arithmetic.
fn binop(op: Operator, l: Num, r: Num) -> Option<Num> {
    use Num::*;
    Some(match (op, l, r) {
        (Operator::Add, Int(a), Int(b)) => Int(a.checked_add(b)?),
        (Operator::Sub, Int(a), Int(b)) => Int(a.checked_sub(b)?),
        (Operator::Mult, Int(a), Int(b)) => Int(a.checked_mul(b)?),
        (Operator::FloorDiv, Int(a), Int(b)) if b != 0 => {
            // Python rounds toward negative infinity.
            let q = a.checked_div(b)?;
            Int(if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            })
        }
        (Operator::Mod, Int(a), Int(b)) if b != 0 => {
            // Python's remainder takes the divisor's sign.
            let r = a.checked_rem(b)?;
            Int(if r != 0 && ((r < 0) != (b < 0)) {
                r + b
            } else {
                r
            })
        }
        (Operator::Pow, Int(a), Int(b)) if (0..=62).contains(&b) => Int(a.checked_pow(b as u32)?),
        (Operator::Div, a, b) if b.f() != 0.0 => Float(a.f() / b.f()),
        (Operator::Add, a, b) => Float(a.f() + b.f()),
        (Operator::Sub, a, b) => Float(a.f() - b.f()),
        (Operator::Mult, a, b) => Float(a.f() * b.f()),
        (Operator::Pow, a, b) => Float(a.f().powf(b.f())),
        _ => return None,
    })
}

/// `int("4")`, `float(x)`: the number a scalar converts to.
fn number_of(s: &Scalar, int: bool) -> Option<ScalarKind> {
    let v = match s.kind {
        ScalarKind::Int(i) => i as f64,
        ScalarKind::Float(f) => f,
        ScalarKind::Str(_) => s.text.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    if int {
        if v.fract() != 0.0 && !matches!(s.kind, ScalarKind::Float(_)) {
            return None;
        }
        Some(ScalarKind::Int(v.trunc() as i64))
    } else {
        Some(ScalarKind::Float(v))
    }
}
