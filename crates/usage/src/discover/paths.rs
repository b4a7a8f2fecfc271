//! PATH arguments: which CLI wrote each file, told by the globs of every
//! component (and `--cli` for the rest).

use std::path::{Path, PathBuf};

use super::{Context, Loaded, Pick, format_of, group_dir, locations, skipped};
use crate::glob::{self, Budget, Found, Scope};
use crate::report::FileNote;
use crate::stream::Format;
use crate::{UsageError, Warning};
use drover_gate::{Effect, Provenance, Sourced};
use drover_types::wit;

/// Every glob a component knows, with and without its environment.
struct Patterns {
    by_component: Vec<Vec<wit::TranscriptGlob>>,
}

impl Patterns {
    fn new(components: &[Loaded], context: &Context, warnings: &mut Vec<Warning>) -> Patterns {
        let by_component = components
            .iter()
            .map(|loaded| {
                let mut globs = locations(loaded, context, true, warnings);
                for g in locations(loaded, context, false, warnings) {
                    if !globs.iter().any(|h| h.pattern == g.pattern) {
                        globs.push(g);
                    }
                }
                globs
            })
            .collect();
        Patterns { by_component }
    }

    /// Components one of whose globs matches the path's trailing segments
    /// (`by_name`: only the file name against the glob's last segment).
    fn matching(&self, path: &Path, by_name: bool) -> Vec<(usize, &wit::TranscriptGlob)> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut out: Vec<(usize, &wit::TranscriptGlob)> = Vec::new();
        for (index, globs) in self.by_component.iter().enumerate() {
            let hit = globs.iter().find(|g| {
                if by_name {
                    glob::segments(&g.pattern)
                        .last()
                        .is_some_and(|last| glob::match_segment(last, &name))
                } else {
                    glob::suffix_matches(&g.pattern, path)
                }
            });
            if let Some(g) = hit {
                out.push((index, g));
            }
        }
        out
    }
}

enum Attribution {
    One(usize, String, Format),
    Ambiguous(Vec<usize>),
    Unknown,
}

fn attribute(
    components: &[Loaded],
    patterns: &Patterns,
    path: &Path,
    named: bool,
    explicit: bool,
) -> Attribution {
    let pick = |hits: Vec<(usize, &wit::TranscriptGlob)>| match hits.as_slice() {
        [] => None,
        [(index, g)] => Some(Attribution::One(*index, g.parser.clone(), format_of(g))),
        more => Some(Attribution::Ambiguous(
            more.iter().map(|(i, _)| *i).collect(),
        )),
    };
    if let Some(found) = pick(patterns.matching(path, false)) {
        return found;
    }
    if !named {
        return Attribution::Unknown;
    }
    if let Some(found) = pick(patterns.matching(path, true)) {
        return found;
    }
    match components {
        // A file named on the command line with one --cli: read it with
        // that profile's parser, whatever its name.
        [only] if explicit => Attribution::One(
            0,
            only.profile.usage_parser.clone(),
            if looks_like_sqlite(path) {
                Format::Sqlite
            } else {
                Format::Lines
            },
        ),
        _ => Attribution::Unknown,
    }
}

fn looks_like_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    // Not a plain open: a FIFO named here would block it.
    drover_gate::read::open_regular(path, drover_gate::read::TRANSCRIPT_MAX)
        .and_then(|(mut f, _)| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

pub(super) fn names(components: &[Loaded], indexes: &[usize]) -> String {
    indexes
        .iter()
        .filter_map(|&i| components.get(i))
        .map(|c| c.profile.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn explicit(
    components: &[Loaded],
    context: &Context,
    paths: &[PathBuf],
    named: bool,
    budget: &mut Budget,
    warnings: &mut Vec<Warning>,
    notes: &mut Vec<FileNote>,
) -> Result<Vec<Pick>, UsageError> {
    let patterns = Patterns::new(components, context, warnings);
    let mut picks = Vec::new();
    for arg in paths {
        let metadata = match std::fs::metadata(arg) {
            Ok(m) => m,
            Err(e) => {
                warnings.push(Warning::file(arg, format!("cannot read: {e}")));
                continue;
            }
        };
        if metadata.is_dir() {
            let mut warn =
                |path: &Path, message: String| warnings.push(Warning::file(path, message));
            // The operator named this directory: what is under it may be read.
            let files = glob::walk_dir(arg, Scope::Chosen(Provenance::Operator), budget, &mut warn);
            let (mut unknown, mut ambiguous) = (0usize, 0usize);
            for Found { path, file, .. } in files {
                match attribute(components, &patterns, &path, named, false) {
                    Attribution::One(component, parser, format) => picks.push(Pick {
                        component,
                        parser,
                        format,
                        group: group_dir(&path, arg),
                        path,
                        file,
                    }),
                    Attribution::Ambiguous(which) => {
                        ambiguous += 1;
                        notes.push(skipped(
                            &path,
                            None,
                            format!(
                                "looks like several CLIs' transcripts ({})",
                                names(components, &which)
                            ),
                        ));
                    }
                    Attribution::Unknown => {
                        unknown += 1;
                        notes.push(skipped(
                            &path,
                            None,
                            "looks like no selected CLI's transcript",
                        ));
                    }
                }
            }
            let mut skipped = Vec::new();
            if unknown > 0 {
                skipped.push(format!(
                    "{unknown} files look like no selected CLI's transcripts"
                ));
            }
            if ambiguous > 0 {
                skipped.push(format!(
                    "{ambiguous} files look like several CLIs' transcripts"
                ));
            }
            if !skipped.is_empty() {
                warnings.push(Warning::file(
                    arg,
                    format!(
                        "{}; they are not read (say which CLI with --cli)",
                        skipped.join(" and ")
                    ),
                ));
            }
            continue;
        }
        match attribute(components, &patterns, arg, named, true) {
            Attribution::One(component, parser, format) => picks.push(Pick {
                file: drover_gate::clear(
                    Effect::ReadForComponent,
                    "the file",
                    Sourced::new(
                        std::fs::canonicalize(arg).unwrap_or_else(|_| arg.clone()),
                        Provenance::Operator,
                    ),
                )?,
                component,
                parser,
                format,
                group: arg
                    .parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                path: arg.clone(),
            }),
            Attribution::Ambiguous(which) => {
                return Err(UsageError::Ambiguous {
                    path: arg.clone(),
                    clis: names(components, &which),
                });
            }
            Attribution::Unknown => {
                return Err(UsageError::Unrecognized { path: arg.clone() });
            }
        }
    }
    Ok(picks)
}
