//! YAML front-end: saphyr-parser events folded into the span tree.
//!
//! The event parser never expands aliases by itself, so the alias budget here is what stands
//! between a "billion laughs" file and the machine's memory. saphyr reports character indices;
//! they are mapped to byte offsets once per file.

use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Parser, ScalarStyle, Span as YSpan};

use super::{
    CoreTag, Document, DuplicateKey, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError,
    Quote, Scalar, ScalarKind, Span, MAX_DEPTH,
};

/// Most nodes alias expansion may create in one file; real configs stay far below it.
const ALIAS_NODE_BUDGET: usize = 200_000;

/// Char index -> byte offset, with an identity fast path for ASCII text.
struct Offsets {
    table: Option<Vec<usize>>,
    len: usize,
}

impl Offsets {
    fn new(text: &str) -> Offsets {
        if text.is_ascii() {
            return Offsets {
                table: None,
                len: text.len(),
            };
        }
        let mut table: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        table.push(text.len());
        Offsets {
            table: Some(table),
            len: text.len(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.table {
            None => char_index.min(self.len),
            Some(t) => t.get(char_index).copied().unwrap_or(self.len),
        }
    }

    fn span(&self, s: &YSpan) -> Span {
        self.byte(s.start.index())..self.byte(s.end.index())
    }
}

enum Frame {
    Map {
        start: usize,
        tag: Option<String>,
        anchor: usize,
        flow: bool,
        entries: Vec<Entry>,
        merges: Vec<Node>,
        key: Option<(String, Span, bool)>,
    },
    Seq {
        start: usize,
        tag: Option<String>,
        anchor: usize,
        items: Vec<Node>,
    },
}

struct Builder<'a> {
    text: &'a str,
    offsets: Offsets,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    roots: Vec<Node>,
    duplicates: Vec<DuplicateKey>,
    alias_nodes: usize,
}

pub fn parse(text: &str) -> Result<Document, ParseError> {
    let mut b = Builder {
        text,
        offsets: Offsets::new(text),
        stack: Vec::new(),
        anchors: HashMap::new(),
        roots: Vec::new(),
        duplicates: Vec::new(),
        alias_nodes: 0,
    };
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            let at = b.offsets.byte(e.marker().index());
            if e.info().contains("recursion limit") {
                // saphyr's own guard on flow nesting: say it the way every front-end does.
                return ParseError::too_deep(at);
            }
            ParseError {
                message: e.info().to_string(),
                span: at..at,
            }
        })?;
        b.event(event, &span)?;
    }
    Ok(Document {
        format: Format::Yaml,
        roots: b.roots,
        duplicates: b.duplicates,
    })
}

fn tag_text(tag: Option<&saphyr_parser::Tag>) -> Option<String> {
    tag.map(|t| {
        if t.handle == "tag:yaml.org,2002:" {
            format!("!!{}", t.suffix)
        } else {
            format!("{}{}", t.handle, t.suffix)
        }
    })
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, span: &YSpan) -> Result<(), ParseError> {
        let sp = self.offsets.span(span);
        match event {
            Event::Scalar(value, style, anchor, tag) => {
                let (start, value_at) = self.properties(&sp, anchor != 0, tag.is_some());
                let span = start..self.scalar_span(value_at..sp.end, style).end;
                let kind = match (tag.as_deref(), style) {
                    (Some(t), _) => tagged_kind(t),
                    (None, ScalarStyle::Plain) => ScalarKind::Plain,
                    (None, ScalarStyle::SingleQuoted) => ScalarKind::Str(Quote::Single),
                    (None, ScalarStyle::DoubleQuoted) => ScalarKind::Str(Quote::Double),
                    (None, ScalarStyle::Literal | ScalarStyle::Folded) => {
                        ScalarKind::Str(Quote::Block)
                    }
                };
                let node = Node {
                    span,
                    kind: NodeKind::Scalar(Scalar {
                        text: value.into_owned(),
                        kind,
                    }),
                    tag: tag_text(tag.as_deref()),
                    shared: false,
                };
                self.finish(node, anchor)
            }
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id) else {
                    return Err(ParseError {
                        message: "alias refers to an unknown anchor".into(),
                        span: sp,
                    });
                };
                let (nodes, levels) = size(target);
                self.alias_nodes += nodes;
                if self.alias_nodes > ALIAS_NODE_BUDGET {
                    return Err(ParseError {
                        message: format!(
                            "aliases expand to more than {ALIAS_NODE_BUDGET} nodes (a \"billion laughs\" file?)"
                        ),
                        span: sp,
                    });
                }
                self.check_depth(levels, sp.start)?;
                let mut node = target.clone();
                mark_shared(&mut node);
                self.finish(node, 0)
            }
            Event::MappingStart(anchor, tag) => {
                self.check_depth(0, sp.start)?;
                let flow = self.text.as_bytes().get(sp.start) == Some(&b'{');
                self.stack.push(Frame::Map {
                    start: sp.start,
                    tag: tag_text(tag.as_deref()),
                    anchor,
                    flow,
                    entries: Vec::new(),
                    merges: Vec::new(),
                    key: None,
                });
                Ok(())
            }
            Event::SequenceStart(anchor, tag) => {
                self.check_depth(0, sp.start)?;
                self.stack.push(Frame::Seq {
                    start: sp.start,
                    tag: tag_text(tag.as_deref()),
                    anchor,
                    items: Vec::new(),
                });
                Ok(())
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let Some(frame) = self.stack.pop() else {
                    return Ok(());
                };
                let (node, anchor) = self.close(frame, sp.end);
                self.finish(node, anchor)
            }
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd
            | Event::Nothing => Ok(()),
        }
    }

    /// Refuses a container (or an alias of `below` levels) that would nest past [`MAX_DEPTH`].
    fn check_depth(&self, below: usize, at: usize) -> Result<(), ParseError> {
        if self.stack.len() + below >= MAX_DEPTH {
            return Err(ParseError::too_deep(at));
        }
        Ok(())
    }

    /// saphyr's span of a scalar starts at its properties (`&anchor`, `!tag`). The anchor is
    /// not part of the value: a fix that replaced it would orphan every `*alias` of it. The
    /// span keeps a tag that comes right before the value (`&a !!int "4"` -> `!!int "4"`), so
    /// that a fix replaces the tag with the value; after `!!int &a "4"` it is the bare token.
    /// Returns where the span starts and where the value token itself starts.
    fn properties(&self, sp: &Span, anchored: bool, tagged: bool) -> (usize, usize) {
        if !anchored && !tagged {
            return (sp.start, sp.start);
        }
        let bytes = self.text.as_bytes();
        let mut i = sp.start;
        let mut value_from = sp.start;
        let mut last_tag = None;
        // Properties are `&name` / `!tag` tokens separated by white space (and line breaks).
        while i < sp.end && matches!(bytes.get(i), Some(b'&' | b'!')) {
            let is_tag = bytes[i] == b'!';
            let end = if bytes.get(i + 1) == Some(&b'<') {
                self.text[i..sp.end].find('>').map_or(sp.end, |e| i + e + 1)
            } else {
                let rest = &bytes[i..sp.end];
                i + rest
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || b",[]{}".contains(b))
                    .unwrap_or(rest.len())
            };
            last_tag = is_tag.then_some(i);
            i = end;
            while i < sp.end && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            value_from = i;
        }
        (last_tag.unwrap_or(value_from), value_from)
    }

    /// saphyr's span of a quoted scalar runs over trailing spaces and comments; rescan to the
    /// closing quote so a fix replaces exactly the token.
    fn scalar_span(&self, sp: Span, style: ScalarStyle) -> Span {
        let bytes = self.text.as_bytes();
        let quote = match style {
            ScalarStyle::SingleQuoted => b'\'',
            ScalarStyle::DoubleQuoted => b'"',
            _ => return sp,
        };
        if bytes.get(sp.start) != Some(&quote) {
            return sp;
        }
        let mut i = sp.start + 1;
        while i < bytes.len() {
            let c = bytes[i];
            if quote == b'"' && c == b'\\' {
                i += 2;
                continue;
            }
            if c == quote {
                if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                return sp.start..i + 1;
            }
            i += 1;
        }
        sp
    }

    fn close(&mut self, frame: Frame, end: usize) -> (Node, usize) {
        match frame {
            Frame::Seq {
                start,
                tag,
                anchor,
                items,
            } => {
                let mut end = items
                    .last()
                    .map_or(end.max(start), |n| n.span.end.max(start));
                if self.text.as_bytes().get(start) == Some(&b'[') {
                    // A flow sequence ends at its closing bracket; include it.
                    if let Some(close) = self.text[end.min(self.text.len())..].find(']') {
                        end += close + 1;
                    }
                }
                (
                    Node {
                        span: start..end,
                        kind: NodeKind::Seq(items),
                        tag,
                        shared: false,
                    },
                    anchor,
                )
            }
            Frame::Map {
                start,
                tag,
                anchor,
                flow,
                mut entries,
                merges,
                ..
            } => {
                let mut last_end = entries
                    .iter()
                    .map(|e| e.value.span.end.max(e.key_span.end))
                    .max()
                    .unwrap_or(start);
                if flow {
                    // A flow mapping ends at its closing brace; include it.
                    if let Some(close) = self.text[last_end.min(self.text.len())..].find('}') {
                        last_end += close + 1;
                    }
                }
                let mut first: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
                for (i, e) in entries.iter().enumerate() {
                    match first.get(e.key.as_str()) {
                        Some(&p) => self.duplicates.push(DuplicateKey {
                            key: e.key.clone(),
                            first: entries[p].key_span.clone(),
                            second: e.key_span.clone(),
                        }),
                        None => {
                            first.insert(&e.key, i);
                        }
                    }
                }
                let mut present: HashSet<String> = if merges.is_empty() {
                    HashSet::new()
                } else {
                    first.into_keys().map(str::to_string).collect()
                };
                // `<<` merges: explicit keys win, earlier merge sources win over later ones.
                for source in merges {
                    let maps: Vec<&Node> = match &source.kind {
                        NodeKind::Map(_) => vec![&source],
                        NodeKind::Seq(items) => items.iter().collect(),
                        NodeKind::Scalar(_) => vec![],
                    };
                    for m in maps {
                        if let NodeKind::Map(mm) = &m.kind {
                            for e in &mm.entries {
                                if present.insert(e.key.clone()) {
                                    let mut e = e.clone();
                                    mark_shared(&mut e.value);
                                    entries.push(e);
                                }
                            }
                        }
                    }
                }
                (
                    Node {
                        span: start..last_end.max(start),
                        kind: NodeKind::Map(Map::new(
                            entries,
                            if flow {
                                MapStyle::Flow
                            } else {
                                MapStyle::Block
                            },
                        )),
                        tag,
                        shared: false,
                    },
                    anchor,
                )
            }
        }
    }

    /// Hands a completed node to its parent (or makes it a document root).
    fn finish(&mut self, node: Node, anchor: usize) -> Result<(), ParseError> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.roots.push(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                merges,
                key,
                ..
            }) => match key.take() {
                None => {
                    let plain_merge = matches!(
                        &node.kind,
                        NodeKind::Scalar(Scalar { text, kind: ScalarKind::Plain }) if text == "<<"
                    );
                    let text = match &node.kind {
                        NodeKind::Scalar(s) => s.text.clone(),
                        _ => self.text.get(node.span.clone()).unwrap_or("").to_string(),
                    };
                    *key = Some((text, node.span, plain_merge));
                }
                Some((k, key_span, is_merge)) => {
                    if is_merge {
                        merges.push(node);
                    } else {
                        entries.push(Entry {
                            key: k,
                            key_span,
                            value: node,
                        });
                    }
                }
            },
        }
        Ok(())
    }
}

/// The kind of a tagged scalar: one of the core schema's types, or a custom tag.
fn tagged_kind(t: &saphyr_parser::Tag) -> ScalarKind {
    CoreTag::from_tag(&format!("{}{}", t.handle, t.suffix))
        .map_or(ScalarKind::CustomTag, ScalarKind::Tagged)
}

/// How many nodes a node holds (itself included) and how many levels of containers (a scalar
/// has none), in one walk: what an alias adds to the budget and to the depth.
fn size(node: &Node) -> (usize, usize) {
    let children: Box<dyn Iterator<Item = &Node>> = match &node.kind {
        NodeKind::Map(m) => Box::new(m.entries.iter().map(|e| &e.value)),
        NodeKind::Seq(items) => Box::new(items.iter()),
        NodeKind::Scalar(_) => return (1, 0),
    };
    let (nodes, deepest) = children
        .map(size)
        .fold((1, 0), |(n, d), (cn, cd)| (n + cn, d.max(cd)));
    (nodes, deepest + 1)
}

fn mark_shared(node: &mut Node) {
    node.shared = true;
    match &mut node.kind {
        NodeKind::Map(m) => m.entries.iter_mut().for_each(|e| mark_shared(&mut e.value)),
        NodeKind::Seq(items) => items.iter_mut().for_each(mark_shared),
        NodeKind::Scalar(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).expect("parses").roots.remove(0)
    }

    #[test]
    fn spans_are_bytes_and_quoted_scalars_end_at_the_quote() {
        let t = "# é\nname: \"résnet\"   # trailing\nlr: 1e-4\n";
        let r = root(t);
        let name = r.get_path(&["name"]).unwrap();
        assert_eq!(&t[name.span.clone()], "\"résnet\"");
        let lr = r.get_entry_path(&["lr"]).unwrap();
        assert_eq!(&t[lr.key_span.clone()], "lr");
        assert_eq!(&t[lr.value.span.clone()], "1e-4");
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let t = "base: &b {lr: 1, bs: 2}\nrun:\n  <<: *b\n  bs: 4\n";
        let r = root(t);
        let run = r.get_path(&["run"]).unwrap().as_map().unwrap();
        assert_eq!(run.get("bs").unwrap().as_scalar().unwrap().text, "4");
        let lr = run.get("lr").unwrap();
        assert!(lr.shared);
        assert_eq!(lr.as_scalar().unwrap().text, "1");
    }

    #[test]
    fn billion_laughs_is_an_error_not_an_allocation() {
        let mut t = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in "bcdefghij".chars() {
            t.push_str(&format!("{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
            prev = c;
        }
        let err = parse(&t).unwrap_err();
        assert!(err.message.contains("aliases expand"), "{}", err.message);
    }

    #[test]
    fn duplicates_tags_and_multidoc() {
        let t = "a: 1\na: 2\nt: !!python/tuple [1, 2]\n---\nb: 3\n";
        let d = parse(t).unwrap();
        assert_eq!(d.roots.len(), 2);
        assert_eq!(d.duplicates.len(), 1);
        assert_eq!(
            d.roots[0].get_path(&["t"]).unwrap().tag.as_deref(),
            Some("!!python/tuple")
        );
    }

    #[test]
    fn tagged_scalars_are_typed_by_their_tag_and_spans_leave_anchors_out() {
        use crate::syntax::{Loader, Value};
        let t = "i: !!int \"4\"  # c\nf: !!float '200'\ns: !!str 5\nb: !!bool \"true\"\nn: !!null ''\nv: !<tag:yaml.org,2002:int> \"7\"\ne: !ENV 4\nx: &x !!int \"3\"\ny: &y 5\nbad: !!int \"abc\"\n";
        let r = root(t);
        let value = |k: &str| {
            r.get_path(&[k])
                .unwrap()
                .as_scalar()
                .unwrap()
                .value(Loader::Yaml11)
        };
        assert_eq!(value("i"), Value::Int(4));
        assert_eq!(value("f"), Value::Float(200.0));
        assert_eq!(value("s"), Value::Str("5".into()));
        assert_eq!(value("b"), Value::Bool(true));
        assert_eq!(value("n"), Value::Null);
        assert_eq!(value("v"), Value::Int(7));
        assert_eq!(value("e"), Value::Unknown);
        assert_eq!(value("x"), Value::Int(3));
        assert_eq!(value("bad"), Value::Unknown);
        let span = |k: &str| &t[r.get_path(&[k]).unwrap().span.clone()];
        assert_eq!(span("i"), "!!int \"4\"");
        assert_eq!(span("e"), "!ENV 4");
        assert_eq!(span("x"), "!!int \"3\"");
        assert_eq!(span("y"), "5");
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let t = "[".repeat(10_000);
        assert!(parse(&t).unwrap_err().message.contains("nested too deeply"));
        // Block sequences: saphyr bounds flow nesting only; 200k levels overflowed the stack.
        let mut t = String::new();
        for _ in 0..200_000 {
            t.push_str("- ");
        }
        t.push('1');
        let e = parse(&t).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
        let mut t = String::new();
        for i in 0..300 {
            t.push_str(&" ".repeat(i));
            t.push_str("a:\n");
        }
        assert!(parse(&t).unwrap_err().message.contains("nested too deeply"));
        // An alias may not carry a deep anchor past the limit either.
        let deep = "[".repeat(200) + &"]".repeat(200);
        let t = format!("a: &x {deep}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n");
        assert!(parse(&t).unwrap_err().message.contains("nested too deeply"));
    }

    #[test]
    fn every_duplicate_among_100k_keys_is_found() {
        // Found through a hash map now; every key used to be compared with every earlier one
        // (100k keys took 86 s). The time itself is `benches/scaling.rs`'s to check.
        let mut t = String::new();
        for i in 0..100_000 {
            t.push_str(&format!("k{i}: {i}\nk{i}: {i}\n"));
        }
        let d = parse(&t).unwrap();
        assert_eq!(d.duplicates.len(), 100_000);
    }
}
