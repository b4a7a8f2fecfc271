//! drover's built-in claude component. The adapter is the `drover-claude`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_claude::Claude);
