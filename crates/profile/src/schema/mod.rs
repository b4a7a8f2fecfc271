//! Reading one profile file into a [`Profile`], field by field, so every
//! error can name its line. Field names, defaults and meanings are
//! bmad-loop's `CLIProfile` (its string `adapter` kind included); drover adds
//! `component`, `aliases`, `[turn]`, `[sandbox]` and `[component_settings]`.
//! Where bmad-loop coerces a value (`str()`, `int()`, `bool()`), drover reads
//! it the same way and records a warning that says what it was read as.

use std::cell::RefCell;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

mod logged;
mod sections;
mod tables;

use sections::{adapter_field, component_ref, parse_hooks, parse_turn, values};

use super::error::ProfileError;
use super::{
    AdapterKind, AgentProtocol, ComponentRef, Profile, ProfileSource, SandboxOverrides, known,
    paths, template,
};

/// Reads a spanned TOML tree with line-aware errors (and warnings).
struct Reader<'a> {
    text: &'a str,
    source: String,
    warnings: RefCell<Vec<ProfileError>>,
}

pub(super) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// One table's fields, consumed by name; leftovers are unknown fields.
struct Table<'r, 'a, 'i> {
    reader: &'r Reader<'a>,
    prefix: String,
    entries: Vec<(Spanned<std::borrow::Cow<'i, str>>, Spanned<DeValue<'i>>)>,
}

const TOP_FIELDS: &[&str] = &[
    "name",
    "binary",
    "adapter",
    "hooks",
    "skill_tree",
    "prompt_template",
    "launch_args",
    "bypass_args",
    "model_flag",
    "env",
    "usage_parser",
    "usage_grace_s",
    "ready_timeout_s",
    "screen_settle_s",
    "stop_without_result_nudges",
    "subagent_stop_without_transcript",
    "first_run_note",
    "seed_files",
    "env_fault_patterns",
    "component",
    "aliases",
    "turn",
    "usage",
    "sandbox",
    "resume",
    "component_settings",
    "component_env",
    "agent_protocol",
];

const TURN_FIELDS: &[&str] = &[
    "args",
    "env",
    "argv",
    "resume",
    "session_id",
    "output",
    "drop",
    "reply",
    "usage",
];

/// Parses and validates one profile file.
pub fn parse(text: &str, source: &ProfileSource) -> Result<Profile, ProfileError> {
    let reader = Reader {
        text,
        source: source.to_string(),
        warnings: RefCell::new(Vec::new()),
    };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span();
        reader.error(span, "", format!("invalid TOML: {}", e.message()))
    })?;
    let root_span = root.span();
    let mut top = Table::new(&reader, "", root.into_inner());

    let (name, name_at) = top.required_text("name", Some(root_span.start..root_span.start))?;
    if !known::is_identifier(&name) {
        return Err(reader.error(
            Some(name_at..name_at),
            "name",
            format!("'{name}' must be letters, digits, '.', '_' or '-'"),
        ));
    }
    let (binary, _) = top.required_text("binary", Some(root_span.start..root_span.start))?;
    let (adapter_kind, mut component_settings) = adapter_field(&mut top)?;

    let explicit_component = match top.string("component")? {
        Some((value, at)) => Some(component_ref(&reader, &value, at, source)?),
        None => None,
    };
    let file_component = matches!(explicit_component, Some(ComponentRef::File(_)));

    let hooks = match top.table("hooks")? {
        Some((table, span)) => parse_hooks(&reader, table, span, !file_component)?,
        None => {
            return Err(reader.error(
                Some(root_span.start..root_span.start),
                "hooks",
                "missing [hooks] table",
            ));
        }
    };
    let turn = match top.table("turn")? {
        Some((table, _)) => Some(parse_turn(&reader, table, file_component)?),
        None => None,
    };
    // bmad-loop's rule (hookless means opencode-http) holds for its
    // profiles, which have no `[turn]`; a hookless profile with a `[turn]`
    // table says how to run the CLI itself, which is the generic adapter's
    // job: its headless turns need no hooks.
    let adapter = match adapter_kind {
        None if hooks.dialect == "none" && turn.is_none() => AdapterKind::OpencodeHttp,
        None => AdapterKind::Generic,
        Some((kind, span)) => match kind.as_str() {
            "generic" if hooks.dialect == "none" && turn.is_none() => {
                return Err(reader.error(
                    Some(span),
                    "adapter",
                    "'generic' runs a hookless CLI from its [turn] table (how to run one headless turn), and this profile has none; add [turn] with argv, or give it a hook dialect",
                ));
            }
            "generic" => AdapterKind::Generic,
            "opencode-http" => AdapterKind::OpencodeHttp,
            other => {
                return Err(reader.error(
                    Some(span),
                    "adapter",
                    format!(
                        "unknown adapter kind '{other}' (drover has: {})",
                        AdapterKind::NAMES.join(", ")
                    ),
                ));
            }
        },
    };
    // bmad-loop's opencode-http driver is drover's opencode component.
    let component = explicit_component.unwrap_or_else(|| match adapter {
        AdapterKind::OpencodeHttp => ComponentRef::Builtin("opencode".to_string()),
        AdapterKind::Generic => ComponentRef::Implicit(name.clone()),
    });

    let skill_tree = match top.string("skill_tree")? {
        Some((path, at)) => {
            paths::check_relative(&path)
                .map_err(|m| reader.error(Some(at..at), "skill_tree", m))?;
            path
        }
        None => ".claude/skills".to_string(),
    };
    let prompt_template = match top.text("prompt_template") {
        Some((t, at)) => {
            template::validate(&t).map_err(|m| reader.error(Some(at..at), "prompt_template", m))?;
            t
        }
        None => "{prompt}".to_string(),
    };
    let launch_args = values(top.strings("launch_args")?);
    let bypass_args = values(top.strings("bypass_args")?);
    let model_flag = top
        .text("model_flag")
        .map_or_else(|| "--model".to_string(), |(v, _)| v);
    let env = top.text_map("env")?;
    let usage_parser = match top.string("usage_parser")? {
        Some((p, at)) => {
            let p = p.trim().to_string();
            let known = if file_component {
                known::is_identifier(&p)
            } else {
                known::PARSERS.contains(&p.as_str())
            };
            if !known {
                return Err(reader.error(
                    Some(at..at),
                    "usage_parser",
                    format!(
                        "unknown usage parser '{p}' (built-in: {})",
                        known::PARSERS.join(", ")
                    ),
                ));
            }
            p
        }
        None => "none".to_string(),
    };
    let usage_parser = match top.table("usage")? {
        Some((table, span)) => {
            if usage_parser != "none" {
                return Err(reader.error(
                    Some(span),
                    "usage",
                    format!("given with usage_parser = \"{usage_parser}\": a profile reads its usage one way; keep the parser or the [usage] table"),
                ));
            }
            let generic = match &component {
                ComponentRef::Builtin(name) => name == crate::registry::GENERIC,
                ComponentRef::Implicit(name) => {
                    name == crate::registry::GENERIC || crate::builtin::find(name).is_none()
                }
                ComponentRef::File(_) => false,
            };
            if !generic {
                return Err(reader.error(
                    Some(span),
                    "usage",
                    format!("the [usage] table is read by the generic adapter, and this profile runs component {component}, which reads usage with its own parsers"),
                ));
            }
            logged::parse_logged(&reader, table, span)?
        }
        None => usage_parser,
    };
    let usage_grace = top.seconds("usage_grace_s")?.unwrap_or(0.0);
    let screen_settle = top
        .seconds("screen_settle_s")?
        .unwrap_or(crate::SCREEN_SETTLE_S);
    let ready_timeout = top
        .seconds("ready_timeout_s")?
        .unwrap_or(crate::READY_TIMEOUT_S);
    let stop_without_result_nudges = top.count("stop_without_result_nudges", true)?;
    let subagent_stop_without_transcript = top
        .truthy("subagent_stop_without_transcript")
        .unwrap_or(false);
    let first_run_note = top
        .text("first_run_note")
        .map(|(v, _)| v)
        .unwrap_or_default();
    let mut seed_files = Vec::new();
    for (n, (path, at)) in top.strings("seed_files")?.into_iter().enumerate() {
        paths::check_relative(&path)
            .map_err(|m| reader.error(Some(at..at), &format!("seed_files[{n}]"), m))?;
        seed_files.push(path);
    }
    let mut env_fault_patterns = Vec::new();
    let mut self_matching_patterns = Vec::new();
    for (n, (pattern, at)) in top.strings("env_fault_patterns")?.into_iter().enumerate() {
        let field = format!("env_fault_patterns[{n}]");
        let regex = regex::Regex::new(&pattern)
            .map_err(|e| reader.error(Some(at..at), &field, format!("not a valid regex: {e}")))?;
        if regex.is_match(reader.line_text(at)) {
            self_matching_patterns.push(n);
        }
        env_fault_patterns.push(pattern);
    }
    let mut component_env = Vec::new();
    for (n, (name, at)) in top.strings("component_env")?.into_iter().enumerate() {
        if !known::is_env_name(&name) {
            return Err(reader.error(
                Some(at..at),
                &format!("component_env[{n}]"),
                format!("'{name}' is not an environment variable name (letters, digits and '_', not starting with a digit)"),
            ));
        }
        component_env.push(name);
    }
    let aliases = values(top.strings("aliases")?);
    for alias in &aliases {
        if !known::is_identifier(alias) {
            return Err(reader.error(
                None,
                "aliases",
                format!("'{alias}' must be letters, digits, '.', '_' or '-'"),
            ));
        }
    }
    let turn = turn.unwrap_or_default();
    let sandbox = match top.table("sandbox")? {
        Some((table, _)) => {
            let mut t = Table::new(&reader, "sandbox", table);
            let timeout = t.count("call_timeout_ms", false)?;
            let memory = t.count("memory_mib", false)?;
            t.finish(&["call_timeout_ms", "memory_mib"])?;
            for (field, value) in [
                ("sandbox.call_timeout_ms", timeout),
                ("sandbox.memory_mib", memory),
            ] {
                if value == Some(0) {
                    return Err(reader.error(None, field, "must be greater than 0"));
                }
            }
            SandboxOverrides {
                call_timeout: timeout.map(|ms| Duration::from_millis(u64::from(ms))),
                memory_bytes: memory.map(|mib| (mib as usize) << 20),
            }
        }
        None => SandboxOverrides::default(),
    };
    let resume = match top.table("resume")? {
        Some((table, _)) => {
            let mut t = Table::new(&reader, "resume", table);
            let on_limit = t.truthy("on_limit");
            let attempts = t.count("attempts", false)?;
            let message = t.text("message");
            t.finish(&["on_limit", "attempts", "message"])?;
            if let Some((_, at)) = message.as_ref().filter(|(m, _)| m.trim().is_empty()) {
                return Err(reader.error(
                    Some(*at..*at),
                    "resume.message",
                    "is empty; leave it out to re-send the interrupted prompt",
                ));
            }
            crate::Resume {
                on_limit: on_limit.unwrap_or(true),
                attempts: attempts.unwrap_or(crate::RESUME_ATTEMPTS),
                message: message.map(|(m, _)| m),
            }
        }
        None => crate::Resume::default(),
    };
    if let Some((table, span)) = top.table("component_settings")? {
        if !component_settings.is_empty() {
            return Err(reader.error(
                Some(span),
                "component_settings",
                "given twice: here and as the old [adapter] table; keep this one",
            ));
        }
        component_settings = top.strings_of("component_settings", table)?;
        if let Some(key) = component_settings.keys().find(|k| k.starts_with("turn.")) {
            return Err(reader.error(
                Some(span),
                &format!("component_settings.{key}"),
                "names under turn. are [turn]'s own (drover passes [turn] drop, reply and usage to the component as turn.*); write them in [turn]",
            ));
        }
    }
    let agent_protocol = match top.string("agent_protocol")? {
        None => AgentProtocol::Acp,
        Some((p, _)) if p == "acp" => AgentProtocol::Acp,
        Some((p, _)) if p == "msp" => AgentProtocol::Msp,
        Some((p, at)) => {
            return Err(reader.error(
                Some(at..at),
                "agent_protocol",
                format!(
                    "unknown protocol '{p}' (one of: {})",
                    AgentProtocol::NAMES.join(", ")
                ),
            ));
        }
    };
    top.finish(TOP_FIELDS)?;

    Ok(Profile {
        name,
        binary,
        hooks,
        skill_tree,
        prompt_template,
        launch_args,
        bypass_args,
        model_flag,
        env,
        usage_parser,
        usage_grace: Duration::from_secs_f64(usage_grace),
        ready_timeout: Duration::from_secs_f64(ready_timeout),
        screen_settle: Duration::from_secs_f64(screen_settle),
        stop_without_result_nudges,
        subagent_stop_without_transcript,
        first_run_note,
        seed_files,
        env_fault_patterns,
        self_matching_patterns,
        adapter,
        component,
        aliases,
        turn,
        agent_protocol,
        sandbox,
        resume,
        component_settings,
        component_env,
        warnings: {
            let mut warnings = reader.warnings.into_inner();
            warnings.sort_by_key(|w| w.line);
            warnings
        },
        source: source.clone(),
        sha256: source
            .path()
            .map(|_| crate::registry::digest(text.as_bytes())),
    })
}
