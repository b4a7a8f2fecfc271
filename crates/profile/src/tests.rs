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
    assert_eq!(p.adapter, AdapterKind::Generic);
    assert_eq!(p.component, ComponentRef::Implicit("demo".to_string()));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        p.hooks.events,
        vec![("Stop".to_string(), "Stop".to_string())]
    );
}

#[test]
#[allow(
    clippy::disallowed_macros,
    reason = "SHOW_ERRORS prints every message for a person reviewing them"
)]
fn each_bad_field_gets_its_own_error() {
    let file = "profile /p/.drover/profiles/demo.toml";
    let cases: Vec<(String, String)> = vec![
        ("name = [".to_string(), format!("{file}:1: invalid TOML: ")),
        (BASE.replace("name = \"demo\"\n", ""), format!("{file}:1: name: is required")),
        (BASE.replace("\"demo\"", "\"  \""), format!("{file}:1: name: must not be empty")),
        (BASE.replace("name = \"demo\"", "name = \"a b\""), format!("{file}:1: name: 'a b' must be letters, digits, '.', '_' or '-'")),
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
        (with_top("usage_parser = \"tokens\""), format!("{file}:3: usage_parser: unknown usage parser 'tokens' (built-in: none, ")),
        (with_top("usage_grace_s = -1.0"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = inf"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = nan"), format!("{file}:3: usage_grace_s: must be a finite number of seconds >= 0")),
        (with_top("usage_grace_s = 1979-05-27"), format!("{file}:3: usage_grace_s: expected a number of seconds, found a datetime")),
        (with_top("stop_without_result_nudges = -2"), format!("{file}:3: stop_without_result_nudges: must not be negative, found -2")),
        (with_top(&format!("stop_without_result_nudges = {}", "9".repeat(400))), format!("{file}:3: stop_without_result_nudges: integer out of range")),
        (with_top("seed_files = [\"ok.json\", \"../escape\"]"), format!("{file}:3: seed_files[1]: '../escape' climbs out of the project with '..'")),
        (with_top("env_fault_patterns = [\"(unclosed\"]"), format!("{file}:3: env_fault_patterns[0]: not a valid regex: ")),
        (with_top("component = \"not a name\""), format!("{file}:3: component: 'not a name' is neither a component name nor a path ending in .wasm")),
        (with_top("aliases = [\"ok\", \"bad name\"]"), format!("{file}: aliases: 'bad name' must be letters, digits, '.', '_' or '-'")),
        (with_top("sandbox = { call_timeout_ms = 0 }"), format!("{file}: sandbox.call_timeout_ms: must be greater than 0")),
        (with_top("sandbox = { memory = 1 }"), format!("{file}:3: sandbox.memory: unknown field (known: call_timeout_ms, memory_mib)")),
        (with_top("turn = { args = [1] }"), format!("{file}:3: turn.args[0]: expected a string, found an integer")),
        (with_top("adapter = { mode = 2 }"), format!("{file}:3: adapter.mode: expected a string, found an integer (write it in quotes)")),
        (with_top("usage_grace_s = \"eight\""), format!("{file}:3: usage_grace_s: expected a number of seconds, found a string: could not convert string to float: \"eight\"")),
        (with_top("stop_without_result_nudges = \"2.7\""), format!("{file}:3: stop_without_result_nudges: expected a non-negative integer, found a string: invalid literal for int(): \"2.7\"")),
        (with_top("stop_without_result_nudges = -0.5e1"), format!("{file}:3: stop_without_result_nudges: must not be negative, found -5")),
        (with_top("stop_without_result_nudges = nan"), format!("{file}:3: stop_without_result_nudges: expected a non-negative integer, found a float: cannot convert float NaN to integer")),
        (with_top("adapter = \"tmux\""), format!("{file}:3: adapter: unknown adapter kind 'tmux' (drover has: generic, opencode-http)")),
        (with_top("adapter = 3"), format!("{file}:3: adapter: expected the adapter kind as a string (one of: generic, opencode-http), found an integer")),
        ("name = \"d\"\nbinary = \"b\"\nadapter = \"generic\"\n[hooks]\ndialect = \"none\"\n".to_string(), format!("{file}:3: adapter: 'generic' runs a hookless CLI from its [turn] table (how to run one headless turn), and this profile has none")),
        (with_top("adapter = { mode = \"x\" }\ncomponent_settings = { mode = \"y\" }"), format!("{file}:4: component_settings: given twice: here and as the old [adapter] table")),
        (with_top("component_settings = { mode = 2 }"), format!("{file}:3: component_settings.mode: expected a string, found an integer (write it in quotes)")),
        (with_top("turn = { argv = [\"-p\", \"{promt}\"] }"), format!("{file}:3: turn.argv[1]: unknown placeholder {{promt}} (known: {{prompt}})")),
        (with_top("turn = { resume = [\"--resume\"] }"), format!("{file}:3: turn.resume: must contain {{id}} where the conversation id goes")),
        (with_top("turn = { session_id = [\"--id={prompt}\"] }"), format!("{file}:3: turn.session_id[0]: unknown placeholder {{prompt}} (known: {{id}})")),
        (with_top("turn = { output = \"yaml\" }"), format!("{file}:3: turn.output: unknown output format 'yaml' (one of: text, json, ")),
        (with_top("turn = { format = \"json\" }"), format!("{file}:3: turn.format: unknown field (known: args, env, argv, resume, session_id, output, drop, reply, usage)")),
        (with_top("turn = { drop = [\"^ok\", \"(unclosed\"] }"), format!("{file}:3: turn.drop[1]: not a valid regex: ")),
        (with_top("turn = { reply = \"^(.*)$\" }"), format!("{file}:3: turn.reply: needs a group named reply, as in (?P<reply>...)")),
        (with_top("turn = { usage = { sent = \"(\\\\d+)\" } }"), format!("{file}:3: turn.usage.sent: unknown count (one of: input, output, cache_read, cache_write, reasoning, model)")),
        (with_top("turn = { usage = { input = \"Tokens: \\\\d+\" } }"), format!("{file}:3: turn.usage.input: needs a group around the figure")),
        (with_top("turn = { usage = { input = 3 } }"), format!("{file}:3: turn.usage.input: expected a regex as a string")),
        (with_top("component_settings = { \"turn.reply\" = \"x\" }"), format!("{file}:3: component_settings.turn.reply: names under turn. are [turn]'s own")),
        (with_top("usage = { input = \"n\" }"), format!("{file}:3: usage.files: missing: where the CLI writes its JSON-lines logs")),
        (with_top("usage = { files = \".acme/*.jsonl\", input = \"n\" }"), format!("{file}:3: usage.files: '.acme/*.jsonl' must start with ~/")),
        (with_top("usage = { files = \"~/**/*.jsonl\", input = \"n\" }"), format!("{file}:3: usage.files: '~/**/*.jsonl' must name the CLI's own directory below home before any wildcard")),
        (with_top("usage = { files = \"~/.acme/../.ssh/*\", input = \"n\" }"), format!("{file}:3: usage.files: '~/.acme/../.ssh/*' must not climb with ..")),
        (with_top("usage = { files = \"~/.acme/*.jsonl\", input = \"usage[0]\" }"), format!("{file}:3: usage.input: 'usage[0]' is not a field path (keys joined by '.'")),
        (with_top("usage = { files = \"~/.acme/*.jsonl\", model = \"model\" }"), format!("{file}:3: usage: names no count: give the field of at least one of input, output, cache_read, cache_write, reasoning")),
        (with_top("usage = { files = \"~/.acme/*.jsonl\", input = \"n\", tokens = \"t\" }"), format!("{file}:3: usage.tokens: unknown field (known: files, where, input_includes_cache, ")),
        (with_top("usage = { files = \"~/.acme/*.jsonl\", input = \"n\", where = { \"a b\" = \"x\" } }"), format!("{file}:3: usage.where.a b: 'a b' is not a field path")),
        (with_top("usage_parser = \"claude-jsonl\"\nusage = { files = \"~/.acme/*.jsonl\", input = \"n\" }"), format!("{file}:4: usage: given with usage_parser = \"claude-jsonl\": a profile reads its usage one way")),
        (with_top("component = \"claude\"\nusage = { files = \"~/.acme/*.jsonl\", input = \"n\" }"), format!("{file}:4: usage: the [usage] table is read by the generic adapter, and this profile runs component claude")),
        (with_top("bypas_args = []"), format!("{file}:3: bypas_args: unknown field (known: name, binary, adapter, hooks, ")),
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
    // bmad-loop's shipped claude.toml, field for field.
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
        assert!(p.warnings.is_empty(), "{file}: {:?}", p.warnings);
        match &p.component {
            ComponentRef::Builtin(name) => assert!(
                crate::builtin::find(name).is_some(),
                "{file}: no built-in component '{name}'"
            ),
            // A profile alone: the generic adapter drives it from [turn].
            ComponentRef::Implicit(name) => assert!(
                crate::builtin::find(name).is_some() || (p.hookless() && !p.turn.argv.is_empty()),
                "{file}: no built-in component '{name}', and no [turn] argv for the generic adapter"
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
        "name = \"claude\"\nbinary = \"claude\"\nusage_grace_s = -1\n[hooks]\ndialect = \"none\"\n",
    )
    .expect("write");
    let catalog = Catalog::load(dir.path());
    assert_eq!(catalog.errors().len(), 1);
    let err = catalog.get("claude").expect_err("refused");
    assert!(
        err.to_string()
            .contains("claude.toml:3: usage_grace_s: must be a finite number of seconds >= 0"),
        "{err}"
    );
}

/// What each warning says, `file:line: field: message` without the file.
fn warnings_of(p: &Profile) -> Vec<String> {
    p.warnings
        .iter()
        .map(|w| {
            w.to_string()
                .trim_start_matches("profile /p/.drover/profiles/demo.toml:")
                .to_string()
        })
        .collect()
}

#[test]
fn bmad_loop_coercions_load_and_say_what_they_were_read_as() {
    let text = with_top(
        "env = { A = 1, B = true, C = 2.5, D = \"d\" }\nstop_without_result_nudges = 2.7\nsubagent_stop_without_transcript = \"false\"\nusage_grace_s = \"8\"\nmodel_flag = 7",
    )
    .replace("binary = \"demo-cli\"", "binary = \"  demo-cli \"");
    let p = parse(&text).expect("bmad-loop would accept it, so drover does");
    assert_eq!(p.binary, "demo-cli");
    let env: Vec<(&str, &str)> = p
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, [("A", "1"), ("B", "True"), ("C", "2.5"), ("D", "d")]);
    assert_eq!(p.stop_without_result_nudges, Some(2));
    assert!(p.subagent_stop_without_transcript);
    assert_eq!(p.usage_grace, Duration::from_secs(8));
    assert_eq!(p.model_flag, "7");
    assert_eq!(
        warnings_of(&p),
        [
            "3: env.A: an integer read as the string \"1\", as bmad-loop's str() reads it; write it in quotes to say so",
            "3: env.B: a boolean read as the string \"True\", as bmad-loop's str() reads it; write it in quotes to say so",
            "3: env.C: a float read as the string \"2.5\", as bmad-loop's str() reads it; write it in quotes to say so",
            "4: stop_without_result_nudges: a float read as 2, as bmad-loop's int() reads it; write an integer",
            "5: subagent_stop_without_transcript: a string read as true, as bmad-loop's bool() reads it (any non-empty string is true); write true or false",
            "6: usage_grace_s: a string read as 8 seconds, as bmad-loop's float() reads it; write a number",
            "7: model_flag: an integer read as the string \"7\", as bmad-loop's str() reads it; write it in quotes to say so",
        ]
    );
}

#[test]
fn a_hookless_profile_with_a_turn_table_is_the_generic_adapters() {
    let hookless = "name = \"aider\"\nbinary = \"aider\"\n[hooks]\ndialect = \"none\"\n[turn]\nargv = [\"--message\", \"{prompt}\"]\n";
    for text in [
        hookless.to_string(),
        hookless.replace("[hooks]", "adapter = \"generic\"\n[hooks]"),
    ] {
        let p = parse(&text).expect("hookless with [turn]");
        assert_eq!(p.adapter, AdapterKind::Generic, "{text}");
        assert_eq!(p.component, ComponentRef::Implicit("aider".to_string()));
    }
    // The text fields reach the component as turn.* settings.
    let text = format!(
        "{hookless}drop = ['^Aider v', '^Warning:']\nreply = '(?s)(?P<reply>.*)'\n[turn.usage]\ninput = 'Tokens: ([\\d.,]+[kM]?) sent'\n"
    );
    let p = parse(&text).expect("text fields");
    assert!(p.turn.usage_is_printed());
    let settings = p.to_wit().settings;
    assert!(settings.contains(&("turn.drop".to_string(), "^Aider v\n^Warning:".to_string())));
    assert!(settings.contains(&("turn.reply".to_string(), "(?s)(?P<reply>.*)".to_string())));
    assert!(settings.contains(&(
        "turn.usage.input".to_string(),
        "Tokens: ([\\d.,]+[kM]?) sent".to_string()
    )));
}

#[test]
fn the_adapter_kind_follows_bmad_loops_rules() {
    let hookless = "name = \"oc\"\nbinary = \"opencode\"\n[hooks]\ndialect = \"none\"\n";
    let p = parse(hookless).expect("absent kind with dialect none");
    assert_eq!(p.adapter, AdapterKind::OpencodeHttp);
    assert_eq!(p.component, ComponentRef::Builtin("opencode".to_string()));
    let explicit = hookless.replace("[hooks]", "adapter = \"opencode-http\"\n[hooks]");
    assert_eq!(
        parse(&explicit).expect("explicit").adapter,
        AdapterKind::OpencodeHttp
    );
    let p = parse(&with_top("adapter = \"generic\"")).expect("generic with a dialect");
    assert_eq!(p.adapter, AdapterKind::Generic);
    assert_eq!(p.component, ComponentRef::Implicit("demo".to_string()));
    let p = parse(&with_top("component = \"claude\"")).expect("explicit component");
    assert_eq!(p.component, ComponentRef::Builtin("claude".to_string()));
}

#[test]
fn the_old_adapter_table_is_read_as_component_settings_with_a_warning() {
    let p = parse(&with_top("[adapter]\nmode = \"fast\"")).expect("old spelling");
    assert_eq!(
        p.component_settings.get("mode").map(String::as_str),
        Some("fast")
    );
    assert_eq!(p.adapter, AdapterKind::Generic);
    let warnings = warnings_of(&p);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("3: adapter: a table here is the old name of [component_settings]"),
        "{warnings:?}"
    );
    let p = parse(&with_top("[component_settings]\nmode = \"fast\"")).expect("new spelling");
    assert_eq!(p.component_settings.len(), 1);
    assert!(p.warnings.is_empty());
}

#[test]
fn the_turn_table_holds_the_generic_adapters_templates() {
    let p = parse(&with_top(
        "[turn]\nargv = [\"-p\", \"{prompt}\", \"--output-format\", \"json\"]\nresume = [\"--resume\", \"{id}\"]\nsession_id = [\"--session-id={id}\"]\noutput = \"claude-json\"\nargs = [\"--verbose\"]",
    ))
    .expect("valid turn table");
    assert_eq!(p.turn.argv, ["-p", "{prompt}", "--output-format", "json"]);
    assert_eq!(p.turn.resume, ["--resume", "{id}"]);
    assert_eq!(p.turn.session_id, ["--session-id={id}"]);
    assert_eq!(p.turn.output, "claude-json");
    assert_eq!(p.turn.args, ["--verbose"]);
}

#[test]
fn bmad_loops_opencode_profile_replaces_the_builtin_it_aliases() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profiles = project_dir(dir.path());
    std::fs::create_dir_all(&profiles).expect("mkdir");
    // bmad-loop's shipped opencode.toml: hookless, adapter kind left out.
    std::fs::write(
        profiles.join("opencode.toml"),
        "name = \"opencode-http\"\nbinary = \"opencode\"\nprompt_template = \"Use the {skill} skill now: {args}\"\nusage_parser = \"none\"\nskill_tree = \".claude/skills\"\nfirst_run_note = \"run `opencode auth login` once on this machine; headless servers reuse the stored credentials\"\n\n[hooks]\ndialect = \"none\"\n",
    )
    .expect("write");
    let catalog = Catalog::load(dir.path());
    assert!(catalog.errors().is_empty(), "{:?}", catalog.errors());
    for name in ["opencode", "opencode-http"] {
        let p = catalog.get(name).expect("resolves");
        assert_eq!(p.name, "opencode-http", "{name}");
        assert_eq!(p.source.kind(), "project");
        assert_eq!(p.adapter, AdapterKind::OpencodeHttp);
        assert_eq!(p.component, ComponentRef::Builtin("opencode".to_string()));
    }
    assert_eq!(
        catalog
            .profiles()
            .iter()
            .filter(|p| p.binary == "opencode")
            .count(),
        1,
        "the built-in opencode profile is replaced, not shadowed"
    );
    assert_eq!(
        catalog.get("claude-code-tmux").expect("alias").name,
        "claude"
    );
}

#[test]
fn a_usage_table_becomes_the_generic_adapters_parser_of_its_logs() {
    let text = with_top(
        "[usage]\nfiles = \"~/.acme/logs/*/*.jsonl\"\nwhere = { event = \"message_send\" }\ninput = \"properties.prompt_tokens\"\noutput = \"properties.completion_tokens\"\ncache_read = \"properties.prompt_tokens_details.cached_tokens\"\nmodel = \"properties.model\"\nrequest_id = \"properties.id\"\ninput_includes_cache = true",
    );
    let p = parse(&text).expect("valid");
    let spec = p
        .usage_parser
        .strip_prefix("fields:")
        .expect("a fields: parser");
    let spec: serde_json::Value = serde_json::from_str(spec).expect("JSON");
    assert_eq!(
        spec,
        serde_json::json!({
            "files": "~/.acme/logs/*/*.jsonl",
            "where": {"event": "message_send"},
            "input": "properties.prompt_tokens",
            "output": "properties.completion_tokens",
            "cache_read": "properties.prompt_tokens_details.cached_tokens",
            "model": "properties.model",
            "request_id": "properties.id",
            "input_includes_cache": true,
        })
    );
    // The component sees the same name.
    assert_eq!(p.to_wit().usage_parser, p.usage_parser);
}

#[test]
fn a_component_is_told_the_hosts_offset_unless_the_profile_names_a_zone() {
    let setting = |p: &Profile| {
        p.to_wit()
            .settings
            .into_iter()
            .find(|(k, _)| k == TIMEZONE_SETTING)
            .map(|(_, v)| v)
    };
    let host = setting(&parse(BASE).expect("valid")).expect("an offset");
    let shape = regex::Regex::new(r"^[+-]\d\d:\d\d$").expect("regex");
    assert!(shape.is_match(&host), "{host}");
    let named = parse(&format!(
        "{BASE}[component_settings]\ntimezone = \"Asia/Tokyo\"\n"
    ))
    .expect("valid");
    assert_eq!(setting(&named).as_deref(), Some("Asia/Tokyo"));
}

#[test]
fn resume_reads_its_fields_and_refuses_an_empty_message() {
    let p = parse(&format!(
        "{BASE}[resume]\non_limit = false\nattempts = 5\nmessage = \"continue\"\n"
    ))
    .expect("valid");
    assert_eq!(
        p.resume,
        Resume {
            on_limit: false,
            attempts: 5,
            message: Some("continue".to_string())
        }
    );
    assert_eq!(parse(BASE).expect("valid").resume, Resume::default());
    let file = "/p/.drover/profiles/demo.toml";
    assert_eq!(
        error_of(&format!("{BASE}[resume]\nmessage = \" \"\n")),
        format!(
            "profile {file}:9: resume.message: is empty; leave it out to re-send the interrupted prompt"
        )
    );
    assert!(error_of(&format!("{BASE}[resume]\ntries = 2\n")).contains("resume.tries"));
}
