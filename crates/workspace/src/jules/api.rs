//! The resources of the Jules REST API (`v1alpha`) that drover reads and
//! writes, as its public reference documents them: sources, sessions and
//! their activities. Fields drover does not use are left out; unknown
//! fields and enum values are tolerated (the API is an alpha).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `Session.state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionState {
    StateUnspecified,
    Queued,
    Planning,
    AwaitingPlanApproval,
    AwaitingUserFeedback,
    InProgress,
    Paused,
    Failed,
    Completed,
    /// A state this drover does not know yet (the API is an alpha).
    #[serde(other)]
    Other,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::StateUnspecified => "STATE_UNSPECIFIED",
            SessionState::Queued => "QUEUED",
            SessionState::Planning => "PLANNING",
            SessionState::AwaitingPlanApproval => "AWAITING_PLAN_APPROVAL",
            SessionState::AwaitingUserFeedback => "AWAITING_USER_FEEDBACK",
            SessionState::InProgress => "IN_PROGRESS",
            SessionState::Paused => "PAUSED",
            SessionState::Failed => "FAILED",
            SessionState::Completed => "COMPLETED",
            SessionState::Other => "OTHER",
        }
    }
}

/// `sources/{source}`: a GitHub repository connected to Jules.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub name: String,
    #[serde(default)]
    pub github_repo: Option<GithubRepo>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GithubRepo {
    #[serde(default)]
    pub owner: String,
    #[serde(default)]
    pub repo: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcePage {
    #[serde(default)]
    pub sources: Vec<Source>,
    #[serde(default)]
    pub next_page_token: Option<String>,
}

/// What `POST /sessions` is given.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSession {
    pub prompt: String,
    pub title: String,
    pub source_context: SourceContext,
    pub require_plan_approval: bool,
    /// `AUTO_CREATE_PR` has Jules open a pull request when its change is
    /// ready; absent, the API's default is no automation (a patch only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation_mode: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceContext {
    pub source: String,
    pub github_repo_context: GithubRepoContext,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GithubRepoContext {
    pub starting_branch: String,
}

/// `sessions/{session}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub name: String,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default = "unspecified")]
    pub state: SessionState,
    /// The session in Jules's web app.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub outputs: Vec<SessionOutput>,
}

fn unspecified() -> SessionState {
    SessionState::StateUnspecified
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRequest>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequest {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityPage {
    #[serde(default)]
    pub activities: Vec<Activity>,
    #[serde(default)]
    pub next_page_token: Option<String>,
}

/// `sessions/{session}/activities/{activity}`: one step of a session. Which
/// kind it is is the one member of the API's union it carries; drover keeps
/// the raw object for the ones it does not read.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub originator: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub plan_generated: Option<PlanGenerated>,
    #[serde(default)]
    pub plan_approved: Option<Value>,
    #[serde(default)]
    pub progress_updated: Option<ProgressUpdated>,
    #[serde(default)]
    pub agent_messaged: Option<AgentMessaged>,
    #[serde(default)]
    pub user_messaged: Option<Value>,
    #[serde(default)]
    pub session_completed: Option<Value>,
    #[serde(default)]
    pub session_failed: Option<SessionFailed>,
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
}

impl Activity {
    /// The member of the union it carries, as the API names it.
    pub fn kind(&self) -> &'static str {
        if self.plan_generated.is_some() {
            "planGenerated"
        } else if self.plan_approved.is_some() {
            "planApproved"
        } else if self.progress_updated.is_some() {
            "progressUpdated"
        } else if self.agent_messaged.is_some() {
            "agentMessaged"
        } else if self.user_messaged.is_some() {
            "userMessaged"
        } else if self.session_completed.is_some() {
            "sessionCompleted"
        } else if self.session_failed.is_some() {
            "sessionFailed"
        } else {
            "other"
        }
    }

    /// Its identity within the session: the resource name, else the id.
    pub fn key(&self) -> &str {
        if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanGenerated {
    #[serde(default)]
    pub plan: Plan,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressUpdated {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessaged {
    #[serde(default)]
    pub agent_message: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFailed {
    #[serde(default)]
    pub reason: String,
}

/// An activity's artifact; drover reads the code change (a git patch).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    #[serde(default)]
    pub change_set: Option<ChangeSet>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSet {
    #[serde(default)]
    pub git_patch: Option<GitPatch>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GitPatch {
    #[serde(default)]
    pub unidiff_patch: String,
    #[serde(default)]
    pub base_commit_id: String,
    #[serde(default)]
    pub suggested_commit_message: String,
}

/// A session's resource name as drover accepts it back from the API or a
/// record: `sessions/<id>` with a plain id, so it can never reach another
/// path of the API.
pub fn session_name(name: &str) -> Option<String> {
    let id = name.strip_prefix("sessions/")?;
    plain(id).then(|| name.to_string())
}

/// Letters, digits, `-`, `_` and `.`, at most 200 bytes, not `.`/`..`.
pub fn plain(segment: &str) -> bool {
    !segment.is_empty()
        && segment.len() <= 200
        && segment != "."
        && segment != ".."
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_state_reads_as_other_not_an_error() {
        let s: Session =
            serde_json::from_str(r#"{"name":"sessions/1","state":"HIBERNATING"}"#).expect("parses");
        assert_eq!(s.state, SessionState::Other);
        let s: Session =
            serde_json::from_str(r#"{"name":"sessions/1","state":"AWAITING_PLAN_APPROVAL"}"#)
                .expect("parses");
        assert_eq!(s.state, SessionState::AwaitingPlanApproval);
    }

    #[test]
    fn only_a_plain_session_name_is_taken_back() {
        assert_eq!(
            session_name("sessions/123").as_deref(),
            Some("sessions/123")
        );
        assert_eq!(session_name("sessions/../sources"), None);
        assert_eq!(session_name("sessions/1?x=y"), None);
        assert_eq!(session_name("sources/github/a/b"), None);
    }

    #[test]
    fn an_activity_says_which_kind_it_is() {
        let a: Activity = serde_json::from_str(
            r#"{"name":"sessions/1/activities/2","planGenerated":{"plan":{"id":"p","steps":[{"title":"t"}]}}}"#,
        )
        .expect("parses");
        assert_eq!(a.kind(), "planGenerated");
        assert_eq!(a.plan_generated.map(|p| p.plan.steps.len()), Some(1));
    }
}
