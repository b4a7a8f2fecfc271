//! Hostile bytes into every built-in component, through the sandbox: hook
//! payloads, transcript chunks and screens never trap, never hit a limit,
//! and never take the engine down. (Each adapter crate also has its own
//! native no-panic test; this one runs the real compiled components.)

use drover::profile::Catalog;
use drover::sandbox::{CompileCache, Limits, Sandbox, SandboxError};
use drover::types::wit;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = (self.next() as usize) % max;
        // Mostly JSON-ish bytes, so parsers get past their first check.
        const ALPHABET: &[u8] = b"{}[]\":,0123456789abcdefusagetokens_-\n \\\xff\xc3\xa9";
        (0..len)
            .map(|_| ALPHABET[(self.next() as usize) % ALPHABET.len()])
            .collect()
    }
}

fn no_trap<T>(what: &str, result: Result<T, SandboxError>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: {e}"))
}

#[test]
fn built_in_components_survive_arbitrary_input() {
    let sandbox = Sandbox::new(CompileCache::default_location()).expect("engine");
    let catalog = Catalog::load(std::path::Path::new("/nonexistent"));
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    for builtin in drover::builtin::all() {
        let profile = catalog
            .profiles()
            .iter()
            .find(|p| matches!(&p.component, drover::profile::ComponentRef::Builtin(n) if n == builtin.name))
            // No built-in profile names the generic adapter (it serves
            // profile-only CLIs); feed it a Claude-dialect profile.
            .or_else(|| (builtin.name == "generic").then(|| catalog.find("claude")).flatten())
            .map(|p| p.to_wit())
            .expect("a profile uses every built-in component");
        let (adapter, _) = sandbox
            .load_builtin(builtin, Limits::default())
            .expect("loads");
        let natives: Vec<String> = profile
            .hook_events
            .iter()
            .map(|(n, _)| n.clone())
            .chain(["Bogus".to_string()])
            .collect();
        for round in 0..150 {
            let payload = noise.bytes(600);
            let native = &natives[round % natives.len()];
            // Ok(Ok) or Ok(Err(invalid-input)) are both fine; a trap is not.
            let _ = no_trap(
                &format!("{} parse-hook", builtin.name),
                adapter.parse_hook(&profile, native, &payload),
            );
            let screen = wit::Screen {
                rows: String::from_utf8_lossy(&noise.bytes(400))
                    .lines()
                    .map(str::to_string)
                    .collect(),
                title: String::new(),
            };
            let _ = no_trap(
                &format!("{} read-screen", builtin.name),
                adapter.read_screen(&profile, &screen),
            );
            let output = wit::TurnOutput {
                stdout: String::from_utf8_lossy(&noise.bytes(400)).into_owned(),
                stderr: String::from_utf8_lossy(&noise.bytes(200)).into_owned(),
                exit_code: Some((noise.next() % 3) as i32),
                prior_usage: None,
            };
            let _ = no_trap(
                &format!("{} parse-turn", builtin.name),
                adapter.parse_turn(&profile, &output),
            );
            let lines: Vec<String> = String::from_utf8_lossy(&noise.bytes(300))
                .lines()
                .map(str::to_string)
                .collect();
            let _ = no_trap(
                &format!("{} classify-fault", builtin.name),
                adapter.classify_fault(&profile, &lines),
            );
            let _ = no_trap(
                &format!("{} install-hooks", builtin.name),
                adapter.install_hooks(
                    &String::from_utf8_lossy(&noise.bytes(300)),
                    &wit::HookInstall {
                        dialect: profile.dialect.clone(),
                        relay_command: "drover hook --cli x".into(),
                        events: profile.hook_events.clone(),
                        marker: "drover hook".into(),
                    },
                ),
            );
        }
        if profile.usage_parser != "none" {
            let mut tally = no_trap(
                "tally",
                adapter.tally(&profile.usage_parser, Limits::default()),
            );
            no_trap("begin-file", tally.begin_file("noise.jsonl"));
            for _ in 0..200 {
                let _ = no_trap(
                    &format!("{} tally.feed", builtin.name),
                    tally.feed(&noise.bytes(2000)),
                );
            }
            let _ = no_trap(&format!("{} tally.finish", builtin.name), tally.finish());
        }
        // And the adapter still answers normally afterwards.
        assert_eq!(no_trap("describe", adapter.describe()).name, builtin.name);
    }
}
