//! Rust configs (Burn), read with syn: `#[derive(Config)]` structs, their builder chains, data
//! loader and learner builders, and the backend type.
//!
//! The tree (the contract `rules/dialects/burn.toml` relies on): `roots[0]` is a mapping (style
//! `Implicit`) holding
//! * one entry per `#[derive(Config)]` struct, keyed by its name (`TrainingConfig`): a mapping of
//!   its fields' `#[config(default = ...)]` values, then the values given to `Name::new(...)`
//!   (positional, for the fields without a default, in declaration order) and to `.with_<field>(..)`
//!   calls on it (last wins);
//! * `DataLoaderBuilder`: `.batch_size(..)`, `.num_workers(..)`, `.shuffle(..)` of the builder
//!   chain bound to a name containing `train` (else the first), a mapping of style `Call`;
//! * `LearnerBuilder`: `.devices(vec![..])` (a sequence), `.num_epochs(..)`,
//!   `.grads_accumulation(..)`, style `Call`;
//! * `backend`: `{ name = "Wgpu", float = "f32" }` from the type alias or `Autodiff<..>` type the
//!   training is instantiated with.
//!
//! Expressions become nodes as in the Python front-end: literals editable, `config.field` the
//! field's node, constant expressions folded and `shared`, anything else unknown (`CustomTag`).

use super::{Document, Map, Node, ParseError};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;

/// Parses Rust source into the tree described in the module documentation.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    let _ = text;
    Err(ParseError {
        message: "Rust front-end not built yet".into(),
        span: 0..0,
    })
}

/// Replaces a literal keeping its form (`64usize` -> `16usize`). `None` for non-literals.
pub fn replace_literal(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    let _ = (text, node, value);
    None
}

/// Adds `.key(value)` to a builder chain (before `.build(..)`). `None` elsewhere.
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
