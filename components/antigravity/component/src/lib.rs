//! drover's built-in antigravity component. The adapter is the `drover-antigravity`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_antigravity::Antigravity);
