//! drover's built-in opencode component. The adapter is the `drover-opencode`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_opencode::Opencode);
