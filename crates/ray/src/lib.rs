//! drover-ray: a Ray cluster as the ray workspace uses it, where seats'
//! turns run as Ray jobs.
//!
//! Each turn is one job submitted through Ray's Jobs REST API on the
//! dashboard address ([`jobs`]); its entrypoint is drover itself running
//! one headless turn on the node Ray picks (`drover ray-turn`, in the
//! command line crate), so the CLI's component, hooks, verdict and fault
//! classification happen exactly as they do locally. The node prints its journal and result in the job's
//! log (`drover_drive::ray::wire`); the local driver follows that log
//! ([`tail`]) and copies each journal line once into the run's
//! `events.jsonl` (`drover_drive::ray::driver`).
//! Where the cluster is, and what a turn asks of it: [`settings`].

pub mod jobs;
pub mod settings;
pub mod tail;

use std::path::Path;

use serde::Serialize;

pub use settings::{Overrides, Settings};

/// `text` as one single-quoted POSIX shell word, always quoted (a job's
/// entrypoint is a shell line run on the node).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Text from the cluster, safe to print: no ANSI sequences or other
/// control characters besides newlines and tabs.
pub fn clean(text: &str) -> String {
    strip_ansi_escapes::strip_str(text)
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// What `drover mux` and `doctor` show about the cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterReport {
    pub address: Option<String>,
    pub address_source: Option<String>,
    pub reachable: bool,
    pub ray_version: Option<String>,
    pub nodes: Vec<jobs::Node>,
    pub error: Option<String>,
    /// Settings set aside: an untrusted project's `[ray]` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// Asks the configured cluster for its version and nodes.
pub fn cluster(project: &Path) -> ClusterReport {
    match drover_trust::load_config(project) {
        Ok(config) => cluster_in(&config, project),
        Err(e) => ClusterReport::unresolved(e.to_string()),
    }
}

/// [`cluster`] from settings files the command already loaded. An
/// untrusted project's `[ray]` is set aside (and listed in `ignored`), so
/// its address is never asked.
pub fn cluster_in(config: &drover_config::Config, project: &Path) -> ClusterReport {
    let settings = match Settings::resolve_in(config, project, "", &Overrides::default()) {
        Ok(s) => s,
        Err(e) => return ClusterReport::unresolved(e.to_string()),
    };
    let mut report = ClusterReport {
        address: Some(settings.address.clone()),
        address_source: Some(settings.address_source.clone()),
        reachable: false,
        ray_version: None,
        nodes: Vec::new(),
        error: None,
        ignored: settings.ignored.clone(),
    };
    let client = match settings.jobs() {
        Ok(client) => client,
        Err(refused) => {
            report.error = Some(refused.to_string());
            return report;
        }
    };
    match client.version() {
        Ok(v) => {
            report.reachable = true;
            report.ray_version = Some(clean(&v.ray_version));
        }
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    }
    match client.nodes() {
        Ok(nodes) => report.nodes = nodes,
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}

impl ClusterReport {
    fn unresolved(error: String) -> ClusterReport {
        ClusterReport {
            address: None,
            address_source: None,
            reachable: false,
            ray_version: None,
            nodes: Vec::new(),
            error: Some(error),
            ignored: Vec::new(),
        }
    }

    /// The ray row of `drover mux` and `doctor`.
    pub fn row(&self) -> drover_workspace::RayRow {
        drover_workspace::RayRow {
            reachable: self.reachable,
            ray_version: self.ray_version.clone(),
            summary: self.summary(),
        }
    }

    /// The ray row's note in `drover mux`.
    pub fn summary(&self) -> String {
        match (&self.address, self.reachable) {
            (Some(address), true) => format!(
                "turns as Ray jobs on {address} ({} nodes alive)",
                self.nodes.iter().filter(|n| n.state == "ALIVE").count()
            ),
            (Some(address), false) => format!(
                "no Ray dashboard answers at {address} ({}): {}",
                self.address_source.as_deref().unwrap_or("default"),
                self.error.clone().unwrap_or_default()
            ),
            (None, _) => self.error.clone().unwrap_or_default(),
        }
    }

    /// One line per node: id, address, state, resources.
    pub fn node_lines(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| {
                let resources: Vec<String> = n
                    .resources_total
                    .iter()
                    .filter(|(k, _)| {
                        !k.starts_with("node:")
                            && k.as_str() != "memory"
                            && k.as_str() != "object_store_memory"
                    })
                    .map(|(k, v)| format!("{}={v}", clean(k)))
                    .collect();
                format!(
                    "{} {} {}{} {}",
                    clean(&drover_types::text::truncate_chars(&n.node_id, 12)),
                    clean(&n.node_ip),
                    clean(&n.state),
                    if n.is_head_node { " (head)" } else { "" },
                    resources.join(" ")
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entrypoint_paths_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/opt/it's here"), r"'/opt/it'\''s here'");
    }
}
