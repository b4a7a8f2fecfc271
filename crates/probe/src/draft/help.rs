//! Reading a `--help` text: its options (commander, clap and yargs
//! layouts), its subcommands, and its prose.

use std::sync::LazyLock;

use regex::Regex;

/// Whether an option takes a value, as its help line shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Takes {
    Nothing,
    /// `<v>`, or yargs' `[string]`/`[number]`/`[array]`.
    Value,
    /// `[v]`: the value may be left out.
    OptionalValue,
}

#[derive(Debug, Clone)]
pub struct Opt {
    pub short: Option<String>,
    pub longs: Vec<String>,
    pub takes: Takes,
    /// The description, lines joined with single spaces.
    pub desc: String,
    /// The option's first line, trimmed: what a comment quotes.
    pub line: String,
}

impl Opt {
    pub fn has_long(&self, long: &str) -> bool {
        self.longs.iter().any(|l| l == long)
    }

    /// The values a `choices:` / `possible values:` list offers.
    pub fn choices(&self) -> Vec<String> {
        static CHOICES: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?i)(?:choices|possible values):\s*([^\]\)]+)").expect("valid regex")
        });
        CHOICES
            .captures(&self.desc)
            .map(|c| {
                c[1].split(',')
                    .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
                    .filter(|v| !v.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn takes_value(&self) -> bool {
        self.takes != Takes::Nothing
    }

    /// The first long name, the spelling a draft writes.
    pub fn long(&self) -> Option<&str> {
        self.longs.first().map(String::as_str)
    }
}

/// One help text, parsed.
#[derive(Debug, Clone)]
pub struct Help {
    /// The command that printed it, e.g. `codex exec --help`.
    pub command: String,
    pub options: Vec<Opt>,
    /// (name, description) from a `Commands:` section.
    pub subcommands: Vec<(String, String)>,
    /// The whole text with runs of whitespace made one space.
    pub prose: String,
}

/// `  -p, --print <x>  desc`: flags, an optional value, and a description
/// after two spaces (or none, when the description starts on the next line).
static OPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\s{1,16})((?:--?[A-Za-z0-9][A-Za-z0-9_-]*)(?:,\s*--?[A-Za-z0-9][A-Za-z0-9_-]*)*)(?:[ =]((?:<[^>]*>|\[[^\]]*\])(?:\.\.\.)?))?(?:\s{2,}(\S.*))?\s*$",
    )
    .expect("valid regex")
});

static YARGS_TYPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[(string|number|array|boolean)\]").expect("valid regex"));

static COMMANDS_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^commands:\s*$").expect("valid regex"));

static SUBCOMMAND_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s{2,}([A-Za-z][\w-]*)(?:\s+([A-Za-z][\w-]*))?(.*)$").expect("valid regex")
});

impl Help {
    pub fn parse(command: &str, text: &str) -> Help {
        let program = command.split_whitespace().next().unwrap_or("");
        let program = std::path::Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut options: Vec<Opt> = Vec::new();
        let mut subcommands = Vec::new();
        // Inside an option's description, or a Commands: section.
        let mut in_option = false;
        let mut in_commands = false;
        for line in text.lines() {
            let indented = line.starts_with(' ') || line.starts_with('\t');
            if COMMANDS_HEADER.is_match(line) {
                in_commands = true;
                in_option = false;
                continue;
            }
            if !indented && !line.trim().is_empty() {
                in_commands = false;
                in_option = false;
                continue;
            }
            if let Some(c) = OPTION_LINE.captures(line) {
                let mut opt = Opt {
                    short: None,
                    longs: Vec::new(),
                    takes: match c.get(3).map(|m| m.as_str()) {
                        Some(v) if v.starts_with('<') => Takes::Value,
                        Some(_) => Takes::OptionalValue,
                        None => Takes::Nothing,
                    },
                    desc: c
                        .get(4)
                        .map(|m| m.as_str().trim().to_string())
                        .unwrap_or_default(),
                    line: line.trim().to_string(),
                };
                for flag in c[2].split(',').map(str::trim) {
                    match flag.strip_prefix("--") {
                        Some(long) => opt.longs.push(long.to_string()),
                        None => opt.short = Some(flag.to_string()),
                    }
                }
                options.push(opt);
                in_option = true;
                in_commands = false;
                continue;
            }
            if line.trim().is_empty() {
                // Yargs and commander end a section with a blank line; clap
                // separates options (and paragraphs) with them.
                in_commands = false;
                continue;
            }
            if in_commands {
                if let Some(c) = SUBCOMMAND_LINE.captures(line) {
                    // Yargs prefixes each line with the program's name.
                    let (name, rest) = match c.get(2) {
                        Some(second) if c[1] == *program => (second.as_str(), &c[3]),
                        _ => (&c[1], line.trim_start()[c[1].len()..].trim_end()),
                    };
                    subcommands.push((name.to_string(), rest.trim().to_string()));
                }
            } else if in_option && let Some(opt) = options.last_mut() {
                if !opt.desc.is_empty() {
                    opt.desc.push(' ');
                }
                opt.desc.push_str(line.trim());
            }
        }
        for opt in &mut options {
            if opt.takes == Takes::Nothing
                && let Some(kind) = YARGS_TYPE.captures(&opt.desc)
                && &kind[1] != "boolean"
            {
                opt.takes = Takes::Value;
            }
        }
        Help {
            command: command.to_string(),
            options,
            subcommands,
            prose: text.split_whitespace().collect::<Vec<_>>().join(" "),
        }
    }

    /// The option with this long name.
    pub fn long(&self, long: &str) -> Option<&Opt> {
        self.options.iter().find(|o| o.has_long(long))
    }

    pub fn subcommand(&self, name: &str) -> Option<&(String, String)> {
        self.subcommands.iter().find(|(n, _)| n == name)
    }
}
