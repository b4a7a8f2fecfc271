//! Where a CLI keeps its data, for `transcript-locations`.

use crate::{GlobBase, LocationContext};

/// The directory a CLI keeps its data in: the first of `vars` set to a
/// non-blank value, read the way a shell hands it over (`~` and `~/…` are
/// home-relative, `/…` absolute, anything else relative to the working
/// directory), else `default` under the home directory. The prefix is
/// empty or ends in `/`, ready for a glob to follow.
pub fn data_dir(context: &LocationContext, vars: &[&str], default: &str) -> (GlobBase, String) {
    let value = vars.iter().find_map(|name| {
        context
            .env
            .iter()
            .find(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
    });
    let Some(value) = value else {
        return (GlobBase::Home, default.to_string());
    };
    let dir = |path: &str| {
        let path = path.trim_end_matches('/');
        if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        }
    };
    if value == "~" {
        return (GlobBase::Home, String::new());
    }
    if let Some(rest) = value.strip_prefix("~/") {
        return (GlobBase::Home, dir(rest));
    }
    if value.starts_with('/') {
        return (
            GlobBase::Absolute,
            format!("/{}", dir(value.trim_start_matches('/'))),
        );
    }
    (GlobBase::Cwd, dir(value.trim_start_matches("./")))
}
