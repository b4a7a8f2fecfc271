use super::*;
use drover_config::Scope;

/// Settings files with the project's trusted.
fn config(project: Option<&str>, user: Option<&str>) -> Config {
    config_trusting(project, user, true)
}

fn config_trusting(project: Option<&str>, user: Option<&str>, trusted: bool) -> Config {
    let parse = |text: &str, scope, path: &str| {
        ConfigFile::parse(Path::new(path), scope, text.to_string(), |_, _| trusted)
            .expect("valid toml")
    };
    Config {
        project: project.map(|t| parse(t, Scope::Project, "/p/.drover/config.toml")),
        user: user.map(|t| parse(t, Scope::User, "/u/config.toml")),
    }
}

fn resolve(
    flags: &Overrides,
    config: &Config,
    env: &[(&str, &str)],
) -> Result<Settings, SettingsError> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::from_parts(Path::new("/p"), "claude", flags, config, |name| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
}

#[test]
fn the_address_follows_flag_project_env_user_default() {
    let both = config(
        Some("[ray]\naddress = \"http://project:8265\"\n"),
        Some("[ray]\naddress = \"user:8265\"\n"),
    );
    let user_only = config(None, Some("[ray]\naddress = \"user:8265\"\n"));
    let flag = Overrides {
        address: Some("http://flag:1/".to_string()),
        place: None,
    };
    let env = [("RAY_ADDRESS", "http://env:8265")];
    let pick = |flags: &Overrides, config: &Config, env: &[(&str, &str)]| {
        let s = resolve(flags, config, env).expect("resolves");
        (s.address, s.address_source)
    };
    let none = Overrides::default();
    assert_eq!(
        pick(&flag, &both, &env),
        ("http://flag:1".into(), "flag".into())
    );
    assert_eq!(
        pick(&none, &both, &env),
        ("http://project:8265".into(), "project".into())
    );
    assert_eq!(
        pick(&none, &user_only, &env),
        ("http://env:8265".into(), "RAY_ADDRESS".into())
    );
    assert_eq!(
        pick(
            &none,
            &user_only,
            &[("RAY_API_SERVER_ADDRESS", "api:1"), ("RAY_ADDRESS", "x:2")]
        ),
        ("http://api:1".into(), "RAY_API_SERVER_ADDRESS".into())
    );
    assert_eq!(
        pick(&none, &user_only, &[]),
        ("http://user:8265".into(), "user".into())
    );
    assert_eq!(
        pick(&none, &config(None, None), &[]),
        (DEFAULT_ADDRESS.into(), "default".into())
    );
}

/// Break 3: an untrusted project's `[ray]` chose the cluster (and beat
/// the user's RAY_ADDRESS) and what the nodes run.
#[test]
fn an_untrusted_projects_ray_settings_are_set_aside() {
    let project = "[ray]\naddress = \"http://evil:8265\"\ndrover = \"/bin/sh\"\nproject = \"/tmp\"\nnum_cpus = 0\nplace = \"x\"\n";
    let untrusted = config_trusting(Some(project), Some("[ray]\nnum_cpus = 2\n"), false);
    let s = resolve(
        &Overrides::default(),
        &untrusted,
        &[("RAY_ADDRESS", "http://mine:8265")],
    )
    .expect("resolves");
    assert_eq!(
        (
            s.address.as_str(),
            s.address_source.as_str(),
            s.address_from
        ),
        ("http://mine:8265", "RAY_ADDRESS", Provenance::User)
    );
    assert_ne!(s.drover, PathBuf::from("/bin/sh"));
    assert_eq!(s.project, PathBuf::from("/p"));
    assert_eq!(s.place, None);
    assert_eq!(s.num_cpus, 2.0);
    assert_eq!(s.ignored.len(), 5, "{:?}", s.ignored);
    assert!(
        s.ignored[0].contains("/p/.drover/config.toml:2: ray.address")
            && s.ignored[0].contains("drover trust"),
        "{:?}",
        s.ignored
    );
    assert!(
        s.entrypoint().expect("cleared").starts_with("exec '"),
        "the user's entrypoint"
    );
    // Without RAY_ADDRESS the default, never the project's.
    let s = resolve(&Overrides::default(), &untrusted, &[]).expect("resolves");
    assert_eq!(s.address, DEFAULT_ADDRESS);

    // Trusted, the project's settings are used, in the documented order.
    let trusted = config_trusting(Some(project), None, true);
    let s = resolve(
        &Overrides::default(),
        &trusted,
        &[("RAY_ADDRESS", "http://mine:8265")],
    )
    .expect("resolves");
    assert_eq!(
        (s.address.as_str(), s.address_from),
        ("http://evil:8265", Provenance::TrustedProject)
    );
    assert_eq!(s.drover, PathBuf::from("/bin/sh"));
    assert!(s.ignored.is_empty());
    assert!(s.jobs().is_ok());
}

#[test]
fn a_client_is_made_only_for_an_address_the_gate_lets_through() {
    let mut s = resolve(&Overrides::default(), &config(None, None), &[]).expect("resolves");
    s.address_from = Provenance::UntrustedProject;
    s.entrypoint_from = Provenance::UntrustedProject;
    let refused = s.jobs().err().expect("refused");
    assert_eq!(refused.effect, Effect::Connect);
    assert!(s.entrypoint().is_err());
}

#[test]
fn addresses_that_are_not_a_dashboard_are_refused_naming_their_source() {
    for (raw, needle) in [
        ("ray://head:10001", "Ray Client"),
        ("https://head:8265", "plain HTTP"),
        ("auto", "local GCS"),
        ("ftp://x", "not an http"),
    ] {
        let e = resolve(
            &Overrides::default(),
            &config(None, None),
            &[("RAY_ADDRESS", raw)],
        )
        .expect_err(raw)
        .to_string();
        assert!(e.starts_with("RAY_ADDRESS: ") && e.contains(needle), "{e}");
    }
}

#[test]
fn placement_comes_from_flag_then_profile_then_section() {
    let c = config(
        Some(
            "[ray]\nplace = \"host_c\"\nnum_cpus = 0.5\nresources = { ssd = 2 }\n[ray.cli.claude]\nplace = \"host_b\"\n",
        ),
        None,
    );
    let s = resolve(&Overrides::default(), &c, &[]).expect("resolves");
    assert_eq!(s.place.as_deref(), Some("host_b"));
    assert_eq!(s.num_cpus, 0.5);
    assert_eq!(s.resources.get("ssd"), Some(&2.0));
    assert_eq!(s.resources.get("host_b"), Some(&PLACE_SHARE));
    let flag = Overrides {
        address: None,
        place: Some("host_d".to_string()),
    };
    let s = resolve(&flag, &c, &[]).expect("resolves");
    assert_eq!(s.place.as_deref(), Some("host_d"));
    assert!(!s.resources.contains_key("host_b"));
    let other = Settings::from_parts(Path::new("/p"), "codex", &Overrides::default(), &c, |_| {
        None
    })
    .expect("resolves");
    assert_eq!(other.place.as_deref(), Some("host_c"));
}

#[test]
fn bad_fields_name_file_line_and_field() {
    let c = config(Some("[ray]\nnum_cpus = \"two\"\n"), None);
    let e = resolve(&Overrides::default(), &c, &[])
        .expect_err("bad")
        .to_string();
    assert!(
        e.starts_with("/p/.drover/config.toml:2: ray.num_cpus:"),
        "{e}"
    );
    let c = config(Some("[ray]\nresources = { \"a b\" = 1 }\n"), None);
    let e = resolve(&Overrides::default(), &c, &[])
        .expect_err("bad")
        .to_string();
    assert!(e.contains("not a Ray resource name"), "{e}");
    let flag = Overrides {
        address: None,
        place: Some("x y".to_string()),
    };
    let e = resolve(&flag, &config(None, None), &[])
        .expect_err("bad")
        .to_string();
    assert!(e.starts_with("--place: "), "{e}");
    let c = config(Some("[ray]\nwarm = \"yes\"\n"), None);
    let e = resolve(&Overrides::default(), &c, &[])
        .expect_err("bad")
        .to_string();
    assert!(
        e.starts_with("/p/.drover/config.toml:2: ray.warm: expected true or false"),
        "{e}"
    );
}

#[test]
fn turns_are_warm_unless_a_setting_says_not() {
    let s = resolve(&Overrides::default(), &config(None, None), &[]).expect("resolves");
    assert!(s.warm);
    let c = config(Some("[ray]\nwarm = false\n"), None);
    let s = resolve(&Overrides::default(), &c, &[]).expect("resolves");
    assert!(!s.warm);
    assert!(
        s.worker_entrypoint()
            .expect("cleared")
            .ends_with(" ray-worker")
    );
}

#[test]
fn a_warm_worker_waits_as_long_as_the_setting_says() {
    let s = resolve(&Overrides::default(), &config(None, None), &[]).expect("resolves");
    assert_eq!(s.idle, std::time::Duration::from_secs(30));
    let c = config(None, Some("[ray]\nidle = 2.5\n"));
    let s = resolve(&Overrides::default(), &c, &[]).expect("resolves");
    assert_eq!(s.idle, std::time::Duration::from_millis(2500));
    assert_eq!(serde_json::to_value(&s).expect("json")["idle_s"], 2.5);
    for bad in ["-1", "\"soon\"", "1e9"] {
        let c = config(Some(&format!("[ray]\nidle = {bad}\n")), None);
        let e = resolve(&Overrides::default(), &c, &[])
            .expect_err(bad)
            .to_string();
        assert!(
            e.starts_with("/p/.drover/config.toml:2: ray.idle: expected seconds"),
            "{e}"
        );
    }
}
