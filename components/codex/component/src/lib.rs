//! drover's built-in codex component. The adapter is the `drover-codex`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_codex::Codex);
