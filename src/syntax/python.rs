//! Python configs and training scripts, read statically with ruff's parser. Nothing is ever
//! executed: the tree is what the source says, and anything that needs running is unknown.
//!
//! The tree (the contract the dialect data in `rules/dialects/*.toml` relies on):
//!
//! * `roots[0]` is the module: a mapping (style `Implicit`, span `0..len`) holding
//!   - one entry per call, keyed by the callee's last name (`DataLoader`, `TrainingArguments`,
//!     `AdamW`, `autocast`, `get_cosine_schedule_with_warmup`), for calls anywhere in the file
//!     (module level, functions, methods, `if __name__ == "__main__":`). Its value is the call
//!     (see below). Where one name is called several times, the entry is the first call bound to
//!     a name (or made in a function) whose name contains `train`, else the first call;
//!   - one entry per module-level assignment `NAME = expr` / `NAME: T = expr` (these come after
//!     the calls, so an assignment wins a clash);
//!   - `args`: argparse defaults, `add_argument("--batch-size", type=int, default=64)` giving
//!     `batch_size` (the `dest`), key span on the option string, value the `default` expression;
//!   - `env`: `os.environ["X"] = "v"`, `os.environ.setdefault("X", "v")` giving `X`.
//! * `roots[1..]`: each call with a `name=` string keyword that is an element of a list or tuple
//!   (openpi's `_CONFIGS = [TrainConfig(name="pi0_libero", ...), ...]`): one training setup each.
//!   Such calls are not also collected into `roots[0]`.
//!
//! Expressions become nodes:
//! * literals (`64`, `-1`, `1e-4`, `True`, `None`, `'x'`): scalars with the token's span, editable;
//! * `dict(k=v)` and other calls: mappings of style `Call` over the call's span, tagged
//!   `call:<callee as written>`, one entry per keyword (`**kw` skipped) and per positional
//!   argument (`"0"`, `"1"`, ... until a `*args`); `{"k": v}` displays: mappings of style `Flow`;
//! * lists and tuples: sequences;
//! * a name bound once at module level to a literal or constant: that node (`shared` when the name
//!   is used more than once, since editing it changes every use); `args.x` where `args` came from
//!   `parse_args()`: the argparse default of `x`;
//! * constant expressions (`4 * 1024`, `2**10`): folded, `shared` (not a literal: never edited);
//! * anything else (other calls' results, f-strings, subscripts, env lookups): a scalar of kind
//!   `CustomTag` whose text is the source of the expression: its value is unknown.
//!
//! Class bodies' field defaults (`batch_size: int = 32` in a dataclass) are not settings: in a
//! framework's own code they are its defaults, which the dialect data states.

use super::{Document, Map, Node, ParseError};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;

/// Parses Python source into the tree described in the module documentation.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    let _ = text;
    Err(ParseError {
        message: "Python front-end not built yet".into(),
        span: 0..0,
    })
}

/// Replaces a literal keeping its form (`64` -> `16`, `True` -> `False`, quotes kept). `None`
/// for anything that is not a literal.
pub fn replace_literal(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    let _ = (text, node, value);
    None
}

/// Adds a keyword argument (`num_workers=4`) to a call, or an entry to a dict display, in the
/// call's own layout. `None` where there is no call to add to.
pub fn insert_argument(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let _ = (text, map, m, path, value);
    None
}
