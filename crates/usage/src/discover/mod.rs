//! Which files to read, with which component and parser, grouped into
//! tallies.
//!
//! Without PATH arguments each selected profile's component says where its
//! CLI keeps transcripts (`transcript-locations`, given home, the project
//! as cwd, and only the environment variables it lists in `location-env`);
//! the engine expands the globs. PATH arguments are matched against the
//! same globs to tell which CLI wrote them; `--cli` settles the rest.
//!
//! Grouping: a CLI repeats rows across the files of one project (Claude's
//! resumed and branched sessions copy earlier requests into the new file),
//! and a parser only dedupes within one tally. So every file found under the
//! same first directory below a glob's literal root (Claude: one project
//! folder under `projects/`) is read by the same tally, in path order.

mod confine;
mod paths;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::glob::{self, Budget, Found, Scope};
use super::prefilter::Prefilter;
use super::report::FileNote;
use super::stream::{Format, Input, Job};
use super::{UsageError, Warning};
use drover_gate::Cleared;
use drover_profile::registry;
use drover_profile::{Catalog, Profile};
use drover_sandbox::{Adapter, Sandbox};
use drover_types::wit;

pub use confine::Area;
use paths::explicit;

/// A profile whose component is loaded.
pub struct Loaded {
    pub profile: Profile,
    pub adapter: Adapter,
    pub description: wit::Description,
}

impl Loaded {
    /// The lines parser `parser` reads; `None` for a parser neither the
    /// component describes nor the profile names. A parser the profile
    /// names (a `[usage]` table's) reads every line.
    fn needles(&self, parser: &str) -> Option<&[String]> {
        self.description
            .usage_parsers
            .iter()
            .find(|p| p.name == parser)
            .map(|p| p.needles.as_slice())
            .or_else(|| (parser == self.profile.usage_parser).then_some(&[][..]))
    }
}

/// Everything `drover usage` will read.
pub struct Plan {
    pub components: Vec<Loaded>,
    pub jobs: Vec<Job>,
    pub warnings: Vec<Warning>,
    /// Files looked at and not read, and why (filled in for
    /// `--explain-files`, and for repeats of one file always).
    pub skipped: Vec<FileNote>,
}

fn skipped(path: &Path, cli: Option<&str>, reason: impl Into<String>) -> FileNote {
    FileNote {
        path: path.display().to_string(),
        cli: cli.map(str::to_string),
        parser: None,
        status: "skipped",
        reason: reason.into(),
    }
}

/// One file, attributed.
struct Pick {
    component: usize,
    parser: String,
    format: Format,
    path: PathBuf,
    /// The file cleared to be read for the component.
    file: Cleared<PathBuf>,
    group: PathBuf,
}

/// `explain`: also list the files below each transcript root that no glob
/// takes (`--explain-files`), so a user can see nothing was missed.
pub fn plan(
    sandbox: &Sandbox,
    project: &Path,
    clis: &[String],
    paths: &[PathBuf],
    explain: bool,
) -> Result<Plan, UsageError> {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let catalog = Catalog::load(project);
    for error in catalog.errors() {
        warnings.push(Warning::general(format!("profile {error}")));
    }
    let mut selected: Vec<&Profile> = Vec::new();
    if clis.is_empty() {
        selected.extend(
            catalog
                .profiles()
                .iter()
                .filter(|p| p.usage_parser != "none"),
        );
    } else {
        for name in clis {
            let Some(profile) = catalog.find(name) else {
                return Err(UsageError::UnknownCli {
                    name: name.clone(),
                    available: catalog
                        .profiles()
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            if profile.usage_parser == "none" {
                warnings.push(Warning::general(format!(
                    "{}: its transcripts carry no token counts (usage_parser = \"none\")",
                    profile.name
                )));
                continue;
            }
            if !selected.iter().any(|p| p.name == profile.name) {
                selected.push(profile);
            }
        }
    }
    let mut components = Vec::new();
    for profile in selected {
        match load(sandbox, profile, project) {
            Ok(loaded) => components.push(loaded),
            Err(e) => warnings.push(Warning::general(format!("{}: {e}", profile.name))),
        }
    }
    let context = Context::new(project);
    if clis.is_empty() {
        components = one_per_transcript_set(components, &context);
    }
    let mut budget = Budget::new();
    let picks = if paths.is_empty() {
        discover(
            &components,
            &context,
            explain,
            &mut budget,
            &mut warnings,
            &mut notes,
        )
    } else {
        explicit(
            &components,
            &context,
            paths,
            !clis.is_empty(),
            &mut budget,
            &mut warnings,
            &mut notes,
        )?
    };
    if let Some(stopped) = budget.stopped {
        warnings.push(Warning::general(format!(
            "looking for transcripts {stopped}"
        )));
    }
    let jobs = group(&components, picks, &mut notes);
    Ok(Plan {
        components,
        jobs,
        warnings,
        skipped: notes,
    })
}

/// Profiles whose components read the same transcripts with the same parser
/// (the `scripted` stand-in drives the claude component) would count every
/// file twice or call it ambiguous: keep one of each set, the one named after
/// its component when there is one. What a profile reads is what its
/// component answers, so settings that do not move transcripts (an ACP
/// command, say) do not split a set.
fn one_per_transcript_set(components: Vec<Loaded>, context: &Context) -> Vec<Loaded> {
    type Reads = (String, String, Vec<(String, String, String, String)>);
    let reads = |loaded: &Loaded| -> Reads {
        let mut scratch = Vec::new();
        let mut globs: Vec<_> = [true, false]
            .into_iter()
            .flat_map(|with_env| locations(loaded, context, with_env, &mut scratch))
            .map(|g| (format!("{:?}", g.base), g.pattern, g.format, g.parser))
            .collect();
        globs.sort();
        (
            loaded.profile.component.to_string(),
            loaded.profile.usage_parser.clone(),
            globs,
        )
    };
    let named_after_component = |p: &Profile| p.component.to_string() == p.name;
    let mut kept: Vec<(Reads, Loaded)> = Vec::new();
    for loaded in components {
        let key = reads(&loaded);
        match kept.iter().position(|(k, _)| *k == key) {
            Some(at)
                if named_after_component(&loaded.profile)
                    && !named_after_component(&kept[at].1.profile) =>
            {
                kept[at] = (key, loaded);
            }
            Some(_) => {}
            None => kept.push((key, loaded)),
        }
    }
    kept.into_iter().map(|(_, loaded)| loaded).collect()
}

fn load(sandbox: &Sandbox, profile: &Profile, project: &Path) -> Result<Loaded, String> {
    let adapter = registry::bind_in(sandbox, profile, project).map_err(|e| format!("{e:#}"))?;
    let description = adapter.describe().map_err(|e| e.to_string())?;
    Ok(Loaded {
        profile: profile.clone(),
        adapter,
        description,
    })
}

/// What `location-context` is built from.
struct Context {
    home: Option<PathBuf>,
    cwd: PathBuf,
}

impl Context {
    fn new(project: &Path) -> Context {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(std::env::home_dir);
        let cwd = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        Context { home, cwd }
    }

    /// The context for one component: only the variables it asked for.
    /// `with_env = false` gives the conventions' defaults (for recognizing
    /// copied trees).
    fn for_component(&self, loaded: &Loaded, with_env: bool) -> wit::LocationContext {
        let env = if with_env {
            loaded
                .description
                .location_env
                .iter()
                .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
                .collect()
        } else {
            Vec::new()
        };
        wit::LocationContext {
            home: self
                .home
                .as_ref()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cwd: self.cwd.to_string_lossy().into_owned(),
            env,
        }
    }

    /// Where one component's patterns may lead.
    fn area(&self, loaded: &Loaded) -> Area {
        Area::new(
            self.home.as_deref(),
            &self.cwd,
            &self.for_component(loaded, true).env,
        )
    }
}

fn format_of(glob: &wit::TranscriptGlob) -> Format {
    if glob.format == "sqlite" {
        Format::Sqlite
    } else {
        Format::Lines
    }
}

fn locations(
    loaded: &Loaded,
    context: &Context,
    with_env: bool,
    warnings: &mut Vec<Warning>,
) -> Vec<wit::TranscriptGlob> {
    let wit_profile = loaded.profile.to_wit();
    match loaded
        .adapter
        .transcript_locations(&wit_profile, &context.for_component(loaded, with_env))
    {
        Ok(globs) => globs
            .into_iter()
            .filter(|g| g.parser != "none")
            .filter(|g| {
                if let Err(why) = glob::check(&g.pattern) {
                    if with_env {
                        warnings.push(Warning::general(format!("{}: {why}", loaded.profile.name)));
                    }
                    return false;
                }
                let known = loaded.needles(&g.parser).is_some();
                if !known && with_env {
                    warnings.push(Warning::general(format!(
                        "{}: the component names a parser it does not describe ('{}'); {} is not read",
                        loaded.profile.name, g.parser, g.pattern
                    )));
                }
                known
            })
            .collect(),
        Err(e) => {
            if with_env {
                warnings.push(Warning::general(format!("{}: {e}", loaded.profile.name)));
            }
            Vec::new()
        }
    }
}

fn discover(
    components: &[Loaded],
    context: &Context,
    explain: bool,
    budget: &mut Budget,
    warnings: &mut Vec<Warning>,
    notes: &mut Vec<FileNote>,
) -> Vec<Pick> {
    let mut picks = Vec::new();
    for (index, loaded) in components.iter().enumerate() {
        let first = picks.len();
        let area = context.area(loaded);
        let mut walked: Vec<(PathBuf, drover_gate::read::Roots)> = Vec::new();
        for glob in locations(loaded, context, true, warnings) {
            let (base, roots) = match area.roots_of(&glob) {
                Ok(found) => found,
                Err(why) => {
                    warnings.push(Warning::general(format!("{}: {why}", loaded.profile.name)));
                    continue;
                }
            };
            let mut warn =
                |path: &Path, message: String| warnings.push(Warning::file(path, message));
            let found = glob::expand(
                &base,
                &glob.pattern,
                Scope::Confined(&roots),
                budget,
                &mut warn,
            );
            for Found { path, root, file } in found {
                picks.push(Pick {
                    component: index,
                    parser: glob.parser.clone(),
                    format: format_of(&glob),
                    group: group_dir(&path, &root),
                    path,
                    file,
                });
            }
            let root = glob::literal_root(&base, &glob.pattern);
            if root.is_dir() && !walked.iter().any(|(r, _)| *r == root) {
                walked.push((root, roots));
            }
        }
        if explain {
            let taken: HashSet<&Path> = picks[first..].iter().map(|p| p.path.as_path()).collect();
            let mut ignore = |_: &Path, _: String| {};
            for (root, roots) in &walked {
                let all = glob::walk_dir(root, Scope::Confined(roots), budget, &mut ignore);
                for Found { path, .. } in all {
                    if !taken.contains(path.as_path()) {
                        notes.push(skipped(
                            &path,
                            Some(&loaded.profile.name),
                            "matches none of its transcript patterns",
                        ));
                    }
                }
            }
        }
    }
    picks
}

/// The tally group of a file found under `root`: the first directory below
/// the root that holds it, or the root itself for files directly in it.
fn group_dir(path: &Path, root: &Path) -> PathBuf {
    match path.strip_prefix(root) {
        Ok(rest) => {
            let mut parts = rest.components();
            match (parts.next(), parts.next()) {
                (Some(first), Some(_)) => root.join(first),
                _ => root.to_path_buf(),
            }
        }
        Err(_) => path
            .parent()
            .map_or_else(|| root.to_path_buf(), Path::to_path_buf),
    }
}

/// Dedupes files (the same file reached twice, e.g. through a symlinked
/// config dir) and groups them into jobs.
fn group(components: &[Loaded], picks: Vec<Pick>, notes: &mut Vec<FileNote>) -> Vec<Job> {
    let mut seen: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut groups: BTreeMap<(usize, String, PathBuf), Vec<Input>> = BTreeMap::new();
    for pick in picks {
        let canonical = pick.file.get().clone();
        if let Some(first) = seen.get(&canonical) {
            notes.push(skipped(
                &pick.path,
                Some(&components[pick.component].profile.name),
                format!("the same file as {}, read once", first.display()),
            ));
            continue;
        }
        seen.insert(canonical, pick.path.clone());
        let bytes = std::fs::metadata(&pick.path).map_or(0, |m| m.len());
        groups
            .entry((pick.component, pick.parser, pick.group))
            .or_default()
            .push(Input {
                path: pick.path,
                file: pick.file,
                format: pick.format,
                bytes,
            });
    }
    let mut filters: HashMap<(usize, String), Arc<Prefilter>> = HashMap::new();
    groups
        .into_iter()
        .map(|((component, parser, _), mut inputs)| {
            inputs.sort_by(|a, b| a.path.cmp(&b.path));
            let loaded = &components[component];
            let prefilter = filters
                .entry((component, parser.clone()))
                .or_insert_with(|| Arc::new(Prefilter::new(loaded.needles(&parser).unwrap_or(&[]))))
                .clone();
            Job {
                cli: loaded.profile.name.clone(),
                component,
                parser,
                prefilter,
                inputs,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_the_first_directory_below_the_root() {
        let root = Path::new("/h/.claude/projects");
        assert_eq!(
            group_dir(Path::new("/h/.claude/projects/-w-a/s1.jsonl"), root),
            PathBuf::from("/h/.claude/projects/-w-a")
        );
        assert_eq!(
            group_dir(
                Path::new("/h/.claude/projects/-w-a/s1/subagents/x.jsonl"),
                root
            ),
            PathBuf::from("/h/.claude/projects/-w-a")
        );
        assert_eq!(
            group_dir(Path::new("/h/.claude/projects/top.jsonl"), root),
            root.to_path_buf()
        );
    }
}
