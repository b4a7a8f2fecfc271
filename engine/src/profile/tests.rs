//! Profile validation: each field, each rule, the exact error.

use super::*;

const BASE: &str = r#"name = "demo"
binary = "demo-cli"
[hooks]
dialect = "claude-settings-json"
config_path = ".demo/settings.json"
[hooks.events]
Stop = "Stop"
"#;

fn source() -> ProfileSource {
    ProfileSource::Project(PathBuf::from("/p/.drover/profiles/demo.toml"))
}

fn parse(text: &str) -> Result<Profile, ProfileError> {
    Profile::parse(text, &source())
}

/// `BASE` with `line` inserted before `[hooks]`.
fn with_top(line: &str) -> String {
    BASE.replacen("[hooks]", &format!("{line}\n[hooks]"), 1)
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Err(e) => e.to_string(),
        Ok(p) => panic!("accepted: {p:?}\n---\n{text}"),
    }
}

#[test]
fn defaults_match_bmad_loop() {
    let p = parse(BASE).expect("valid");
    assert_eq!(p.skill_tree, ".claude/skills");
    assert_eq!(p.prompt_template, "{prompt}");
    assert_eq!(p.model_flag, "--model");
    assert_eq!(p.usage_parser, "none");
    assert_eq!(p.usage_grace, Duration::ZERO);
    assert_eq!(p.stop_without_result_nudges, None);
    assert!(!p.subagent_stop_without_transcript);
    assert!(p.launch_args.is_empty() && p.bypass_args.is_empty() && p.seed_files.is_empty());
    assert_eq!(p.component, ComponentRef::Builtin("demo".to_string()));
    assert_eq!(
        p.hooks.events,
        vec![("Stop".to_string(), "Stop".to_string())]
    );
}

#[test]
fn each_bad_field_gets_its_own_error() {
    let file = "profile /p/.drover/profiles/demo.toml";
    let cases: Vec<(String, String)> = vec![
        ("name = [".to_string(), format!("{file}:1: invalid TOML: ")),
        (BASE.replace("name = \"demo\"\n", ""), format!("{file}:1: name: is required")),
        (BASE.replace("\"demo\"", "\"  \""), format!("{file}:1: name: must not be empty")),
        (BASE.replace("name = \"demo\"", "name = \"a b\""), format!("{file}:1: name: 'a b' must be letters, digits, '.', '_' or '-'")),
        (BASE.replace("binary = \"demo-cli\"", "binary = 3"), format!("{file}:2: binary: expected a string, found an integer")),
        (BASE.split("[hooks]").next().unwrap_or_default().to_string(), format!("{file}:1: hooks: missing [hooks] table")),
        (BASE.replace("claude-settings-json", "vim-json"), format!("{file}:4: hooks.dialect: unknown dialect 'vim-json' (built-in: none, ")),
        (BASE.replace(".demo/settings.json", "/etc/passwd"), format!("{file}:5: hooks.config_path: '/etc/passwd' is absolute; give a path relative to the project")),
        (BASE.replace(".demo/settings.json", "../x.json"), format!("{file}:5: hooks.config_path: '../x.json' climbs out of the project with '..'")),
        (BASE.replace(".demo/settings.json", "."), format!("{file}:5: hooks.config_path: '.' names the project root itself")),
        (BASE.replace("config_path = \".demo/settings.json\"\n", ""), format!("{file}:3: hooks.config_path: is required for a hook dialect")),
        (BASE.replace("Stop = \"Stop\"", "Stop = \"Done\""), format!("{file}:7: hooks.events.Stop: 'Done' is not a canonical event (one of: SessionStart, ")),
        (BASE.replace("Stop = \"Stop\"", "Stop = 1"), format!("{file}:7: hooks.events.Stop: expected a canonical event name, found an integer")),
        (BASE.replace("[hooks.events]\nStop = \"Stop\"\n", ""), format!("{file}:3: hooks.events: must map at least one native event")),
        (BASE.replace("dialect = \"claude-settings-json\"", "dialect = \"claude-settings-json\"\nmatcher = \"*\""), format!("{file}:5: hooks.matcher: unknown field (known: dialect, config_path, events)")),
        ("name = \"d\"\nbinary = \"b\"\n[hooks]\ndialect = \"none\"\nconfig_path = \"x.json\"\n".to_string(), format!("{file}:3: hooks.config_path: must be empty when the dialect is none")),
        ("name = \"d\"\nbinary = \"b\"\n[hooks]\ndialect = \"none\"\n[hooks.events]\nStop = \"Stop\"\n".to_string(), format!("{file}:3: hooks.events: must be empty when the dialect is none")),
        (with_top("skill_tree = \"C:skills\""), format!("{file}:3: skill_tree: 'C:skills' is a Windows drive path; give a path relative to the project")),
        (with_top("prompt_template = \"{promt}\""), format!("{file}:3: prompt_template: unknown placeholder {{promt}} (known: {{prompt}}, {{skill}}, {{args}})")),
        (with_top("prompt_template = \"x }\""), format!("{file}:3: prompt_template: single '}}' at byte 2 (write '}}}}' for a literal brace)")),
        (with_top("launch_args = \"-i\""), format!("{file}:3: launch_args: expected an array of strings, found a string")),
        (with_top("bypass_args = [\"--yolo\", 1]"), format!("{file}:3: bypass_args[1]: expected a string, found an integer")),
        (with_top("model_flag = true"), format!("{file}:3: model_flag: expected a string, found a boolean")),
        (with_top("env = { X = 1 }"), format!("{file}:3: env.X: expected a string, found an integer (write it in quotes)")),
        (with_top("env = { X = true }"), format!("{file}:3: env.X: expected a string, found a boolean (write it in quotes)")),
        (with_top("usage_parser = \"tokens\""), format!("{file}:3: usage_parser: unknown usage parser 'tokens' (built-in: none, ")),
        (with_top("usage_grace_s = -1.0"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = inf"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = nan"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = \"8\""), format!("{file}:3: usage_grace_s: expected a number of seconds, found a string")),
        (with_top("usage_grace_s = 1979-05-27"), format!("{file}:3: usage_grace_s: expected a number of seconds, found a datetime")),
        (with_top("stop_without_result_nudges = -2"), format!("{file}:3: stop_without_result_nudges: must not be negative, found -2")),
        (with_top("stop_without_result_nudges = 2.7"), format!("{file}:3: stop_without_result_nudges: expected a non-negative integer, found a float")),
        (with_top("stop_without_result_nudges = true"), format!("{file}:3: stop_without_result_nudges: expected a non-negative integer, found a boolean")),
        (with_top(&format!("stop_without_result_nudges = {}", "9".repeat(400))), format!("{file}:3: stop_without_result_nudges: integer out of range")),
        (with_top("subagent_stop_without_transcript = \"yes\""), format!("{file}:3: subagent_stop_without_transcript: expected true or false, found a string")),
        (with_top("first_run_note = []"), format!("{file}:3: first_run_note: expected a string, found an array")),
        (with_top("seed_files = [\"ok.json\", \"../escape\"]"), format!("{file}:3: seed_files[1]: '../escape' climbs out of the project with '..'")),
        (with_top("env_fault_patterns = [\"(unclosed\"]"), format!("{file}:3: env_fault_patterns[0]: not a valid regex: ")),
        (with_top("component = \"not a name\""), format!("{file}:3: component: 'not a name' is neither a component name nor a path ending in .wasm")),
        (with_top("aliases = [\"ok\", \"bad name\"]"), format!("{file}: aliases: 'bad name' must be letters, digits, '.', '_' or '-'")),
        (with_top("sandbox = { call_timeout_ms = 0 }"), format!("{file}: sandbox.call_timeout_ms: must be greater than 0")),
        (with_top("sandbox = { memory = 1 }"), format!("{file}:3: sandbox.memory: unknown field (known: call_timeout_ms, memory_mib)")),
        (with_top("turn = { args = [1] }"), format!("{file}:3: turn.args[0]: expected a string, found an integer")),
        (with_top("adapter = { mode = 2 }"), format!("{file}:3: adapter.mode: expected a string, found an integer (write it in quotes)")),
        (with_top("bypas_args = []"), format!("{file}:3: bypas_args: unknown field (known: name, binary, hooks, ")),
    ];
    for (text, expected) in cases {
        let got = error_of(&text);
        if std::env::var_os("SHOW_ERRORS").is_some() {
            eprintln!("{got}");
        }
        assert!(
            got.starts_with(&expected),
            "\nexpected: {expected}\n     got: {got}\n---\n{text}"
        );
    }
}

#[test]
fn a_file_component_resolves_next_to_the_profile_and_opens_dialects() {
    let text = BASE.replace("claude-settings-json", "my-dialect").replacen(
        "[hooks]",
        "component = \"adapters/mine.wasm\"\nusage_parser = \"mine-jsonl\"\n[hooks]",
        1,
    );
    let p = parse(&text).expect("third-party names allowed with a file component");
    assert_eq!(
        p.component,
        ComponentRef::File(PathBuf::from("/p/.drover/profiles/adapters/mine.wasm"))
    );
    assert_eq!(p.hooks.dialect, "my-dialect");
    assert_eq!(p.usage_parser, "mine-jsonl");
}

#[test]
fn bmad_loops_claude_profile_loads_unchanged() {
    // bmad-loop's shipped claude.toml, field for field (bmad-loop.md §1.2).
    let text = r#"name = "claude"
binary = "claude"
prompt_template = "{prompt}"
launch_args = []
bypass_args = ["--permission-mode", "bypassPermissions"]
model_flag = "--model"
usage_parser = "claude-jsonl"
skill_tree = ".claude/skills"
seed_files = [".mcp.json", ".claude/settings.json", ".claude/settings.local.json"]
env_fault_patterns = ['API Error.*(Unable to connect|Connection ?(error|refused|reset|timed ?out)|ConnectionRefused|ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN)']
first_run_note = "run `claude` once in the project to accept workspace trust and hooks approval"

[env]
CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN = "1"
CLAUDE_CODE_DISABLE_BACKGROUND_TASKS = "1"

[hooks]
dialect = "claude-settings-json"
config_path = ".claude/settings.json"

[hooks.events]
SessionStart = "SessionStart"
Stop = "Stop"
SessionEnd = "SessionEnd"
PreCompact = "PreCompact"
"#;
    let p = parse(text).expect("bmad-loop profile loads");
    assert_eq!(p.env_fault_patterns.len(), 1);
    // Its pattern matches its own definition line; `validate` warns about it.
    assert_eq!(p.self_matching_patterns, vec![0]);
    assert_eq!(p.hooks.events.len(), 4);
}

#[test]
fn every_builtin_profile_parses() {
    for (file, text) in crate::builtin::PROFILES {
        let p =
            Profile::parse(text, &ProfileSource::Builtin(file)).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.self_matching_patterns.is_empty(),
            "{file}: a built-in fault pattern matches its own line"
        );
        match &p.component {
            ComponentRef::Builtin(name) => assert!(
                crate::builtin::find(name).is_some(),
                "{file}: no built-in component '{name}'"
            ),
            ComponentRef::File(path) => {
                panic!("{file}: built-in profile names a file {}", path.display())
            }
        }
    }
}

#[test]
fn overrides_replace_by_name_and_aliases_resolve() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profiles = project_dir(dir.path());
    std::fs::create_dir_all(&profiles).expect("mkdir");
    std::fs::write(
        profiles.join("claude.toml"),
        include_str!("../../../profiles/claude.toml")
            .replace("binary = \"claude\"", "binary = \"claude-beta\""),
    )
    .expect("write");
    std::fs::write(
        profiles.join("extra.toml"),
        BASE.replace("\"demo\"", "\"extra\""),
    )
    .expect("write");
    let catalog = Catalog::load(dir.path());
    assert!(catalog.errors().is_empty(), "{:?}", catalog.errors());
    let claude = catalog.get("claude-code").expect("alias resolves");
    assert_eq!(claude.binary, "claude-beta");
    assert_eq!(claude.source.kind(), "project");
    assert!(catalog.get("extra").is_ok());
    let unknown = catalog.get("nope").expect_err("unknown");
    assert!(
        unknown
            .to_string()
            .starts_with("unknown CLI profile 'nope' (available: "),
        "{unknown}"
    );
}

#[test]
fn a_broken_override_blocks_lookups() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profiles = project_dir(dir.path());
    std::fs::create_dir_all(&profiles).expect("mkdir");
    std::fs::write(
        profiles.join("claude.toml"),
        "name = \"claude\"\nbinary = 1\n",
    )
    .expect("write");
    let catalog = Catalog::load(dir.path());
    assert_eq!(catalog.errors().len(), 1);
    let err = catalog.get("claude").expect_err("refused");
    assert!(
        err.to_string()
            .contains("claude.toml:2: binary: expected a string"),
        "{err}"
    );
}
