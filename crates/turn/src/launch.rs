//! The one way to launch a session: a profile and the component that drives
//! it, with where each came from, checked against the user's trust.
//!
//! Every command that starts a CLI (`run`, `up`, `send`, `ray-turn`,
//! `probe-adapter --probe`, the seat host) and every embedder gets its
//! [`Context`](crate::Context) from a [`Prepared`] value, and only this
//! module makes one. [`Prepared::launch`] refuses what the user has not
//! agreed to: an untrusted project profile, and an untrusted project
//! component (`.drover/adapters/*.wasm`, or a `.wasm` a project profile
//! names), since a component chooses the CLI's arguments and environment.
//! [`Prepared::assess`] is for parsing only (settling a run's hooks and
//! transcripts): it binds without refusing but records the provenance
//! honestly, and the drivers' spawn goes through
//! [`drover_gate::clear`] with it ([`crate::spawn::clear_command`]), so a
//! context prepared that way can parse but never start a process.

use std::path::Path;

use drover_gate::Provenance;
use drover_profile::registry::{self, ComponentBytes, Origin, ResolveError};
use drover_profile::{Catalog, LookupError, Profile, ProfileSource};
use drover_sandbox::{Adapter, Sandbox, SandboxError};

use drover_trust::{Trust, TrustError, Untrusted};

/// Why a session cannot be launched.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error(transparent)]
    Trust(#[from] TrustError),
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
    #[error(transparent)]
    Component(#[from] ResolveError),
}

impl From<SandboxError> for LaunchError {
    fn from(e: SandboxError) -> LaunchError {
        LaunchError::Component(e.into())
    }
}

/// The component a launch binds: its name, where its bytes are, their
/// SHA-256, and whose choice it was.
#[derive(Debug, Clone)]
pub struct Component {
    pub name: String,
    pub origin: Origin,
    pub sha256: String,
    pub from: Provenance,
}

/// A profile and its loaded component, ready to drive a session: what
/// [`crate::Context::new`] takes. Its provenance is the least trusted of the
/// profile's and the component's.
pub struct Prepared {
    pub(crate) profile: Profile,
    pub(crate) adapter: Adapter,
    pub(crate) component: Component,
    pub(crate) from: Provenance,
}

impl Prepared {
    /// The profile named `cli` in `project`'s catalog, trusted, with its
    /// component, trusted.
    pub fn launch(project: &Path, cli: &str) -> Result<Prepared, LaunchError> {
        let catalog = Catalog::load(project);
        let profile = catalog.get(cli)?.clone();
        Prepared::launch_profile(project, profile, &Sandbox::with_default_cache()?)
    }

    /// [`Prepared::launch`] for a profile already in hand (`probe-adapter`
    /// points it at the user's `--binary`; its fields still need trust).
    pub fn launch_profile(
        project: &Path,
        profile: Profile,
        sandbox: &Sandbox,
    ) -> Result<Prepared, LaunchError> {
        let trust = Trust::load(project)?;
        trust.require_profile(&profile)?;
        let found = registry::resolve(&profile.component, project)?;
        let component = component_of(&profile, &found, project, &trust);
        if let (Provenance::UntrustedProject, Origin::File(path)) = (component.from, &found.origin)
        {
            let relative = trust.relative(path);
            return Err(Untrusted {
                changed: trust
                    .record()
                    .is_some_and(|r| r.files.contains_key(&relative)),
                file: relative,
                wants: drover_trust::component_wants(&found.name, &[&profile], None),
            }
            .into());
        }
        let profile_from = profile_source(&profile);
        Prepared::bind(sandbox, profile, found, component, profile_from)
    }

    /// The profile with its component, for parsing only: nothing is
    /// refused, and the provenance says what the trust check would have, so
    /// the spawn gate refuses an untrusted one.
    pub fn assess(
        project: &Path,
        profile: Profile,
        sandbox: &Sandbox,
    ) -> Result<Prepared, ResolveError> {
        let trust = Trust::load(project).ok();
        let found = registry::resolve(&profile.component, project)?;
        let (component, profile_from) = match &trust {
            Some(trust) => (
                component_of(&profile, &found, project, trust),
                if trust.require_profile(&profile).is_ok() {
                    profile_source(&profile)
                } else {
                    Provenance::UntrustedProject
                },
            ),
            None => (
                Component {
                    name: found.name.clone(),
                    origin: found.origin.clone(),
                    sha256: found.sha256.clone(),
                    from: Provenance::UntrustedProject,
                },
                Provenance::UntrustedProject,
            ),
        };
        let (adapter, _) = registry::load_resolved(sandbox, &found, profile.limits())?;
        Ok(Prepared::new(profile, adapter, component, profile_from))
    }

    fn bind(
        sandbox: &Sandbox,
        profile: Profile,
        found: ComponentBytes,
        component: Component,
        profile_from: Provenance,
    ) -> Result<Prepared, LaunchError> {
        // The bytes the trust check hashed are the bytes that load: a file
        // swapped in between is never the one that runs.
        let (adapter, _) = registry::load_resolved(sandbox, &found, profile.limits())?;
        Ok(Prepared::new(profile, adapter, component, profile_from))
    }

    fn new(
        profile: Profile,
        adapter: Adapter,
        component: Component,
        profile_from: Provenance,
    ) -> Prepared {
        let from = least_trusted(profile_from, component.from);
        Prepared {
            profile,
            adapter,
            component,
            from,
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    pub fn adapter(&self) -> &Adapter {
        &self.adapter
    }

    pub fn component(&self) -> &Component {
        &self.component
    }

    /// Where the launch's inputs came from (the least trusted of them).
    pub fn from(&self) -> Provenance {
        self.from
    }
}

/// Whose choice a profile is, once [`Trust::require_profile`] passed.
fn profile_source(profile: &Profile) -> Provenance {
    match profile.source {
        ProfileSource::Builtin(_) => Provenance::Builtin,
        ProfileSource::User(_) => Provenance::User,
        ProfileSource::Project(_) => Provenance::TrustedProject,
    }
}

/// The component's provenance: built-in, the user's, or the project's
/// (trusted only when the user trusted these bytes).
fn component_of(
    profile: &Profile,
    found: &ComponentBytes,
    project: &Path,
    trust: &Trust,
) -> Component {
    let from = match &found.origin {
        Origin::Builtin => Provenance::Builtin,
        origin @ Origin::File(path) if registry::is_project_component(profile, origin, project) => {
            if trust.trusts(path, &found.bytes) {
                Provenance::TrustedProject
            } else {
                Provenance::UntrustedProject
            }
        }
        Origin::File(_) => Provenance::User,
    };
    Component {
        name: found.name.clone(),
        origin: found.origin.clone(),
        sha256: found.sha256.clone(),
        from,
    }
}

/// The less trusted of two sources, for the launch they drive together.
fn least_trusted(a: Provenance, b: Provenance) -> Provenance {
    let rank = |p: Provenance| match p {
        Provenance::Builtin => 0,
        Provenance::User | Provenance::Operator => 1,
        Provenance::TrustedProject => 2,
        _ => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_sandbox::CompileCache;
    use drover_types::wit;

    fn sandbox() -> Sandbox {
        Sandbox::new(CompileCache::at(
            std::env::temp_dir().join("drover-lib-tests-cache"),
        ))
        .expect("sandbox")
    }

    /// A fresh project (so no trust record names it) with one profile of
    /// its own, driven by the built-in claude component.
    fn untrusted_project() -> (tempfile::TempDir, Profile) {
        let dir = tempfile::tempdir().expect("tempdir");
        let profiles = dir.path().join(".drover/profiles");
        std::fs::create_dir_all(&profiles).expect("mkdir");
        std::fs::write(
            profiles.join("mine.toml"),
            "name = \"mine\"\nbinary = \"mine-cli\"\ncomponent = \"claude\"\n[hooks]\ndialect = \"none\"\n",
        )
        .expect("profile");
        let profile = Catalog::load(dir.path())
            .get("mine")
            .expect("loads")
            .clone();
        (dir, profile)
    }

    #[test]
    fn an_untrusted_profile_does_not_launch_and_its_parsing_context_cannot_spawn() {
        if drover_trust::trust_all() {
            return; // DROVER_TRUST_ALL=1 trusts every project by design.
        }
        let (dir, profile) = untrusted_project();
        let refused = Prepared::launch_profile(dir.path(), profile.clone(), &sandbox())
            .err()
            .expect("refused");
        assert!(
            matches!(&refused, LaunchError::Untrusted(u) if u.file == ".drover/profiles/mine.toml"),
            "{refused}"
        );

        // Prepared for parsing, the context loads, but the spawn gate
        // refuses it: nothing untrusted reaches a process.
        let prepared = Prepared::assess(dir.path(), profile, &sandbox()).expect("assess");
        assert_eq!(prepared.from(), Provenance::UntrustedProject);
        let run = drover_run::RunDir::create(dir.path(), "r1").expect("run dir");
        let ctx = crate::Context::new(dir.path().to_path_buf(), run, prepared);
        let command = wit::Command {
            argv: vec!["mine-cli".to_string()],
            env: Vec::new(),
            stdin: None,
        };
        let refusal = crate::spawn::clear_command(&ctx, &command, Vec::new()).expect_err("refused");
        assert!(
            refusal.contains("will not start a process") && refusal.contains("untrusted"),
            "{refusal}"
        );
    }

    #[test]
    fn the_least_trusted_source_drives_the_launch() {
        use Provenance::*;
        assert_eq!(least_trusted(Builtin, TrustedProject), TrustedProject);
        assert_eq!(least_trusted(User, Builtin), User);
        assert_eq!(
            least_trusted(TrustedProject, UntrustedProject),
            UntrustedProject
        );
        assert_eq!(least_trusted(Builtin, Builtin), Builtin);
    }
}
