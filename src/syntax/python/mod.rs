//! Python configs and training scripts, read statically with ruff's parser. Nothing is ever
//! executed: the tree is what the source says, and anything that needs running is unknown.
//!
//! The tree (the contract the dialect data in `rules/dialects/*.toml` relies on):
//!
//! * `roots[0]` is the module: a mapping (style `Implicit`, span `0..len`) holding
//!   - one entry per call, keyed by the callee's last name (`DataLoader`, `TrainingArguments`,
//!     `AdamW`, `autocast`, `backward`), for calls anywhere in the file (module level,
//!     functions, methods, `if __name__ == "__main__":`). Its value is the call (see below).
//!     Where one name is called several times, the entry is the first call bound to a name (or
//!     made in a function) whose name contains `train`, else the first call;
//!   - one entry per module-level assignment `NAME = expr` / `NAME: T = expr` (these come after
//!     the calls, so an assignment wins a clash);
//!   - `args`: argparse defaults, `add_argument("--batch-size", type=int, default=64)` giving
//!     `batch_size` (the `dest`), key span on the option string, value the `default` expression;
//!   - `env`: `os.environ["X"] = "v"`, `os.environ.setdefault("X", "v")`,
//!     `os.environ.update({"X": "v"})` / `update(X="v")` giving `X` (also through
//!     `from os import environ`).
//! * `roots[1..]`: each call with a `name=` string keyword that is an element of a module-level
//!   list or tuple (openpi's `_CONFIGS = [TrainConfig(name="pi0_libero", ...), ...]`): one
//!   training setup each. Such calls (and the calls inside them) are not also collected into
//!   `roots[0]`.
//!
//! Expressions become nodes:
//! * literals (`64`, `-1`, `1e-4`, `True`, `None`, `'x'`): scalars with the token's span, editable;
//!   triple-quoted, prefixed and implicitly concatenated strings are never edited;
//! * `dict(k=v)` and other calls: mappings of style `Call` over the call's span, tagged
//!   `call:<callee as written>`, one entry per positional argument (`"0"`, `"1"`, ... until a
//!   `*args`) and keyword (`**kw` skipped); `{"k": v}` displays: mappings of style `Flow`;
//! * lists and tuples: sequences;
//! * a name bound once at module level (by one plain assignment, in a block such as
//!   `if __name__ == "__main__":` too): its value's node (`shared` when the name is used more
//!   than once, since editing it changes every use); a name bound again in any other way (`+=`,
//!   unpacking, a loop or `with` target, an import, `global` in a function) is unknown;
//!   in a function, its own names hide the module's: a parameter or a name it binds otherwise
//!   is unknown, one it binds by one plain assignment reads as that value; `args.x` where `args` came from
//!   `parse_args()`: the argparse default of `x`, tagged `arg:x`;
//! * `os.environ.get("X", d)`, `os.getenv("X", d)`, `os.environ["X"]`: the default `d` (unknown
//!   without one), tagged `env:X` and never edited: a launch script that sets `X` replaces it;
//! * constant expressions (`4 * 1024`, `2**10`, `int("4")`): folded, `shared` (not a literal);
//! * anything else (other calls' results, f-strings, subscripts): a scalar of kind `CustomTag`
//!   whose text is the source of the expression: its value is unknown.
//!
//! Class bodies' field defaults (`batch_size: int = 32` in a dataclass) are not settings: in a
//! framework's own code they are its defaults, which the dialect data states.

mod edit;
mod nesting;
mod tree;

use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::{self as ast, AnyNodeRef};
use ruff_text_size::Ranged;

use super::{Document, Format, ParseError, MAX_DEPTH};

pub use edit::{append_assignment, insert_argument, replace_literal};

/// Parses Python source into the tree described in the module documentation.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    // Deep nesting costs the parser memory by the level: refuse it before the parser runs.
    nesting::check(text)?;
    let parsed =
        ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python);
    if let Some(at) = tree_too_deep(parsed.syntax()) {
        // Brackets are not the only nesting: `1 + 1 + ...`, `- - 1`, `a.b.c...` and f-string
        // fields nest without them. Dropping such a tree recurses once per level, so a hostile
        // file's tree is leaked rather than dropped (the parser itself grows its own stack).
        std::mem::forget(parsed);
        return Err(ParseError::too_deep(at));
    }
    if let Some(e) = parsed.errors().first() {
        let start = usize::from(e.location.start()).min(text.len());
        let end = usize::from(e.location.end()).clamp(start, text.len());
        return Err(ParseError {
            message: e.error.to_string(),
            span: start..end,
        });
    }
    let roots = tree::build(text, &parsed.syntax().body);
    Ok(Document {
        format: Format::Python,
        roots,
        duplicates: Vec::new(),
    })
}

/// Where statements and expressions nest deeper than twice [`MAX_DEPTH`] (a call's callee and
/// operators add levels that brackets do not show), found without recursing past that depth.
fn tree_too_deep(module: &ast::ModModule) -> Option<usize> {
    struct Depth {
        depth: usize,
        at: Option<usize>,
    }
    impl<'a> SourceOrderVisitor<'a> for Depth {
        fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
            // `leave_node` follows every `enter_node`, skipped or not.
            if node.is_statement() || node.is_expression() {
                self.depth += 1;
                if self.depth > 2 * MAX_DEPTH && self.at.is_none() {
                    self.at = Some(usize::from(node.start()));
                }
            }
            if self.at.is_some() {
                TraversalSignal::Skip
            } else {
                TraversalSignal::Traverse
            }
        }
        fn leave_node(&mut self, node: AnyNodeRef<'a>) {
            if node.is_statement() || node.is_expression() {
                self.depth -= 1;
            }
        }
    }
    let mut v = Depth { depth: 0, at: None };
    v.visit_body(&module.body);
    v.at
}

#[cfg(test)]
mod tests;
