//! Launch scripts (`.sh`, `.bash`): a tolerant scanner of command lines, not a shell. What it
//! does not understand is skipped, never an error.
//!
//! The tree (the contract the launch merge and the dialect data rely on): one root per command
//! that launches training, in source order, each a mapping of style `Command` whose span runs
//! from the command's first word to its last argument, tagged `launch:<program>` (`lerobot-train`,
//! `torchrun`, `accelerate`, `deepspeed`, `python`), holding
//! * `env`: the variables in effect for the command (`VAR=value cmd`, and earlier `export VAR=v`
//!   and `VAR=v` lines of the script), values spanning their token;
//! * `launcher`: the launcher's own flags (`nproc_per_node`, `nnodes`, `num_processes`,
//!   `mixed_precision`, `config_file`, `num_gpus`), dashes in names read as underscores, and
//!   `program` (`torchrun`);
//! * `script`: the script or module launched (`scripts/train.py`, `lerobot.scripts.train`);
//! * `positional`: the script's positional arguments (openpi's config name), a sequence;
//! * `args`: the script's flags, `--key.sub=value`, `--key value` and bare `--flag` (`true`),
//!   and Hydra `key=value` overrides, nested at the dots;
//! * `background`: `true` when the command ends in `&`.
//!
//! Values are plain scalars (typed by the dialect's loader, as the program parses its flags),
//! span the token including its quotes, and `$VAR` resolves to a variable set once in the script
//! to a literal; anything else (`$(..)`, a variable set twice) is unknown (`CustomTag`).

use super::{Document, Map, Node, ParseError};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;

/// Scans a launch script. Never fails: what is not understood is skipped.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    let _ = text;
    Ok(Document {
        format: super::Format::Shell,
        roots: Vec::new(),
        duplicates: Vec::new(),
    })
}

/// Replaces a flag's value token, keeping its quotes.
pub fn replace_value(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    let _ = (text, node, value);
    None
}

/// Appends `--key=value` (or `key=value` for Hydra) to a command line.
pub fn insert_flag(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let _ = (text, map, m, path, value);
    None
}
