//! Dialect files (`rules/dialects/*.toml`): how to recognise a framework's config and where
//! each canonical setting lives in it. Data, so a user can add a framework without Rust.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::setup::Concept;
use crate::syntax::{Format, Loader};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dialect {
    /// Short id used in messages and `--select`-style config (`hf-trainer`).
    pub name: String,
    /// Human name (`Hugging Face Trainer`).
    pub title: String,
    /// How the framework's loader types YAML plain scalars.
    #[serde(default)]
    pub loader: Loader,
    /// Formats this dialect appears in.
    pub formats: Vec<Format>,
    /// How the framework reads a file of each format (`[load.yaml]`, `[load.json]`): what its
    /// loader does with what the format allows but the framework may not accept.
    #[serde(default)]
    pub load: BTreeMap<Format, LoadSpec>,
    /// Signatures; the best-scoring one over all dialects wins.
    pub detect: Vec<Signature>,
    /// Where each canonical setting lives.
    #[serde(default)]
    pub settings: Settings,
    /// Framework behaviour the rules need and data of this shape can say.
    #[serde(default)]
    pub semantics: Semantics,
    /// Configs of this framework that run no training (evaluation, inference, generation):
    /// the file is still this dialect's, but training rules stay silent on it.
    #[serde(default)]
    pub not_training: Vec<NotTraining>,
    /// Where the settings sit in code and launch scripts (`[[mount]]`): for a format with
    /// mounts, the dialect reads the tree they assemble; for the others, the file's root.
    #[serde(default)]
    pub mount: Vec<Mount>,
    /// The key that lists the files a config inherits from, relative to it (mmengine
    /// `_base_`): their settings lie under the file's own.
    pub inherit: Option<String>,
    /// Hydra loads the framework's configs (`@hydra.main`): a file's `defaults:` list is
    /// composed, a config-group option is read at its package, and `${a.b}` interpolations
    /// are resolved (src/launch/hydra.rs).
    #[serde(default)]
    pub hydra: bool,
    /// Keys whose value may name another file that stands in for it (`fsdp_config:
    /// fsdp.json`): the file's mapping is read in the key's place (`[[link]]`).
    #[serde(default)]
    pub link: Vec<Link>,
    /// A model the config describes by its dimensions (`[architecture]`), for the memory
    /// rules when the file names no model the catalog knows.
    pub architecture: Option<ArchitectureSpec>,
    /// The package whose pinned version decides the defaults that changed between releases,
    /// and the newest release the dialect's readings were checked against.
    pub version: Option<VersionSpec>,
    /// A V-JEPA training step (`[jepa]`): encoder, EMA target and predictor sized from the
    /// config (src/dialect/jepa.rs).
    pub jepa: Option<super::jepa::JepaSpec>,
    /// A robot policy's step (`[policy]`): its parts, cameras and freeze flags read from the
    /// policy config (src/dialect/policy.rs).
    pub policy: Option<super::policy::PolicySpec>,
    /// A detector's step (`[detector]`): backbone, pyramid, heads and input read from the
    /// config (src/dialect/detector.rs).
    pub detector: Option<super::detector::DetectorSpec>,
    /// The key that names one setup among several in a file (openpi's `TrainConfig(name=...)`),
    /// quoted in messages so a finding says which setup it is about.
    pub setup_name: Option<String>,
    /// The programs that run this framework's configs, where a config names the one meant for
    /// it (`[[recipe]]`: torchtune's `tune run <recipe>`): what that program fixes and no key
    /// holds, such as running on one GPU.
    #[serde(default)]
    pub recipe: Vec<Recipe>,
}

/// A program a config is made for, named by the file's name or by a command in its header
/// comment, and the settings the program fixes whatever the keys say.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// What the program is, for messages (`torchtune's single-device recipes`).
    pub title: String,
    /// Why the program fixes these settings, with the framework's source that says so
    /// (shown by `--show-settings`).
    pub why: String,
    /// A file whose stem ends in one of these is made for the program (`_single_device`).
    #[serde(default)]
    pub file_stem_ends: Vec<String>,
    /// A file whose stem holds one of these as a word (between `-`, `_`, `.` or the ends:
    /// `gpt2-arc-easy--cpu`) is made for the program.
    #[serde(default)]
    pub file_stem_words: Vec<String>,
    /// A header comment running this command (`tune run`) ...
    pub command: Option<String>,
    /// ... on one of these programs (`lora_finetune_single_device`).
    #[serde(default)]
    pub programs: Vec<String>,
    /// The program is not this one when the condition holds (a key the program reads that
    /// changes what it fixes).
    pub unless: Option<Condition>,
    /// The settings the program fixes, as canonical values; a key the file sets wins.
    pub settings: BTreeMap<Concept, toml::Value>,
}

/// A dialect's `[settings.*]` tables. A built-in dialect's are read from their JSON when first
/// used: every file needs every dialect's signatures, but only the detected dialect's settings.
#[derive(Clone, Default)]
pub struct Settings {
    parsed: std::sync::OnceLock<BTreeMap<Concept, SettingSpec>>,
    /// The built-in dialect's `settings` table as JSON (build.rs writes it apart).
    json: Option<&'static str>,
}

impl Settings {
    /// Settings read from `json` on first use; the unit test of the built-in dialects reads
    /// every one, so a failure here is a build bug.
    pub fn lazy(json: &'static str) -> Settings {
        Settings {
            parsed: std::sync::OnceLock::new(),
            json: Some(json),
        }
    }
}

impl std::ops::Deref for Settings {
    type Target = BTreeMap<Concept, SettingSpec>;

    fn deref(&self) -> &Self::Target {
        self.parsed.get_or_init(|| match self.json {
            Some(json) => serde_json::from_str(json)
                .unwrap_or_else(|e| panic!("a built-in dialect's settings: {e}")),
            None => BTreeMap::new(),
        })
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl From<BTreeMap<Concept, SettingSpec>> for Settings {
    fn from(map: BTreeMap<Concept, SettingSpec>) -> Settings {
        Settings {
            parsed: map.into(),
            json: None,
        }
    }
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(BTreeMap::<Concept, SettingSpec>::deserialize(d)?.into())
    }
}

/// A key whose value may be the path of a JSON or YAML file holding the mapping the key takes
/// (Hugging Face `fsdp_config`: "a path to a JSON config file or an already loaded dict"). The
/// path is looked up next to the config and in each folder above it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub key: String,
}

/// Where a config's own model dimensions live: the estimator builds a catalog entry of
/// `family` from them (src/estimate/models.rs field names).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureSpec {
    /// The block recipe, as the model catalog's `family` names it (`llama`, `gpt2`, `vit`).
    pub family: String,
    /// A key that picks another recipe: its loaded value, as text, -> the family (GPT-NeoX's
    /// `gpt_j_residual: false` is a sequential GPT-2 block). A value not listed keeps `family`.
    pub family_by: Option<FamilyBy>,
    /// The mapping that describes the model (`model`): findings about it point there.
    pub at: String,
    /// The dimensions are a model of `family` only when all of these hold (OLMo's
    /// `activation_type: swiglu` in a sequential block is a Llama-style block).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Catalog field (`hidden_size`) -> where its value is read; the first source present wins.
    pub fields: BTreeMap<String, Vec<ArchitectureSource>>,
    /// Catalog fields' values when no source is present: the framework's defaults.
    #[serde(default)]
    pub defaults: BTreeMap<String, toml::Value>,
    /// The framework reads `-` in a key as `_` (GPT-NeoX): each key above is also looked up
    /// with the two swapped.
    #[serde(default)]
    pub dashes_are_underscores: bool,
    /// The framework's blocks are the very modules the family's recipe was written from
    /// (llm-foundry's MPT is the `mosaicml/mpt-*` remote code): no bound on their activations.
    #[serde(default)]
    pub catalog_blocks: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyBy {
    pub key: String,
    pub map: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureSource {
    pub key: String,
    /// Maps the loaded value, as text, to the field's value; values not listed skip the source.
    pub map: Option<BTreeMap<String, toml::Value>>,
    /// Multiplies the value by another key's (OLMo's `mlp_ratio` x `d_model`).
    pub times_key: Option<String>,
    /// Multiplies the value by a constant (a fused SwiGLU projection's width / 2).
    pub scale: Option<f64>,
    /// Only read this source when the condition holds.
    pub when: Option<Condition>,
}

/// A part of a code front-end's tree placed in the dialect's key space: the keyword arguments
/// of `TrainingArguments(...)` at the root, those of `Trainer(...)` at `trainer`, the flags of
/// `lerobot-train` at the root.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    pub format: Format,
    /// Dotted path in the front-end's tree; empty for its whole root.
    #[serde(default)]
    pub take: String,
    /// Dotted path in the dialect's key space; empty for the root.
    #[serde(default)]
    pub at: String,
    /// Launch scripts: the scripts or modules the mount applies to, matched against the
    /// launched `script` exactly or as its path's ending (`scripts/train.py`).
    #[serde(default)]
    pub script: Vec<String>,
    /// Launch scripts: the flag (in `args`) that names a config file the other flags
    /// override (`config_path`).
    pub config_flag: Option<String>,
    /// Launch scripts: the first positional argument names a setup defined in code (openpi's
    /// `scripts/train.py pi0_libero` names `TrainConfig(name="pi0_libero", ...)`).
    #[serde(default)]
    pub named_config: bool,
    /// Launch lines of any script whose first positional argument is one of these (a
    /// LightningCLI script's `fit`) and that pass `config_flag`: the mount takes them only.
    #[serde(default)]
    pub subcommand: Vec<String>,
    /// A dialect key the taken part's name (the last segment of `take`) is also placed at, as
    /// a string: in code the class a call builds (`PPOConfig(...)`) names what it configures,
    /// whatever keywords it is given.
    pub name_at: Option<String>,
}

impl Mount {
    /// Whether a launch line (the shell front-end's tree) is one this mount is for.
    pub fn takes_line(&self, line: &crate::syntax::Node) -> bool {
        let script = line
            .get_path(&["script"])
            .and_then(|n| n.as_scalar())
            .map(|s| s.text.as_str());
        if self.subcommand.is_empty() {
            return script.is_some_and(|s| self.takes_script(s));
        }
        let first = match line.get_path(&["positional"]).map(|n| &n.kind) {
            Some(crate::syntax::NodeKind::Seq(items)) => items
                .first()
                .and_then(|n| n.as_scalar())
                .map(|s| s.text.as_str()),
            _ => None,
        };
        let config_given = self
            .config_flag
            .as_ref()
            .is_some_and(|f| line.get_path(&["args", f.as_str()]).is_some());
        (self.script.is_empty() || script.is_some_and(|s| self.takes_script(s)))
            && first.is_some_and(|f| self.subcommand.iter().any(|c| c == f))
            && config_given
    }

    /// The mount names what it runs: scripts, or a subcommand with its config flag.
    pub fn names_its_lines(&self) -> bool {
        !self.script.is_empty() || !self.subcommand.is_empty()
    }

    /// Whether a launched script or module is one this mount is for.
    pub fn takes_script(&self, script: &str) -> bool {
        self.script.is_empty()
            || self.script.iter().any(|s| {
                script == s
                    || script
                        .strip_suffix(s.as_str())
                        .is_some_and(|head| head.ends_with('/'))
            })
    }
}

/// One way a config of the dialect says it does not train. It holds when every condition in
/// `when` holds and none of the `absent` keys is present.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotTraining {
    /// Why the framework trains nothing with such a file, with the source that says so
    /// (shown by `--show-settings`).
    pub why: String,
    /// Keys and the values they must have (a condition's `default` applies when its key is
    /// absent).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Dotted keys that must all be absent (a training run would set them).
    #[serde(default)]
    pub absent: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    /// Dotted key paths and the score each adds when present.
    pub keys: BTreeMap<String, u32>,
    /// The signature matches only when the score reaches this.
    pub min_score: u32,
    /// At least one of these must be present (dotted paths).
    #[serde(default)]
    pub require_any: Vec<String>,
    /// None of these may be present.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// File-name globs (matched against the file name only); empty = any name.
    #[serde(default)]
    pub filenames: Vec<String>,
    /// Path globs (matched against the path from the project's root, see
    /// [`crate::project::relative`]) of files the signature never matches: test suites whose
    /// scripts train a step or two to check something.
    #[serde(default)]
    pub not_paths: Vec<String>,
    /// `filenames` and `not_paths` compiled, on first use (detection runs on every file).
    #[serde(skip)]
    compiled: std::sync::OnceLock<(globset::GlobSet, globset::GlobSet)>,
}

impl Signature {
    /// Whether the file's name and path let this signature apply at all.
    pub fn applies_to(&self, path: &std::path::Path) -> bool {
        let (names, not_paths) = self.compiled.get_or_init(|| {
            let set = |globs: &[String]| {
                let mut b = globset::GlobSetBuilder::new();
                // An invalid glob matches nothing (a dialect test keeps the built-in ones valid).
                for g in globs.iter().filter_map(|g| globset::Glob::new(g).ok()) {
                    b.add(g);
                }
                b.build().unwrap_or_else(|_| globset::GlobSet::empty())
            };
            (set(&self.filenames), set(&self.not_paths))
        });
        let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        (self.filenames.is_empty() || names.is_match(file_name))
            && (self.not_paths.is_empty() || !not_paths.is_match(crate::project::relative(path)))
    }
}

/// `[version]`: the framework's package and its newest release hwlint knows.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionSpec {
    pub package: String,
    /// Other names the same releases are installed by (`pytorch-lightning` beside `lightning`).
    #[serde(default)]
    pub also: Vec<String>,
    pub newest: String,
    /// The oldest release whose defaults were read. A pin below it still gets these defaults,
    /// and says they were not checked for that release. Absent: each default that changed
    /// lists its older values (`before`).
    pub checked_from: Option<String>,
}

/// A default that held before a release (`[[settings.X.before]] version = "1.7.0"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Before {
    pub version: String,
    pub default: toml::Value,
    /// The package whose release `version` is, when not the framework's own (`torch`): its
    /// pin is read like the framework's.
    pub package: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingSpec {
    /// Where to read it; the first source that yields a value wins.
    pub from: Vec<Source>,
    /// The framework's value when no source is present (`None`: unknown).
    pub default: Option<toml::Value>,
    /// Efficiency rules may fire on this default (DESIGN.md "Evidence and defaults").
    #[serde(default)]
    pub default_relevant: bool,
    /// The setting exists only when another key has one of these values (HF `save_steps` only
    /// counts under `save_strategy: steps`); gates the sources and the default alike.
    pub when: Option<Condition>,
    /// The setting exists only when one of these holds (a GRPO recipe is told by any of the
    /// keys only GRPO's config has); gates the sources and the default alike.
    #[serde(default)]
    pub when_any: Vec<Condition>,
    /// The setting does not exist when this holds (openpi's `num_workers` is not read when the
    /// data config names an RLDS directory).
    pub unless: Option<Condition>,
    /// Defaults of releases before the ones `default` holds for, read when the pinned version
    /// is below them (src/dialect/version.rs).
    #[serde(default)]
    pub before: Vec<Before>,
    /// The default does not apply when this holds, though the sources are read (in code a
    /// TRL trainer takes its models as objects: its scripts' default model is no reading).
    pub default_unless: Option<Condition>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Dotted key path (`trainer.devices`, `bf16.enabled`).
    pub key: String,
    /// Maps the loaded value, written as text (`true`, `16`, `bf16`), to the canonical one.
    /// When given, values not listed skip this source (the next one is tried).
    pub map: Option<BTreeMap<String, toml::Value>>,
    /// A list value counts as its length (Lightning `devices: [0, 1]`), and so does a
    /// comma-separated string of ids (`gpus: "0,1"`, `"1,"`: Lightning's device parser reads it
    /// as a list).
    #[serde(default)]
    pub list_len: bool,
    /// A float below 1 is a fraction of the total steps (HF `warmup_steps: 0.1`).
    #[serde(default)]
    pub fraction_of_total: bool,
    /// Only read this source when another key has one of these values.
    pub when: Option<Condition>,
    /// Appends `/` and this other key's value (torchtitan `model.name` + `model.flavor` reads
    /// as `llama3/8B`).
    pub suffix_key: Option<String>,
    /// Multiplies the value by another key's (frames x tokens per frame); the source is skipped
    /// when that key is absent or not a number.
    pub times_key: Option<String>,
    /// Adds another key's value (Kubeflow's Master replicas + Worker replicas); the source is
    /// skipped when that key is absent or not a number.
    pub plus_key: Option<String>,
    /// A size written with a unit (`220G`, `512MB`, `1T`) read as gigabytes.
    #[serde(default)]
    pub size_gb: bool,
    /// The value is one `name=value` entry of a comma-separated string (HF `optim_args:
    /// "rank=64, scale=0.25"`); the source is skipped when the entry is absent.
    pub entry: Option<String>,
    /// Values, as text, that mean "not set" (`-1` for HF `max_steps`): the next source or the
    /// default applies.
    #[serde(default)]
    pub unset: Vec<String>,
    /// The setting is the comma-joined `names` of these boolean keys that hold true, a key the
    /// file leaves out taking its `default` (LitGPT's six `lora_*` switches name the adapted
    /// layers). Read when any of them is in the file; `key` is where a fix would look first.
    #[serde(default)]
    pub gather: Vec<Gathered>,
    /// What the source gave in releases before the ones `map` holds for (TRL's GRPO without
    /// a `beta` kept a reference model before 0.19), read when the pinned version is below.
    #[serde(default)]
    pub before: Vec<Before>,
    /// The first release that reads this key. Where the pinned release is older the key has
    /// no effect, and the setting is what the sources after it or the default give
    /// (src/dialect/version.rs); a file that pins nothing gets the key read.
    pub since: Option<String>,
}

/// One boolean key of a [`Source::gather`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gathered {
    pub key: String,
    /// What the key adds when true (`q_proj`, or several: `gate_proj,up_proj,down_proj`);
    /// empty for a key whose value is a list of names, added as they are.
    #[serde(default)]
    pub names: String,
    /// The framework's value when the key is absent.
    #[serde(default)]
    pub default: bool,
}

impl Source {
    /// Whether this key's `map` writes the canonical value `canonical` (a fix can say it here).
    pub fn maps_to(&self, canonical: &str) -> bool {
        self.map
            .as_ref()
            .is_some_and(|m| m.values().any(|v| v.as_str() == Some(canonical)))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub key: String,
    /// Accepted values, as text; `"*"` accepts any value that is present and not null.
    #[serde(default)]
    pub is: Vec<String>,
    /// Holds when `key` and this other key are both set to the same value (openpi's
    /// `decay_lr` equal to `peak_lr`: a constant LR).
    pub equals: Option<String>,
    /// The other key's framework default, as text, when it is absent.
    pub default: Option<String>,
}

/// Framework behaviour, each a named switch documented where a rule reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Semantics {
    /// LeRobot's cosine-with-warmup rescales warmup and decay to `steps` when the run is
    /// shorter than `decay_steps`.
    #[serde(default)]
    pub decay_rescales_to_shorter_runs: bool,
    /// The framework puts a process on every GPU of the machine when the file names none
    /// (used by HW201 to count processes per node; false = one process unless stated).
    #[serde(default)]
    pub one_process_per_gpu: bool,
    /// `global_batch = -1` (or absent) means "micro-batch x data-parallel degree" (torchtitan).
    #[serde(default)]
    pub global_batch_minus_one_is_derived: bool,
    /// The batch is global and each GPU takes its share (openpi `batch_size`): the micro-batch
    /// is the global batch over the GPUs.
    #[serde(default)]
    pub global_batch_splits_over_devices: bool,
    /// The framework derives gradient accumulation from a global batch every config states
    /// (llm-foundry's required `global_train_batch_size`, rounding up): a smaller micro-batch
    /// keeps the effective batch, so HW101's micro-batch fix is safe.
    #[serde(default)]
    pub accumulation_derived: bool,
    /// The Hugging Face Trainer fills the `"auto"` values of the DeepSpeed JSON it is given from
    /// its own arguments (`HfTrainerDeepSpeedConfig`): the linked JSON is read with them.
    #[serde(default)]
    pub fills_deepspeed_auto: bool,
    /// Only the file shards the model states (openpi's `fsdp_devices`): no launcher adds ZeRO
    /// or FSDP, so a file without sharding runs unsharded on any number of GPUs.
    #[serde(default)]
    pub sharding_in_file_only: bool,
    /// The framework's documented rule for the learning rate when the batch changes (the
    /// linear scaling rule): a fix that lowers a global batch scales `learning_rate` by the
    /// same ratio, and its message cites this.
    pub lr_scales_with_batch: Option<String>,
    /// The trainer wraps the model in plain `DistributedDataParallel` with its default
    /// `gradient_as_bucket_view=False` on more than one GPU: its gradient buckets, the size
    /// of the gradients, are kept beside them.
    #[serde(default)]
    pub ddp_gradient_buckets: bool,
    /// The preference, KTO and GRPO losses take a row-wise log-softmax of the logits in their
    /// own dtype and keep it for backward (TRL's `selective_log_softmax`).
    #[serde(default)]
    pub row_log_softmax_loss: bool,
    /// A reference or reward model of its own is loaded frozen in the compute dtype, whatever
    /// the trained model's weights are kept in (LLaMA-Factory's `load_model(is_trainable=False)`).
    #[serde(default)]
    pub frozen_models_in_compute_dtype: bool,
}

/// What the framework's loader does with one format's files.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// The call that reads the file, as a message names it (`PyYAML \`yaml.safe_load\``).
    pub call: String,
    /// Whether a YAML stream of several documents is accepted; absent: not known.
    pub documents: Option<Documents>,
    /// What a key set twice in one mapping does; absent: not known (HW602 says "most loaders").
    pub duplicate_keys: Option<DuplicateKeys>,
    /// Whether the framework converts a loaded string to the number a field is typed as
    /// (argparse `type=float` on config defaults, pydantic, yacs): `false` means the string
    /// reaches the code, so a number the loader reads as text is HW601 on every numeric
    /// setting's key. Absent: not known (only `numbers` are checked).
    pub converts: Option<bool>,
    /// Further dotted keys (`*` matches any one key) whose values reach the code as loaded and
    /// must be numbers: free-form dicts no converter sees (`lr_scheduler_kwargs.*`).
    #[serde(default)]
    pub numbers: Vec<String>,
    /// Dotted keys whose values must be strings: a YAML 1.1 boolean word there (`no`) loads as
    /// a boolean the field refuses (HW601).
    #[serde(default)]
    pub strings: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Documents {
    /// One document only (PyYAML `load`/`safe_load`: `expected a single document in the
    /// stream`): a file with more is refused, and HW902 says so.
    Single,
    /// Every document is read (`load_all`): each is linted on its own.
    Stream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DuplicateKeys {
    /// The last value wins silently (PyYAML, `json.load`): HW602, a warning.
    KeepLast,
    /// The file is refused (OmegaConf, DeepSpeed's `dict_raise_error_on_duplicate_keys`):
    /// HW902, an error.
    Refuse,
}
