//! drover's built-in qwen component. The adapter is the `drover-qwen`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_qwen::Qwen);
