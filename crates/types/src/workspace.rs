//! Where a seat runs.

use serde::{Deserialize, Serialize};

/// A workspace backend, by the name users and records give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceKind {
    Headless,
    Tmux,
    Herdr,
    Acp,
    Ray,
    /// Google's Jules: turns run in Google's cloud, through its REST API.
    Jules,
}

impl WorkspaceKind {
    pub const ALL: &[WorkspaceKind] = &[
        WorkspaceKind::Headless,
        WorkspaceKind::Tmux,
        WorkspaceKind::Herdr,
        WorkspaceKind::Acp,
        WorkspaceKind::Ray,
        WorkspaceKind::Jules,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceKind::Headless => "headless",
            WorkspaceKind::Tmux => "tmux",
            WorkspaceKind::Herdr => "herdr",
            WorkspaceKind::Acp => "acp",
            WorkspaceKind::Ray => "ray",
            WorkspaceKind::Jules => "jules",
        }
    }

    pub fn parse(name: &str) -> Option<WorkspaceKind> {
        WorkspaceKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == name.trim())
    }

    /// Whether seats of this kind live in panes (and so have a pane
    /// session a human can attach to).
    pub fn has_panes(self) -> bool {
        matches!(self, WorkspaceKind::Tmux | WorkspaceKind::Herdr)
    }
}

impl std::fmt::Display for WorkspaceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_kind_is_refused_not_guessed() {
        assert_eq!(WorkspaceKind::parse(" tmux "), Some(WorkspaceKind::Tmux));
        assert_eq!(WorkspaceKind::parse("screen"), None);
        let refused: Result<WorkspaceKind, _> = serde_json_like("\"screen\"");
        assert!(refused.is_err());
    }

    fn serde_json_like(text: &str) -> Result<WorkspaceKind, serde::de::value::Error> {
        use serde::de::IntoDeserializer;
        let name = text.trim_matches('"').to_string();
        WorkspaceKind::deserialize(name.into_deserializer())
    }
}
