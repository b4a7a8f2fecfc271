use super::*;

const HOME: &str = "/home/zqxuser";
const USER: &str = "zqxuser";

fn sanitizer() -> Sanitizer {
    let mut s = Sanitizer::with_salt(
        &Identity {
            home: Some(HOME.into()),
            usernames: vec![USER.into()],
        },
        [1; 16],
    );
    s.add_project(Path::new("/srv/clients/acmesecret"), &["claude"]);
    s
}

/// Every planted value, in every shape a report could carry it.
const PLANTED: &[&str] = &[
    "zqxuser",
    "ZQXUSER",
    "/home/zqxuser",
    "alice.smith@example.com",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
    "https://bob:hunter2pass@git.example.org/x",
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A",
    "acmesecret",
];

fn assert_clean(out: &str) {
    for p in PLANTED {
        assert!(
            !out.to_lowercase().contains(&p.to_lowercase()),
            "{p:?} leaked into {out:?}"
        );
    }
    assert!(!out.contains("hunter2pass"), "{out}");
}

#[test]
fn text_redacts_every_planted_value() {
    let s = sanitizer();
    let help = "Usage: tool [OPTIONS]\n\
        \x1b[1m  --config <PATH>\x1b[0m   default /home/zqxuser/.tool/config.json\n\
        Contact alice.smith@example.com or https://bob:hunter2pass@git.example.org/x\n\
        token ghp_0123456789abcdefghijABCDEFGHIJ012345, key=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n\
        AWS AKIAIOSFODNN7EXAMPLE jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig\n\
        blob Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A\n\
        user zqxuser (ZQXUSER) works on acmesecret in /srv/clients/acmesecret/src\n\
        other home /home/someoneelse/x and C:\\Users\\Someone\\AppData\n\
        password=hunter3word";
    let out = s.text(help, 100);
    let text = out.as_str();
    assert_clean(text);
    assert!(text.contains("~/.tool/config.json"), "{text}");
    assert!(text.contains("<project>/src"), "{text}");
    assert!(text.contains("<redacted:email>"), "{text}");
    assert!(
        text.contains("https://<redacted>@git.example.org"),
        "{text}"
    );
    assert!(text.contains("<redacted:user>"), "{text}");
    assert!(text.contains(s.project_alias().expect("aliased")), "{text}");
    assert!(
        !text.contains("someoneelse") && !text.contains("Someone"),
        "{text}"
    );
    assert!(!text.contains("hunter3word"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
    // The guard agrees with collection: nothing left to fire on.
    assert_eq!(s.hard_rules(text), Vec::<&str>::new(), "{text}");
}

#[test]
fn text_keeps_ordinary_help_and_caps_lines() {
    let s = sanitizer();
    let help = "Usage: claude [options] [command] [prompt]\n  --model <model>  e.g. claude-sonnet-4-5\n  --session-id 0f8e2a9c-5b7d-4e1f-9a3c-2d6b8e0f1a47\nline4\nline5";
    let out = s.text(help, 3);
    assert!(out.as_str().contains("claude-sonnet-4-5"));
    assert!(
        out.as_str()
            .contains("0f8e2a9c-5b7d-4e1f-9a3c-2d6b8e0f1a47"),
        "UUIDs are not secrets"
    );
    assert!(
        out.as_str().ends_with("… (2 more lines not shown)"),
        "{out}"
    );
}

#[test]
fn identifiers_are_kept_or_reduced() {
    let s = sanitizer();
    assert_eq!(s.identifier("Stop").as_str(), "Stop");
    assert_eq!(s.identifier("claude-jsonl").as_str(), "claude-jsonl");
    assert_eq!(s.identifier("two words").as_str(), "<redacted:str>");
    assert_eq!(s.identifier("a@b.co").as_str(), "<redacted:str>");
    assert_eq!(
        s.identifier("ghp_0123456789abcdefghijABCDEFGHIJ012345")
            .as_str(),
        "<redacted:secret>"
    );
    assert_eq!(s.identifier("zqxuser-box").as_str(), "<redacted:user>");
    assert_eq!(
        s.identifier("acmesecret").as_str(),
        s.project_alias().expect("alias")
    );
    assert_eq!(s.key("input_tokens").as_str(), "input_tokens");
    assert_eq!(s.key("/home/zqxuser").as_str(), "<key>");
}

#[test]
fn paths_keep_shape_not_names() {
    let s = sanitizer();
    let alias = s.project_alias().expect("alias").to_string();
    assert_eq!(
        s.path(
            "/home/zqxuser/.claude/projects/-work-clients-acmesecret/0f8e2a9c.jsonl",
            false
        )
        .as_str(),
        format!("~/.claude/projects/-work-clients-{alias}/0f8e2a9c.jsonl")
    );
    assert_eq!(
        s.path(
            "/home/zqxuser/.claude/projects/-home-zqxuser-x/a.jsonl",
            false
        )
        .as_str(),
        "~/.claude/projects/<redacted:user>/a.jsonl"
    );
    assert_eq!(
        s.path("/srv/clients/acmesecret/.claude/settings.json", false)
            .as_str(),
        "<project>/.claude/settings.json"
    );
    assert_eq!(
        s.path("/elsewhere/acmesecret/x", false).as_str(),
        format!("/elsewhere/{alias}/x")
    );
    assert_eq!(
        s.path("/srv/my files/x", false).as_str(),
        "/srv/<redacted>/x"
    );
    assert_eq!(
        s.path(".claude/settings.json", false).as_str(),
        ".claude/settings.json"
    );
    assert_eq!(
        s.path("~/.codex/sessions/*/*/*/rollout-*.jsonl", true)
            .as_str(),
        "~/.codex/sessions/*/*/*/rollout-*.jsonl"
    );
    assert_eq!(s.path("/a/*.jsonl", false).as_str(), "/a/<redacted>");
    assert_eq!(s.path("C:\\Users\\zqxuser\\x", false).as_str(), "<home>/x");
    assert_eq!(s.path("/", false).as_str(), "/");
}

#[test]
fn variables_become_names() {
    let mut s = sanitizer();
    s.add_variable("CLAUDE_CONFIG_DIR", "/opt/corpname/claude/");
    assert_eq!(
        s.path("/opt/corpname/claude/projects/*/*.jsonl", true)
            .as_str(),
        "$CLAUDE_CONFIG_DIR/projects/*/*.jsonl"
    );
    assert!(
        s.text("dir /opt/corpname/claude here", 1)
            .as_str()
            .contains("$CLAUDE_CONFIG_DIR here")
    );
}

#[test]
fn anchors_respect_name_boundaries() {
    let s = Sanitizer::with_salt(
        &Identity {
            home: Some("/home/al".into()),
            usernames: vec!["al".into()],
        },
        [2; 16],
    );
    let out = s.text("see /home/al/x and /home/alice/y", 1);
    assert_eq!(out.as_str(), "see ~/x and <home>/y");
    // A short username is not hunted in text, only in path components.
    assert_eq!(s.text("al is short", 1).as_str(), "al is short");
    assert_eq!(
        s.path("/srv/al/x", false).as_str(),
        "/srv/<redacted:user>/x"
    );
}

#[test]
fn secrets_by_shape() {
    for secret in [
        "sk-proj-abcdefghij1234567890",
        "xoxb-1234567890-abcdefghij",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-abcdefghij1234567890",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "hf_abcdefghijklmnopqrstuvwxyz012345",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ] {
        assert!(looks_like_secret(secret), "{secret}");
        assert!(
            looks_like_secret(&format!("x /path/{secret} y")),
            "{secret} in context"
        );
    }
    for fine in [
        "0f8e2a9c-5b7d-4e1f-9a3c-2d6b8e0f1a47",
        "CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN",
        "cache_creation_input_tokens",
        "task-force",
        "sk-learn",
        "ASIAN_LANGUAGES_SUPPORTED_HERE",
        "cacheCreationInputTokensPerRequestCount",
        "<redacted:secret>",
        "project-0a1b2c3d4e5f",
    ] {
        assert!(!looks_like_secret(fine), "{fine}");
    }
}

#[test]
fn aliases_are_salted_and_stable_within_a_run() {
    let one = sanitizer();
    let mut other = Sanitizer::with_salt(&Identity::default(), [9; 16]);
    other.add_project(Path::new("/srv/clients/acmesecret"), &[]);
    assert_ne!(one.project_alias(), other.project_alias());
    let alias = one.project_alias().expect("alias");
    assert!(alias.starts_with("project-") && alias.len() == "project-".len() + 12);
    assert_eq!(one.identifier("acmesecret").as_str(), alias);
    let mut kept = Sanitizer::with_salt(&Identity::default(), [9; 16]);
    kept.add_project(Path::new("/x/claude"), &["claude"]);
    assert_eq!(
        kept.project_alias(),
        None,
        "the CLI's own name is never aliased"
    );
}

#[test]
fn guard_refuses_hard_leaks() {
    let s = sanitizer();
    for (text, rule) in [
        ("mail alice.smith@example.com", "email"),
        ("see https://u:p4ss@h.example/x", "url-credentials"),
        ("at /home/zqxuser/x", "home-path"),
        ("at /home/other/x", "home-path"),
        ("at /Users/other", "home-path"),
        ("at /root/.config", "home-path"),
        ("at C:\\\\Users\\\\x", "home-path"),
        ("key ghp_0123456789abcdefghijABCDEFGHIJ012345", "secret"),
        ("hello ZqxUser", "username"),
    ] {
        let err = s.guard(text.to_string()).expect_err(text);
        assert!(err.rules.contains(&rule), "{text}: {:?}", err.rules);
    }
    assert!(
        s.guard("zqxuserish and /var/lib/x and D:/data".to_string())
            .is_ok()
    );
}

#[test]
fn guard_repairs_stray_project_names_and_discloses_them() {
    let s = sanitizer();
    let alias = s.project_alias().expect("alias").to_string();
    let (text, repairs) = s
        .guard(
            "{\"a\": \"acmesecret\", \"b\": \"/srv/clients/acmesecret/x\", \"c\": \"acmesecrets\"}"
                .to_string(),
        )
        .expect("repairable");
    assert_eq!(
        text,
        format!("{{\"a\": \"{alias}\", \"b\": \"<project>/x\", \"c\": \"acmesecrets\"}}")
    );
    assert_eq!(repairs.get(&format!("project:{alias}")), Some(&1));
    assert_eq!(repairs.get("project-dir"), Some(&1));
    assert!(s.check(&text).is_ok());
    assert!(s.check("acmesecret").is_err());
}

#[test]
fn standalone_matching() {
    assert_eq!(
        find_standalone("proj project -proj- proj", "proj", false),
        vec![0, 14, 20]
    );
    assert_eq!(find_standalone("a.acme,", ".acme", false), vec![1]);
    assert_eq!(
        replace_standalone("ZQXUSER zqxuser2", "zqxuser", "<u>", true).0,
        "<u> zqxuser2"
    );
}

#[test]
fn a_path_in_another_home_loses_its_owner() {
    // The CLI installed by another account (or HOME pointed elsewhere): its
    // path still names a home, and the egress guard would refuse it.
    let s = sanitizer();
    for (raw, want) in [
        (
            "/root/.cache/clis/claude/node_modules/.bin/claude",
            "<home>/.cache/clis/claude/node_modules/.bin/claude",
        ),
        ("/home/someoneelse/bin/tool", "<home>/bin/tool"),
        ("/Users/Someone/bin/tool", "<home>/bin/tool"),
        ("/root", "<home>"),
        ("/rootless/bin/tool", "/rootless/bin/tool"),
    ] {
        let out = s.path(raw, false);
        assert_eq!(out.as_str(), want, "{raw}");
        assert!(s.hard_rules(out.as_str()).is_empty(), "{raw} -> {out:?}");
    }
}

#[test]
fn a_generic_home_name_is_not_taken_for_a_username() {
    let identity = |home: &str| {
        Identity::from_vars(|name| match name {
            "HOME" => Some(home.to_string()),
            "USER" => Some("zqxuser".to_string()),
            _ => None,
        })
    };
    assert_eq!(identity("/tmp/scratch/home").usernames, ["zqxuser"]);
    assert_eq!(
        identity("/home/zqxother").usernames,
        ["zqxother", "zqxuser"]
    );
    // And so drover's own placeholder passes the guard.
    let s = Sanitizer::with_salt(&identity("/tmp/scratch/home"), [1; 16]);
    let path = s.path("/home/someoneelse/tool", false);
    assert!(s.hard_rules(path.as_str()).is_empty(), "{path:?}");
}
